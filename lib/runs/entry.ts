import type { Observation } from './observe.js';
import { durationMs } from '../base/time.js';

/** The public shape of a run in `status` output (documented field by field in docs/contract.md). */
export function viewOf(o: Observation): Record<string, unknown> {
  const r = o.record;
  return {
    name: r.name,
    status: o.status,
    outcome: o.status === 'done' ? r.outcome : null,
    statusReason: o.statusReason,
    cli: r.cli,
    model: r.model,
    variant: r.variant,
    agent: r.agent,
    sessionId: r.sessionId,
    cwd: r.cwd,
    pid: o.supervisor?.pid ?? null,
    agentPid: r.agentProcess?.pid ?? o.foundAgentPid ?? null,
    agentAlive: o.agentAlive,
    exitCode: r.exitCode,
    signal: r.signal,
    error: r.error,
    endReason: r.endReason,
    startedAt: r.startedAt,
    updatedAt: r.updatedAt,
    finishedAt: r.finishedAt,
    durationMs: durationMs(r.startedAt, r.finishedAt),
    lastActivityAt: r.lastActivityAt,
    run: r.run,
    resumeCount: r.run - 1,
    parent: r.parent,
    depth: r.depth ?? 1,
    worktree: r.worktree ?? null,
    cancelRequested: r.cancel !== null,
    toolUses: r.toolUses,
    skippedLines: r.skippedLines ?? 0,
    usage: r.usage,
    children: r.children,
    extraArgs: r.extraArgs,
    files: r.files,
  };
}
