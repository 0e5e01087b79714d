import { SubagentError } from '../base/errors.js';
import { isIdentity, type ProcessIdentity } from '../proc/identity.js';
import { isExecutorName, type ExecutorName } from '../proc/engines.js';

/** The on-disk run record (`<registry>/agents/<name>/<run>/record.json`). Owned by lib/registry only. */
export const RECORD_FORMAT = 1;

export type StoredStatus = 'scheduled' | 'running' | 'done';
export type Status = StoredStatus | 'unknown';
export type Outcome = 'succeeded' | 'failed' | 'cancelled';

/**
 * Why a finished run did not succeed, for a program to branch on (docs/contract.md, "Reasons"): the
 * record's `reason`, null when it succeeded. A value never changes meaning; new ones may be added.
 */
export const REASONS = [
  'auth',
  'rate-limit',
  'api-error',
  'max-turns',
  'max-cost',
  'max-tokens',
  'max-time',
  'permission-denied',
  'crashed',
  'exit-code',
  'cancelled',
  'stalled',
  'spawn-failed',
  'unknown',
] as const;
export type Reason = (typeof REASONS)[number];

/** The caps of a run (--max-cost, --max-tokens, --max-turns, --max-time); null: no cap. */
export interface Caps {
  maxCostUsd: number | null;
  maxTokens: number | null;
  maxTurns: number | null;
  /** Seconds of the agent's running (wall clock); absent in records written before it existed. */
  maxTimeSec?: number | null;
}

export const NO_CAPS: Caps = { maxCostUsd: null, maxTokens: null, maxTurns: null, maxTimeSec: null };

export interface AgentProcess extends ProcessIdentity {
  pgid: number;
}

export interface Usage {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  reasoningTokens: number;
  totalTokens: number;
  costUsd: number | null;
}

export interface ChildAgent {
  id: string;
  cli: string;
  description: string | null;
  /** `cancelled`: stopped before it finished (its run was cancelled, or the agent stopped it). */
  status: 'running' | 'done' | 'failed' | 'cancelled' | 'unknown';
  statusSource: 'stream' | 'transcript' | 'inferred';
  startedAt: string | null;
  finishedAt: string | null;
  /** Why a `failed` child failed, in words, when the CLI says (absent otherwise). */
  error?: string;
}

/**
 * A cancelled run's children after its end: those still `running` (or, given `open`, those whose ids it
 * holds: the ones the stream left running) are `cancelled`, `statusSource:"inferred"`. The cancel stopped
 * them, and a CLI may report nothing for a child it killed (Claude 2.1.331 even ends with result/success).
 */
export function cancelledChildren(children: ChildAgent[], at: string, open?: ReadonlySet<string>): ChildAgent[] {
  return children.map((c) =>
    (open ? open.has(c.id) : c.status === 'running') ? { ...c, status: 'cancelled', statusSource: 'inferred', finishedAt: c.finishedAt ?? at } : c,
  );
}

export interface CancelRequest {
  requestedAt: string;
  signal: string;
  by: number;
  /**
   * Set when the supervisor stopped the run itself: `stalled` (--stall-action cancel; the run ends
   * cancelled), or the spend cap it crossed (`max-cost`, `max-tokens`, `max-turns`; the run ends failed).
   */
  reason?: Reason;
  /** With a cap's `reason`: the run's error, in words. */
  message?: string;
}

/** A process of a run still alive when the run was recorded done: its identity, group, and command name. */
export interface LeftoverProcess extends ProcessIdentity {
  ppid: number;
  pgid: number;
  comm: string;
}

/** Where a run's supervisor was placed (docs/scaling.md). */
export interface Placement {
  name: ExecutorName;
  /** The caller's options for the engine (--slurm-arg), kept for resumes. */
  args: string[];
  /** The engine's job id, once the submission returned; always null for `local`. */
  jobId: string | null;
}

