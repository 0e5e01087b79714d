import type { Observation } from './observe.js';
import {
  resetsAtOf,
  type Caps,
  type ChildAgent,
  type LimitWarning,
  type MemoryUse,
  type Outcome,
  type Reason,
  type RunRecord,
  type Status,
  type Usage,
} from '../registry/record.js';
import { durationMs } from '../base/time.js';
import type { FollowUp } from '../registry/follow-ups.js';
import { stallOf } from './stall.js';

/**
 * A run as `status` lists it in `agents` (documented field by field in docs/contract.md): the latest
 * run of a name, its record as observed. `usageTotal`, `queued` and `queuePosition` are the listing's.
 */
export interface AgentEntry {
  name: string;
  status: Status;
  /** Only for a done run. */
  outcome: Outcome | null;
  /** Why a done run did not succeed (docs/contract.md, "Reasons"); null otherwise. */
  reason: Reason | null;
  /** With reason `rate-limit`: when the limit resets (ISO-8601), as the CLI said; null otherwise and when it did not say. */
  resetsAt: string | null;
  /** The CLI's last warning of a limit near but not reached (shown, never a failure), or null. */
  limitWarning: LimitWarning | null;
  /** A parked run (--on-limit wait): `running`, its agent not started before this time (ISO-8601); else null. */
  parkedUntil: string | null;
  /** A run that follows others (--after), `scheduled`: the names whose latest runs it still waits for; else empty. */
  waitingFor: string[];
  /** Why the status is not what the record alone says (e.g. `unknown`: the supervisor died). */
  statusReason: string | null;
  cli: string;
  model: string | null;
  variant: string | null;
  agent: string | null;
  sessionId: string | null;
  cwd: string;
  /** The supervisor's pid (for a job-placed run: on its node, once it recorded the run). */
  pid: number | null;
  /** Where the supervisor was placed: local or slurm. */
  executor: string;
  /** The engine's job id (slurm), else null. */
  jobId: string | null;
  agentPid: number | null;
  agentAlive: boolean;
  exitCode: number | null;
  signal: string | null;
  error: string | null;
  endReason: string | null;
  startedAt: string;
  updatedAt: string;
  finishedAt: string | null;
  durationMs: number | null;
  lastActivityAt: string | null;
  run: number;
  resumeCount: number;
  parent: string | null;
  depth: number;
  worktree: RunRecord['worktree'];
  /** The run is a person's turn in the CLI's own session (subagent-attach): while it runs, a person is in it. */
  attached: boolean;
  cancelRequested: boolean;
  toolUses: number;
  skippedLines: number;
  /** This run's usage. */
  usage: Usage | null;
  /** This run's spend caps. */
  caps: Caps;
  /** The resident memory of the run's processes as its supervisor last sampled it (docs/memory.md); null before the first sample. */
  memory: MemoryUse | null;
  children: ChildAgent[];
  extraArgs: string[];
  files: string[];
  /** A running run that has shown no sign of work for `stallAfterSec` (docs/stalls.md); false otherwise. */
  stalled: boolean;
  /** While stalled: when the last sign of work was seen; else null. */
  stalledSince: string | null;
  /** The last sign of work the supervisor saw (output, or CPU time of the agent's processes); null when stalls are not watched. */
  lastWorkAt: string | null;
  /** Seconds without a sign of work after which the run counts as stalled; null: not watched. */
  stallAfterSec: number | null;
  /** What a stall does: `none` (only the flag) or `cancel`. */
  stallAction: 'none' | 'cancel';
  /** The run's own end hook (--on-end), or null. */
  onEnd: string | null;
  /** Usage summed over every run of the name. */
  usageTotal: Usage | null;
  /** Scheduled and waiting for a slot of the registry's concurrency limit. */
  queued: boolean;
  /** Its place in that queue (1: next), else null. */
  queuePosition: number | null;
  /** The name's queued follow-ups (resume-subagent --queue), next first; empty when none. */
  queuedPrompts: FollowUp[];
}

