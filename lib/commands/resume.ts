import { realpathSync, statSync } from 'node:fs';
import { loadAdapter } from '../agents/index.js';
import { SubagentError } from '../base/errors.js';
import { validateName } from '../registry/names.js';
import { createRun, latestRun } from '../registry/store.js';
import { observeLatest } from '../runs/observe.js';
import { resolveCwd, resolveRegistry, type Context } from './common.js';
import { checkAdapterCan, launchOutput, launchSupervisor, newRecord, queueTicketFor, requestedLimit, storeEnvOf } from './launch.js';
import { promptRequired } from './start.js';
import { restoreWorktreeCommand } from '../runs/worktree.js';
import type { RunRecord } from '../registry/record.js';

export interface ResumeOptions extends Context {
  name: string | undefined;
  /** Bytes are kept exactly; a string is taken as UTF-8. */
  prompt: Buffer | string;
  cwdDir?: string | undefined;
  model?: string | undefined;
  variant?: string | undefined;
  /** null: repeat the arguments stored with the run. */
  extraArgs?: string[] | null;
  maxConcurrent?: string | undefined;
}

/** resume-subagent: a new run of a finished name, in the same session and cwd. */
export async function resume(o: ResumeOptions): Promise<Record<string, unknown>> {
  const env = o.env ?? process.env;
  const callerCwd = o.cwd ?? process.cwd();
  const limit = requestedLimit(o.maxConcurrent, env);
  const name = validateName(o.name);
  const prompt = typeof o.prompt === 'string' ? Buffer.from(o.prompt, 'utf8') : o.prompt;
  if (prompt.length === 0) throw promptRequired();
  const registry = resolveRegistry(o);
  const previous = observeLatest(registry, name);
  if (!previous) {
    throw new SubagentError('E_SESSION_NOT_FOUND', `no run named "${name}" was ever started in ${registry}`, {
      name,
      registry,
      hint: 'start it first with start-subagent --name ' + name,
    });
  }
  const last = previous.record;
  if (previous.status === 'scheduled' || previous.status === 'running' || previous.agentAlive) {
    throw busy(name, last.run, previous.agentAlive && previous.status === 'unknown');
  }
  if (o.cwdDir !== undefined) {
    const asked = resolveCwd(o.cwdDir, callerCwd);
    if (asked !== safeRealpath(last.cwd)) {
      throw new SubagentError('E_CWD_MISMATCH', `"${name}" runs in ${last.cwd}, not in ${asked}`, {
        name,
        cwd: last.cwd,
        asked,
        hint: 'a session belongs to its directory: omit --cwd, or start a new name for the other directory',
      });
    }
  }
  checkRunDirectory(name, last);
  const adapter = await loadAdapter(last.cli);
  if (adapter.cli !== 'shell' && !last.sessionId) {
    throw new SubagentError('E_SESSION_NOT_FOUND', `"${name}" has no session id to resume (run ${last.run} never reported one)`, {
      name,
      run: last.run,
      hint: 'the earlier run probably failed before the agent opened a session; start a new name instead',
    });
  }
  checkAdapterCan(adapter, { model: o.model !== undefined, variant: o.variant !== undefined }, env);
  // Building the launch is pure: do it once here, so a session id the CLI cannot resume is refused
  // before a run is published, not discovered by the supervisor afterwards.
  adapter.launch({ mode: 'resume', cwd: last.cwd, model: o.model ?? last.model, variant: o.variant ?? last.variant, agent: last.agent, files: [], extraArgs: o.extraArgs ?? last.extraArgs, sessionId: last.sessionId });
  const queueTicket = queueTicketFor(registry, limit);
  const record = newRecord({
    name,
    run: last.run + 1,
    cli: last.cli,
    cwd: last.cwd,
    model: o.model ?? last.model,
    variant: o.variant ?? last.variant,
    agent: last.agent,
    files: [],
    extraArgs: o.extraArgs ?? last.extraArgs,
    sessionId: last.sessionId,
    parent: last.parent,
    depth: last.depth ?? 1,
    worktree: last.worktree ?? null,
    promptBytes: prompt.length,
    // The session lives in the store the earlier runs used: keep it.
    storeEnv: { ...storeEnvOf(adapter, env), ...(last.storeEnv ?? {}) },
    queueTicket,
  });
  const run = createRun(registry, name, record, prompt);
  if (run === null) throw busy(name, latestRun(registry, name) ?? last.run + 1, false, true);
  const pid = await launchSupervisor(registry, run, env, queueTicket);
  return launchOutput(registry, record, pid, 'resume');
}

/**
 * A session belongs to its directory: when that is gone (a worktree removed after review, say), the
 * resume is refused before a run is published, with the way to bring the directory back.
 */
function checkRunDirectory(name: string, last: RunRecord): void {
  if (isDirectory(last.cwd)) return;
  const w = last.worktree;
  throw new SubagentError('E_CWD_INVALID', `"${name}" runs in ${last.cwd}, which no longer exists`, {
    name,
    cwd: last.cwd,
    ...(w ? { worktree: w.path, branch: w.branch, restore: restoreWorktreeCommand(w) } : {}),
    hint: w
      ? `its worktree was removed; bring it back on its branch with: ${restoreWorktreeCommand(w)} (if the branch is gone too, start a new name)`
      : 'the session belongs to that directory: recreate it, or start a new name elsewhere',
  });
}

function isDirectory(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}

function busy(name: string, run: number, orphanAgent: boolean, lostRace = false): SubagentError {
  const why = lostRace
    ? `another resume of "${name}" started run ${run} first`
    : orphanAgent
      ? `run ${run} of "${name}" lost its supervisor but its agent is still alive`
      : `run ${run} of "${name}" is still running`;
  return new SubagentError('E_AGENT_BUSY', why, {
    name,
    run,
    hint: orphanAgent ? `cancel it first: subagent-cancel --name ${name}` : `wait for it: subagent-status --wait-terminal --name ${name}`,
  });
}

function safeRealpath(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return p;
  }
}