export interface RunRecord {
  format: number;
  name: string;
  run: number;
  /** Unique per run; exported to the agent as SUBAGENT_RUN_ID, the marker cancel looks for. */
  runId: string;
  status: StoredStatus;
  outcome: Outcome | null;
  cli: string;
  model: string | null;
  variant: string | null;
  agent: string | null;
  files: string[];
  extraArgs: string[];
  cwd: string;
  sessionId: string | null;
  parent: string | null;
  promptBytes: number;
  startedAt: string;
  agentStartedAt: string | null;
  updatedAt: string;
  finishedAt: string | null;
  /**
   * The run's duration on the monotonic clock, written by its supervisor with the end (time.ts
   * elapsedSinceMs): `durationMs` prefers it to finishedAt − startedAt, which a wall-clock step distorts.
   * Absent in older records and in ends recorded by another process (a cancel of a dead supervisor's run).
   */
  elapsedMs?: number | null;
  exitCode: number | null;
  signal: string | null;
  error: string | null;
  /** Why an end looks the way it does when the plain facts cannot say (e.g. exit code not recorded). */
  endReason: string | null;
  /** Why a done run did not succeed (REASONS), null otherwise. Absent in records written before the field existed. */
  reason?: Reason | null;
  /** The run's spend caps. Absent in records written before the field existed (read as none). */
  caps?: Caps;
  starter: ProcessIdentity | null;
  supervisor: ProcessIdentity | null;
  agentProcess: AgentProcess | null;
  cancel: CancelRequest | null;
  toolUses: number;
  usage: Usage | null;
  children: ChildAgent[];
  lastActivityAt: string | null;
  /** The run's own git worktree (--worktree), kept across resumes. */
  worktree: { path: string; branch: string; base: string; repo: string } | null;
  /** Nesting depth: 1 for a run started from outside any run, its parent's depth + 1 otherwise. */
  depth: number;
  /** The run's place in the registry's queue when a concurrency limit was in force at its start. */
  queueTicket: string | null;
  /** The variables that locate the agent CLI's own transcript store (see AgentAdapter.storeEnvKeys). */
  storeEnv: Record<string, string>;
  /** Bytes of the event log already digested by the supervisor's progress reader. */
  eventBytes: number;
  /**
   * Lines of the event log that were skipped: not JSON, a torn last line, or longer than 16 MiB.
   * Absent in records written before the field existed (read as 0).
   */
  skippedLines?: number;
  // Stalls (docs/stalls.md) and the end hook (docs/hooks.md); absent in records written before they existed.
  /** Seconds without a sign of work after which the run counts as stalled; null: not watched. */
  stallAfterSec?: number | null;
  stallAction?: 'none' | 'cancel';
  /** While stalled (written by the supervisor): when the last sign of work was seen; else null. */
  stalledSince?: string | null;
  /** The last sign of work the supervisor saw (output, or CPU time of the agent's processes). */
  lastWorkAt?: string | null;
  /** The run's own end hook (--on-end), run by /bin/sh -c. */
  onEnd?: string | null;
  /** How long an end hook may run before it is killed. */
  hookTimeoutSec?: number;
  /** How long a cancel the supervisor makes itself (a stall's) waits after the first signal. */
  cancelGraceMs?: number;
  /**
   * --keep-children: the processes the agent leaves behind when it exits are kept, not stopped
   * (docs/contract.md, "A done run is final"). Absent: false.
   */
  keepChildren?: boolean;
  /**
   * Written once, with `done`: the size of the event log when the end was recorded. Readers of a done run
   * read its log up to here and no further, so its answer never changes. Absent in older records (read to the end).
   */
  eventBytesAtEnd?: number;
  /**
   * Written once, with `done`: the run's processes still alive when the end was recorded — kept
   * (--keep-children), or not stopped by KILL — each with its identity, for `cancel` to reach them.
   */
  leftovers?: LeftoverProcess[];
  /** Where the supervisor was placed. Absent in records written before executors existed: local. */
  executor?: Placement;
}

/** A run's placement; `local` for a record that predates the field. */
export function placementOf(r: RunRecord): Placement {
  return r.executor ?? { name: 'local', args: [], jobId: null };
}

function isPlacement(v: unknown): boolean {
  const p = v as Record<string, unknown>;
  return (
    typeof p === 'object' &&
    p !== null &&
    typeof p.name === 'string' &&
    isExecutorName(p.name) &&
    Array.isArray(p.args) &&
    p.args.every((a) => typeof a === 'string') &&
    (p.jobId === null || typeof p.jobId === 'string')
  );
}

const STRING_OR_NULL = [
  'model',
  'variant',
  'agent',
  'sessionId',
  'parent',
  'agentStartedAt',
  'finishedAt',
  'signal',
  'error',
  'endReason',
  'lastActivityAt',
] as const;