/** Every field of an entry, in the order `status` prints them: what `--fields` may name. */
export const ENTRY_FIELDS = [
  'name',
  'status',
  'outcome',
  'reason',
  'resetsAt',
  'limitWarning',
  'parkedUntil',
  'waitingFor',
  'statusReason',
  'cli',
  'model',
  'variant',
  'agent',
  'sessionId',
  'cwd',
  'pid',
  'executor',
  'jobId',
  'agentPid',
  'agentAlive',
  'exitCode',
  'signal',
  'error',
  'endReason',
  'startedAt',
  'updatedAt',
  'finishedAt',
  'durationMs',
  'lastActivityAt',
  'run',
  'resumeCount',
  'parent',
  'depth',
  'worktree',
  'attached',
  'cancelRequested',
  'toolUses',
  'skippedLines',
  'usage',
  'caps',
  'memory',
  'children',
  'extraArgs',
  'files',
  'stalled',
  'stalledSince',
  'lastWorkAt',
  'stallAfterSec',
  'stallAction',
  'onEnd',
  'usageTotal',
  'queued',
  'queuePosition',
  'queuedPrompts',
] as const satisfies ReadonlyArray<keyof AgentEntry>;
// The list names every field: a field added to AgentEntry and not here fails to compile.
const _everyField: Record<keyof AgentEntry, true> = Object.fromEntries(ENTRY_FIELDS.map((f) => [f, true])) as Record<(typeof ENTRY_FIELDS)[number], true>;
void _everyField;

/**
 * What `--brief` prints of an entry: what an orchestrator acts on. `resetsAt` (when a rate limit lifts)
 * and `parkedUntil` (when a parked run goes on) are printed where an entry has them.
 */
export const BRIEF_FIELDS: readonly string[] = ['name', 'status', 'outcome', 'reason', 'run', 'exitCode', 'finishedAt', 'stalled', 'resetsAt', 'parkedUntil'];

/** Of BRIEF_FIELDS, those printed only where the run has one (not null). */
const BRIEF_WHERE_SET = new Set(['resetsAt', 'parkedUntil']);

/**
 * The entry with only these fields, in this order (a field the entry does not have is left out; in the
 * brief form, so is a `resetsAt` of null).
 */
export function projectEntry(entry: AgentEntry, fields: readonly string[]): Record<string, unknown> {
  const all = entry as unknown as Record<string, unknown>;
  const brief = fields === BRIEF_FIELDS;
  const out: Record<string, unknown> = {};
  for (const f of fields) if (Object.hasOwn(all, f) && !(brief && BRIEF_WHERE_SET.has(f) && all[f] === null)) out[f] = all[f];
  return out;
}

/** What the listing adds to a run's own fields. */
export type ListingFields = Pick<AgentEntry, 'usageTotal' | 'queued' | 'queuePosition' | 'queuedPrompts'>;

/** The public shape of a run in `status` output. */
export function entryOf(o: Observation, listing: ListingFields): AgentEntry {
  const r = o.record;
  return {
    name: r.name,
    status: o.status,
    outcome: o.status === 'done' ? r.outcome : null,
    reason: o.status === 'done' ? r.reason : null,
    resetsAt: resetsAtOf(r),
    limitWarning: r.limitWarning,
    parkedUntil: o.status === 'running' || o.status === 'scheduled' ? r.parkedUntil : null,
    waitingFor: o.status === 'scheduled' ? r.waitingFor : [],
    statusReason: o.statusReason,
    cli: r.cli,
    model: r.model,
    variant: r.variant,
    agent: r.agent,
    sessionId: r.sessionId,
    cwd: r.cwd,
    pid: o.supervisor?.pid ?? null,
    executor: r.executor.name,
    jobId: r.executor.jobId,
    agentPid: r.agentProcess?.pid ?? o.foundAgentPid ?? null,
    agentAlive: o.agentAlive,
    exitCode: r.exitCode,
    signal: r.signal,
    error: r.error,
    endReason: r.endReason,
    startedAt: r.startedAt,
    updatedAt: r.updatedAt,
    finishedAt: r.finishedAt,
    durationMs: runDurationMs(r),
    lastActivityAt: r.lastActivityAt,
    run: r.run,
    resumeCount: r.run - 1,
    parent: r.parent,
    depth: r.depth,
    worktree: r.worktree,
    attached: r.attached,
    cancelRequested: r.cancel !== null,
    toolUses: r.toolUses,
    skippedLines: r.skippedLines,
    usage: r.usage,
    caps: r.caps,
    memory: r.memory,
    children: r.children,
    extraArgs: r.extraArgs,
    files: r.files,
    ...stallOf(o),
    lastWorkAt: r.lastWorkAt,
    stallAfterSec: r.stallAfterSec,
    stallAction: r.stallAction,
    onEnd: r.onEnd,
    ...listing,
  };
}

/** A run's duration: the supervisor's monotonic measure when it recorded one, else finishedAt − startedAt (never negative). */
export function runDurationMs(r: RunRecord): number | null {
  if (r.status !== 'done') return null;
  return r.elapsedMs ?? durationMs(r.startedAt, r.finishedAt);
}