export function corrupt(path: string, why: string): SubagentError {
  return new SubagentError('E_REGISTRY_CORRUPT', `the record ${path} is unreadable: ${why}`, {
    path,
    hint: 'the file was kept as it is; inspect or move it away by hand (other runs are unaffected)',
  });
}

/** Parses and checks a record; anything that is not a record of a format we know is E_REGISTRY_CORRUPT. */
export function parseRecord(text: string, path: string): RunRecord {
  if (text.length === 0) throw corrupt(path, 'the file is empty');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw corrupt(path, `it is not valid JSON (${(err as Error).message})`);
  }
  const r = value as Record<string, unknown>;
  if (typeof r !== 'object' || r === null || Array.isArray(r)) throw corrupt(path, 'it is not a JSON object');
  if (typeof r.format !== 'number') throw corrupt(path, 'it has no "format" field');
  if (r.format > RECORD_FORMAT) {
    throw new SubagentError('E_REGISTRY_CORRUPT', `the record ${path} has format ${r.format}, newer than this subagents understands (${RECORD_FORMAT})`, {
      path,
      format: r.format,
      hint: 'upgrade subagents to read this registry; the file was left as it is',
    });
  }
  const problems: string[] = [];
  if (typeof r.name !== 'string') problems.push('name');
  if (!Number.isInteger(r.run) || (r.run as number) < 1) problems.push('run');
  if (typeof r.runId !== 'string') problems.push('runId');
  if (!['scheduled', 'running', 'done'].includes(r.status as string)) problems.push('status');
  if (r.outcome !== null && !['succeeded', 'failed', 'cancelled'].includes(r.outcome as string)) problems.push('outcome');
  if (typeof r.cli !== 'string') problems.push('cli');
  if (typeof r.cwd !== 'string') problems.push('cwd');
  if (typeof r.startedAt !== 'string' || typeof r.updatedAt !== 'string') problems.push('startedAt/updatedAt');
  if (r.exitCode !== null && !Number.isInteger(r.exitCode)) problems.push('exitCode');
  for (const key of STRING_OR_NULL) if (r[key] !== null && typeof r[key] !== 'string') problems.push(key);
  for (const key of ['starter', 'supervisor', 'agentProcess'] as const) if (r[key] !== null && !isIdentity(r[key])) problems.push(key);
  if (r.reason !== undefined && r.reason !== null && typeof r.reason !== 'string') problems.push('reason');
  if (r.caps !== undefined && !isCaps(r.caps)) problems.push('caps');
  if (r.elapsedMs !== undefined && r.elapsedMs !== null && !(typeof r.elapsedMs === 'number' && r.elapsedMs >= 0)) problems.push('elapsedMs');
  if (r.executor !== undefined && !isPlacement(r.executor)) problems.push('executor');
  if (r.eventBytesAtEnd !== undefined && !(Number.isInteger(r.eventBytesAtEnd) && (r.eventBytesAtEnd as number) >= 0)) problems.push('eventBytesAtEnd');
  if (r.leftovers !== undefined && !(Array.isArray(r.leftovers) && r.leftovers.every(isLeftover))) problems.push('leftovers');
  if (!Array.isArray(r.files) || !Array.isArray(r.extraArgs) || !Array.isArray(r.children)) problems.push('files/extraArgs/children');
  if (problems.length) throw corrupt(path, `wrong shape (bad field${problems.length > 1 ? 's' : ''}: ${problems.join(', ')})`);
  return r as unknown as RunRecord;
}

function isLeftover(v: unknown): v is LeftoverProcess {
  const p = v as Record<string, unknown>;
  return isIdentity(v) && Number.isInteger(p.ppid) && Number.isInteger(p.pgid) && typeof p.comm === 'string';
}

function isCaps(v: unknown): v is Caps {
  const c = v as Record<string, unknown>;
  return (
    typeof c === 'object' &&
    c !== null &&
    (['maxCostUsd', 'maxTokens', 'maxTurns'] as const).every((k) => c[k] === null || typeof c[k] === 'number') &&
    (c.maxTimeSec === undefined || c.maxTimeSec === null || typeof c.maxTimeSec === 'number')
  );
}

export function serialiseRecord(record: RunRecord): string {
  return JSON.stringify(record, null, 1) + '\n';
}
