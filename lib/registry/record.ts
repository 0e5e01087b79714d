import { SubagentError } from '../base/errors.js';
import { randomUUID } from '../base/uuid.js';
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
  'max-memory',
  'permission-denied',
  'crashed',
  'exit-code',
  'cancelled',
  'stalled',
  'spawn-failed',
  'dependency-failed',
  'unknown',
] as const;
export type Reason = (typeof REASONS)[number];

/**
 * A provider's usage, rate or spend limit that is near but not reached, as the CLI warned of it (Claude
 * Code's `rate_limit_event` with status `allowed_warning`): shown, never a failure (docs/contract.md).
 */
export interface LimitWarning {
  /** The limit's window as the CLI names it (`five_hour`, `seven_day`…), null when it does not say. */
  window: string | null;
  /** How much of it is used, 0 to 1, null when the CLI does not say. */
  utilization: number | null;
  /** When the window resets (ISO-8601), null when the CLI does not say. */
  resetsAt: string | null;
}

/** The caps of a run (--max-cost, --max-tokens, --max-turns, --max-time, --max-memory); null: no cap. */
export interface Caps {
  maxCostUsd: number | null;
  maxTokens: number | null;
  maxTurns: number | null;
  /** Seconds of the agent's running (wall clock); a caller may leave it out (none). A record's caps always have it. */
  maxTimeSec?: number | null;
  /** Bytes of resident memory of the agent's process tree; a caller may leave it out (none). A record's caps always have it. */
  maxMemoryBytes?: number | null;
}

export const NO_CAPS: Required<Caps> = { maxCostUsd: null, maxTokens: null, maxTurns: null, maxTimeSec: null, maxMemoryBytes: null };

/** The resident memory of a run's process tree, as its supervisor last measured it (docs/memory.md). */
export interface MemoryUse {
  /** At the last sample (for a done run: the last before its agent exited). */
  rssBytes: number;
  /** The most seen at any sample of the run. */
  peakRssBytes: number;
}

/** How long an end hook may run before it is killed (SUBAGENT_HOOK_TIMEOUT_SEC; a record that predates the field). */
export const DEFAULT_HOOK_TIMEOUT_SEC = 60;
/** How long a cancel waits after its first signal (SUBAGENT_CANCEL_GRACE_MS; a record that predates the field). */
export const DEFAULT_CANCEL_GRACE_MS = 3000;

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
 * A cancelled run's children after its end: those the cancel stopped are `cancelled`,
 * `statusSource:"inferred"` — those still `running` (or, given `open`, those whose ids it holds: the ones
 * the stream left running), and those the stream ended at or after the cancel was requested (`since`, the
 * request's time). A CLI may report nothing for a child it killed (Claude 2.1.331 even ends with
 * result/success), or report it ended on its own once the cancel's signal had killed its tool (Qwen 0.24.4
 * can say `completed` when the tool got SIGTERM before Qwen did): either way the cancel ended it.
 */
export function cancelledChildren(children: ChildAgent[], at: string, stopped: { open?: ReadonlySet<string>; since?: string } = {}): ChildAgent[] {
  const since = stopped.since === undefined ? Number.NaN : Date.parse(stopped.since);
  const endedSince = (c: ChildAgent): boolean => c.status !== 'cancelled' && c.finishedAt !== null && Date.parse(c.finishedAt) >= since;
  return children.map((c) =>
    stopped.open?.has(c.id) || c.status === 'running' || endedSince(c)
      ? { ...c, status: 'cancelled', statusSource: 'inferred', finishedAt: c.finishedAt ?? at }
      : c,
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

/**
 * Why an end looks the way it does when the plain facts cannot say (docs/states.md): one of the words
 * below, or one of cancel's sentences (ENDED_BY_CANCEL). Every value ever written is here.
 */
export type EndReason =
  | 'spawn-failed'
  | 'cancelled-before-start'
  | 'executor-failed'
  | 'stalled'
  | 'the supervisor did not record the end in time; recorded by cancel'
  | 'the supervisor was gone; the end was recorded by cancel, the exit status is unknown'
  | `cancelled before the ${string} job was submitted`
  | `cancelled while the ${string} job was ${string}; the agent never started`
  | `the supervisor did not record the end; the ${string} job ended ${string} when cancelled`;

const END_REASON_WORDS = ['spawn-failed', 'cancelled-before-start', 'executor-failed', 'stalled'];
/** Cancel's sentences, as patterns: the job engine's name and the job's state vary. */
const ENDED_BY_CANCEL = [
  /^the supervisor did not record the end in time; recorded by cancel$/,
  /^the supervisor was gone; the end was recorded by cancel, the exit status is unknown$/,
  /^cancelled before the .* job was submitted$/,
  /^cancelled while the .* job was .*; the agent never started$/,
  /^the supervisor did not record the end; the .* job ended .* when cancelled$/,
];

function isEndReason(v: unknown): v is EndReason {
  return typeof v === 'string' && (END_REASON_WORDS.includes(v) || ENDED_BY_CANCEL.some((p) => p.test(v)));
}

function isReason(v: unknown): v is Reason {
  return typeof v === 'string' && (REASONS as readonly string[]).includes(v);
}

/** What every record holds, whatever its state. */
interface RecordCore {
  format: number;
  name: string;
  run: number;
  /** Unique per run; exported to the agent as SUBAGENT_RUN_ID, the marker cancel looks for. */
  runId: string;
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
  /** The run's spend and time caps. */
  caps: Required<Caps>;
  starter: ProcessIdentity | null;
  supervisor: ProcessIdentity | null;
  agentProcess: AgentProcess | null;
  cancel: CancelRequest | null;
  toolUses: number;
  usage: Usage | null;
  children: ChildAgent[];
  lastActivityAt: string | null;
  /** The variables that locate the agent CLI's own transcript store (see AgentAdapter.storeEnvKeys). */
  storeEnv: Record<string, string>;
  /** The run's place in the registry's queue when a concurrency limit was in force at its start. */
  queueTicket: string | null;
  /** The run's own git worktree (--worktree), kept across resumes. */
  worktree: { path: string; branch: string; base: string; repo: string } | null;
  /** Nesting depth: 1 for a run started from outside any run, its parent's depth + 1 otherwise. */
  depth: number;
  /** Bytes of the event log already digested by the supervisor's progress reader. */
  eventBytes: number;
  /** Lines of the event log that were skipped: not JSON, a torn last line, or longer than 16 MiB. */
  skippedLines: number;
  /** Where the supervisor was placed. */
  executor: Placement;
  // Stalls (docs/stalls.md) and the end hook (docs/hooks.md).
  /** Seconds without a sign of work after which the run counts as stalled; null: not watched. */
  stallAfterSec: number | null;
  stallAction: 'none' | 'cancel';
  /** While stalled (written by the supervisor): when the last sign of work was seen; else null. */
  stalledSince: string | null;
  /** The last sign of work the supervisor saw (output, or CPU time of the agent's processes). */
  lastWorkAt: string | null;
  /** The run's own end hook (--on-end), run by /bin/sh -c. */
  onEnd: string | null;
  /** How long an end hook may run before it is killed. */
  hookTimeoutSec: number;
  /** How long a cancel the supervisor makes itself (a stall's) waits after the first signal. */
  cancelGraceMs: number;
  /**
   * --keep-children: the processes the agent leaves behind when it exits are kept, not stopped
   * (docs/contract.md, "A done run is final"). Written only when true.
   */
  keepChildren: boolean;
  /**
   * The last warning the CLI gave of a limit near (written by the supervisor), null when none or when a
   * later word of the CLI said the limit is clear. Written only when set.
   */
  limitWarning: LimitWarning | null;
  /** The memory of the agent's process tree, once the supervisor has measured it; written only then. */
  memory: MemoryUse | null;
  /**
   * A later run that opens its session anew (a revive of a run whose session never began: docs/revive.md),
   * as run 1 does. Written only when true.
   */
  newSession: boolean;
  /**
   * A run that is a person's turn in the CLI's own interactive session (subagent-attach, docs/attach.md):
   * its event log is what the CLI's own store gained meanwhile, read by the adapter's `interactive` reader.
   * Written only when true.
   */
  attached: boolean;
  /**
   * --on-limit wait (docs/contract.md, "Waiting out a limit"): what the supervisor does when the run ends
   * on a limit that says when it resets; null: `fail`, the run ends as any other. Written only when set.
   */
  onLimit: LimitPolicy | null;
  /**
   * A parked run: the resume after a limit, waiting by its supervisor until this time (ISO-8601) to start
   * its agent; null once it started, and for every other run. Written only when set.
   */
  parkedUntil: string | null;
  /**
   * --after: the names whose latest runs must be done before this run starts (docs/contract.md, "Runs that
   * follow runs"); empty for a run that follows none. Written only when set.
   */
  after: string[];
  /** --after-any: this run follows its `after` names whatever their outcome. Written only when true. */
  afterAny: boolean;
  /**
   * Its supervisor published the name's next run (a queued follow-up) before recording this run's end, as
   * for a parked attempt: a reader that chose this run as the latest looks for the next. Written only when true.
   */
  followedUp: boolean;
  /**
   * Of `after`, the names this run still waits for, as its supervisor last saw them (emptied when it
   * starts or ends). Written only when set.
   */
  waitingFor: string[];
  /** A run of `--cli acp`: the agent it speaks ACP with, and its permission policy; null for every other CLI. Written only when set. */
  acp: AcpSettings | null;
}

/** How a permission request of an ACP agent is answered (`--permissions`, docs/agents/acp.md). */
export const PERMISSION_POLICIES = ['approve-all', 'approve-reads', 'deny'] as const;
export type PermissionPolicy = (typeof PERMISSION_POLICIES)[number];

/** A run of `--cli acp` as its record keeps it (resumes keep it). */
export interface AcpSettings {
  /** The agent's command line, whole (a preset's, or `--acp-command` split on blanks). */
  command: string[];
  /** The preset it came from (`gemini`, `qwen`…), null for a command of the caller's own. */
  preset: string | null;
  permissions: PermissionPolicy;
}

/** --on-limit wait, as a run keeps it (resumes keep it; each attempt after a limit counts one `retry`). */
export interface LimitPolicy {
  action: 'wait';
  /** The continuation prompt of an attempt after a limit; null: DEFAULT_LIMIT_PROMPT. */
  prompt: string | null;
  /** How many attempts after a limit the name may make in a row (--limit-retries). */
  retries: number;
  /** Which of them this run is: 0 for a run a caller started or resumed. */
  retry: number;
}

/** The continuation prompt of an attempt after a limit, unless --limit-prompt gives one (docs/contract.md). */
export const DEFAULT_LIMIT_PROMPT = 'Your previous turn was cut off by a usage limit, which has now reset. Continue the task where you left off.';
/** --limit-retries when not given. */
export const DEFAULT_LIMIT_RETRIES = 3;

/** The end's fields of a run that has not ended: all null (they are in the JSON, as null). */
interface NoEnd {
  outcome: null;
  finishedAt: null;
  exitCode: null;
  signal: null;
  error: null;
  endReason: null;
  reason: null;
}

/** How a run ended: written once, with `done`. */
export interface RunEnd {
  outcome: Outcome;
  finishedAt: string;
  exitCode: number | null;
  signal: string | null;
  error: string | null;
  /** Why the end looks the way it does when the plain facts cannot say (e.g. exit code not recorded). */
  endReason: EndReason | null;
  /** Why the run did not succeed (REASONS), null when it succeeded. */
  reason: Reason | null;
  /**
   * With reason `rate-limit`: when the limit resets (ISO-8601), as the CLI said it; null when it did not
   * say, and for every other reason. Written only when set.
   */
  resetsAt: string | null;
  /**
   * The run's duration on the monotonic clock, written by its supervisor with the end (time.ts
   * elapsedSinceMs): `durationMs` prefers it to finishedAt − startedAt, which a wall-clock step distorts.
   * Null (not written) in an end recorded by another process (a cancel of a dead supervisor's run).
   */
  elapsedMs: number | null;
  /**
   * The size of the event log when the end was recorded. Readers of a done run read its log up to here
   * and no further, so its answer never changes. Null (not written): read to the end.
   */
  eventBytesAtEnd: number | null;
  /**
   * The run's processes still alive when the end was recorded — kept (--keep-children), or not stopped
   * by KILL — each with its identity, for `cancel` to reach them. Written only when there are some.
   */
  leftovers: LeftoverProcess[];
}

export type ScheduledRecord = RecordCore & NoEnd & { status: 'scheduled' };
export type RunningRecord = RecordCore & NoEnd & { status: 'running' };
export type DoneRecord = RecordCore & RunEnd & { status: 'done' };

/**
 * A run's record as the code holds it: whole (every field there, whichever version wrote the file) and
 * closed per state (the end's fields only on `done`). parseRecord upgrades what is on disk into it once;
 * serialiseRecord writes it back as today's writers always have (docs/design.md, "The registry on disk").
 */
export type RunRecord = ScheduledRecord | RunningRecord | DoneRecord;

/**
 * A record as it is on disk: the fields a record written before they existed lacks are optional
 * (test/fixtures/records/ holds one file per shape ever written, and says which commit added which).
 */
type StoredRecord = Omit<
  RecordCore,
  | 'caps'
  | 'storeEnv'
  | 'queueTicket'
  | 'worktree'
  | 'depth'
  | 'skippedLines'
  | 'executor'
  | 'stallAfterSec'
  | 'stallAction'
  | 'stalledSince'
  | 'lastWorkAt'
  | 'onEnd'
  | 'hookTimeoutSec'
  | 'cancelGraceMs'
  | 'keepChildren'
  | 'limitWarning'
  | 'memory'
  | 'newSession'
  | 'attached'
  | 'onLimit'
  | 'parkedUntil'
  | 'after'
  | 'afterAny'
  | 'waitingFor'
  | 'followedUp'
  | 'acp'
> &
  Partial<
    Pick<
      RecordCore,
      'storeEnv' | 'queueTicket' | 'worktree' | 'depth' | 'skippedLines' | 'executor' | 'keepChildren' | 'limitWarning' | 'memory' | 'newSession' | 'attached'
    >
  > &
  Partial<Pick<RecordCore, 'onLimit' | 'parkedUntil'>> &
  Partial<Pick<RecordCore, 'after' | 'afterAny' | 'waitingFor' | 'followedUp'>> &
  Partial<Pick<RecordCore, 'onLimit' | 'parkedUntil' | 'acp'>> &
  Partial<Pick<RecordCore, 'stallAfterSec' | 'stallAction' | 'stalledSince' | 'lastWorkAt' | 'onEnd' | 'hookTimeoutSec' | 'cancelGraceMs'>> &
  Omit<RunEnd, 'outcome' | 'finishedAt' | 'reason' | 'resetsAt' | 'elapsedMs' | 'eventBytesAtEnd' | 'leftovers'> &
  Partial<Pick<RunEnd, 'resetsAt' | 'elapsedMs' | 'eventBytesAtEnd' | 'leftovers'>> & {
    status: StoredStatus;
    outcome: Outcome | null;
    finishedAt: string | null;
    reason?: Reason | null;
    caps?: Caps;
  };

/**
 * The fields of a run not started yet, the same for every new run (a start's, a resume's, an attempt after
 * a limit): scheduled, a new run id, nothing of an agent, nothing ended.
 */
export function unstartedFields(now: string, starter: ProcessIdentity) {
  return {
    runId: randomUUID(),
    status: 'scheduled' as const,
    outcome: null,
    startedAt: now,
    agentStartedAt: null,
    updatedAt: now,
    finishedAt: null,
    exitCode: null,
    signal: null,
    error: null,
    endReason: null,
    reason: null,
    starter,
    supervisor: null,
    agentProcess: null,
    cancel: null,
    toolUses: 0,
    usage: null,
    children: [] as ChildAgent[],
    lastActivityAt: null,
    eventBytes: 0,
    skippedLines: 0,
    stalledSince: null,
    lastWorkAt: null,
    limitWarning: null,
    memory: null,
    parkedUntil: null,
    waitingFor: [] as string[],
    followedUp: false,
  };
}

export const LOCAL_PLACEMENT: Placement = { name: 'local', args: [], jobId: null };

/**
 * The record whole: a field its writer did not know yet gets the value that meant (appended, so a record
 * that has them all keeps its order and bytes). A done record without a reason gets what its end implies.
 */
function upgrade(s: StoredRecord, path: string): RunRecord {
  const core = {
    ...s,
    caps: s.caps ? { ...s.caps, maxTimeSec: s.caps.maxTimeSec ?? null, maxMemoryBytes: s.caps.maxMemoryBytes ?? null } : NO_CAPS,
    storeEnv: s.storeEnv ?? {},
    queueTicket: s.queueTicket ?? null,
    worktree: s.worktree ?? null,
    depth: s.depth ?? 1,
    skippedLines: s.skippedLines ?? 0,
    executor: s.executor ?? LOCAL_PLACEMENT,
    stallAfterSec: s.stallAfterSec ?? null,
    stallAction: s.stallAction ?? 'none',
    stalledSince: s.stalledSince ?? null,
    lastWorkAt: s.lastWorkAt ?? null,
    onEnd: s.onEnd ?? null,
    hookTimeoutSec: s.hookTimeoutSec ?? DEFAULT_HOOK_TIMEOUT_SEC,
    cancelGraceMs: s.cancelGraceMs ?? DEFAULT_CANCEL_GRACE_MS,
    keepChildren: s.keepChildren ?? false,
    limitWarning: s.limitWarning ?? null,
    memory: s.memory ?? null,
    newSession: s.newSession ?? false,
    attached: s.attached ?? false,
    onLimit: s.onLimit ?? null,
    parkedUntil: s.parkedUntil ?? null,
    after: s.after ?? [],
    afterAny: s.afterAny ?? false,
    waitingFor: s.waitingFor ?? [],
    followedUp: s.followedUp ?? false,
    acp: s.acp ?? null,
  };
  if (s.status !== 'done') {
    const { outcome, finishedAt, exitCode, signal, error, endReason } = s;
    if (
      outcome !== null ||
      finishedAt !== null ||
      exitCode !== null ||
      signal !== null ||
      error !== null ||
      endReason !== null ||
      (s.reason ?? null) !== null ||
      (s.resetsAt ?? null) !== null
    )
      throw corrupt(path, `wrong shape (a ${s.status} run has the fields of an end)`);
    return { ...core, status: s.status, outcome, finishedAt, exitCode, signal, error, endReason, reason: null };
  }
  const { outcome, finishedAt } = s;
  if (outcome === null || finishedAt === null) throw corrupt(path, 'wrong shape (a done run without its outcome or finishedAt)');
  return {
    ...core,
    status: 'done',
    outcome,
    finishedAt,
    reason: s.reason !== undefined ? s.reason : impliedReason(outcome, s.endReason),
    resetsAt: s.resetsAt ?? null,
    elapsedMs: s.elapsedMs ?? null,
    eventBytesAtEnd: s.eventBytesAtEnd ?? null,
    leftovers: s.leftovers ?? [],
  };
}

/** When the rate limit that ended a done run resets (ISO-8601); null for any other run, and when the CLI did not say. */
export function resetsAtOf(r: RunRecord): string | null {
  return r.status === 'done' ? r.resetsAt : null;
}

/** The reason of a done record written before the field existed: what its end implies. */
function impliedReason(outcome: Outcome, endReason: EndReason | null): Reason | null {
  if (outcome === 'succeeded') return null;
  if (outcome === 'cancelled') return endReason === 'stalled' ? 'stalled' : 'cancelled';
  return endReason === 'spawn-failed' ? 'spawn-failed' : 'unknown';
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

const STRING_OR_NULL = ['model', 'variant', 'agent', 'sessionId', 'parent', 'agentStartedAt', 'finishedAt', 'signal', 'error', 'lastActivityAt'] as const;
/** Fields that a record written before them lacks: checked when there. */
const LATER_STRING_OR_NULL = ['queueTicket', 'stalledSince', 'lastWorkAt', 'onEnd'] as const;

export function corrupt(path: string, why: string): SubagentError {
  return new SubagentError('E_REGISTRY_CORRUPT', `the record ${path} is unreadable: ${why}`, {
    path,
    hint: 'the file was kept as it is; inspect or move it away by hand (other runs are unaffected)',
  });
}

/**
 * Parses, checks and upgrades a record (a field its writer did not know yet gets the value that meant);
 * anything that is not a record of a format we know is E_REGISTRY_CORRUPT.
 */
export function parseRecord(text: string, path: string): RunRecord {
  if (text.length === 0) throw corrupt(path, 'the file is empty');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw corrupt(path, `it is not valid JSON (${(err as Error).message})`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw corrupt(path, 'it is not a JSON object');
  const r = value as Record<string, unknown>;
  if (typeof r.format !== 'number') throw corrupt(path, 'it has no "format" field');
  if (r.format > RECORD_FORMAT) {
    throw new SubagentError('E_REGISTRY_CORRUPT', `the record ${path} has format ${r.format}, newer than this subagents understands (${RECORD_FORMAT})`, {
      path,
      format: r.format,
      hint: 'upgrade subagents to read this registry; the file was left as it is',
    });
  }
  const problems: string[] = [];
  if (!isStored(r, problems)) throw corrupt(path, `wrong shape (bad field${problems.length > 1 ? 's' : ''}: ${problems.join(', ')})`);
  return upgrade(r, path);
}

/** Whether a parsed record is what a StoredRecord holds (a field that may be absent is checked when there); what is not goes to `problems`. */
function isStored(r: Record<string, unknown>, problems: string[]): r is Record<string, unknown> & StoredRecord {
  const optional = (key: string, ok: (v: unknown) => boolean) => {
    if (r[key] !== undefined && !ok(r[key])) problems.push(key);
  };
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
  if (r.endReason !== null && !isEndReason(r.endReason)) problems.push('endReason');
  for (const key of ['starter', 'supervisor', 'agentProcess'] as const) if (r[key] !== null && !isIdentity(r[key])) problems.push(key);
  if (!isCount(r.promptBytes) || !isCount(r.toolUses) || !isCount(r.eventBytes)) problems.push('promptBytes/toolUses/eventBytes');
  if (r.cancel !== null && !isCancel(r.cancel)) problems.push('cancel');
  if (r.usage !== null && !(typeof r.usage === 'object' && !Array.isArray(r.usage))) problems.push('usage');
  optional('reason', (v) => v === null || isReason(v));
  optional('caps', isCaps);
  optional('elapsedMs', (v) => v === null || (typeof v === 'number' && v >= 0));
  optional('executor', isPlacement);
  optional('eventBytesAtEnd', isCount);
  optional('leftovers', (v) => Array.isArray(v) && v.every(isLeftover));
  optional('storeEnv', (v) => typeof v === 'object' && v !== null && !Array.isArray(v) && Object.values(v).every((e) => typeof e === 'string'));
  optional('worktree', (v) => v === null || (typeof v === 'object' && !Array.isArray(v)));
  optional('depth', (v) => Number.isInteger(v) && (v as number) >= 1);
  optional('skippedLines', isCount);
  optional('stallAfterSec', (v) => v === null || (typeof v === 'number' && v > 0));
  optional('stallAction', (v) => v === 'none' || v === 'cancel');
  optional('hookTimeoutSec', (v) => typeof v === 'number' && v > 0);
  optional('cancelGraceMs', (v) => typeof v === 'number' && v >= 0);
  optional('keepChildren', (v) => typeof v === 'boolean');
  optional('resetsAt', (v) => v === null || isIsoTime(v));
  optional('limitWarning', (v) => v === null || isLimitWarning(v));
  optional('newSession', (v) => typeof v === 'boolean');
  optional('attached', (v) => typeof v === 'boolean');
  optional('memory', (v) => v === null || isMemoryUse(v));
  optional('onLimit', (v) => v === null || isLimitPolicy(v));
  optional('parkedUntil', (v) => v === null || isIsoTime(v));
  optional('after', isStrings);
  optional('afterAny', (v) => typeof v === 'boolean');
  optional('waitingFor', isStrings);
  optional('followedUp', (v) => typeof v === 'boolean');
  optional('acp', (v) => v === null || isAcpSettings(v));
  for (const key of LATER_STRING_OR_NULL) optional(key, (v) => v === null || typeof v === 'string');
  if (!Array.isArray(r.files) || !Array.isArray(r.extraArgs) || !Array.isArray(r.children)) problems.push('files/extraArgs/children');
  return problems.length === 0;
}

function isStrings(v: unknown): boolean {
  return Array.isArray(v) && v.every((e) => typeof e === 'string');
}

function isIsoTime(v: unknown): boolean {
  return typeof v === 'string' && !Number.isNaN(Date.parse(v));
}

function isLimitWarning(v: unknown): v is LimitWarning {
  const w = v as Record<string, unknown>;
  return (
    typeof w === 'object' &&
    w !== null &&
    (w.window === null || typeof w.window === 'string') &&
    (w.utilization === null || typeof w.utilization === 'number') &&
    (w.resetsAt === null || isIsoTime(w.resetsAt))
  );
}

function isLimitPolicy(v: unknown): v is LimitPolicy {
  const p = v as Record<string, unknown>;
  return (
    typeof p === 'object' && p !== null && p.action === 'wait' && (p.prompt === null || typeof p.prompt === 'string') && isCount(p.retries) && isCount(p.retry)
  );
}

function isAcpSettings(v: unknown): v is AcpSettings {
  const a = v as Record<string, unknown>;
  return (
    typeof a === 'object' &&
    a !== null &&
    Array.isArray(a.command) &&
    a.command.length > 0 &&
    a.command.every((w) => typeof w === 'string') &&
    (a.preset === null || typeof a.preset === 'string') &&
    (PERMISSION_POLICIES as readonly unknown[]).includes(a.permissions)
  );
}

function isCount(v: unknown): boolean {
  return Number.isInteger(v) && (v as number) >= 0;
}

function isCancel(v: unknown): v is CancelRequest {
  const c = v as Record<string, unknown>;
  return (
    typeof c === 'object' &&
    c !== null &&
    typeof c.requestedAt === 'string' &&
    typeof c.signal === 'string' &&
    typeof c.by === 'number' &&
    (c.reason === undefined || isReason(c.reason)) &&
    (c.message === undefined || typeof c.message === 'string')
  );
}

function isLeftover(v: unknown): v is LeftoverProcess {
  const p = v as Record<string, unknown>;
  return isIdentity(v) && Number.isInteger(p.ppid) && Number.isInteger(p.pgid) && typeof p.comm === 'string';
}

function isCaps(v: unknown): boolean {
  const c = v as Record<string, unknown>;
  return (
    typeof c === 'object' &&
    c !== null &&
    (['maxCostUsd', 'maxTokens', 'maxTurns'] as const).every((k) => c[k] === null || typeof c[k] === 'number') &&
    (['maxTimeSec', 'maxMemoryBytes'] as const).every((k) => c[k] === undefined || c[k] === null || typeof c[k] === 'number')
  );
}

function isMemoryUse(v: unknown): boolean {
  const m = v as Record<string, unknown>;
  return typeof m === 'object' && m !== null && isCount(m.rssBytes) && isCount(m.peakRssBytes);
}

/**
 * The record's JSON as today's writers write it: a field whose value is the one its absence means, and
 * that today's writers leave out in that case (keepChildren, newSession, attached, afterAny and followedUp false, no limitWarning, onLimit,
 * parkedUntil, after, waitingFor or acp; memory not measured, no memory cap; an end's elapsedMs, eventBytesAtEnd and resetsAt null, no
 * leftovers), is left out, so a record read and written back keeps its bytes.
 */
export function serialiseRecord(record: RunRecord): string {
  const out: Record<string, unknown> = {};
  for (const key in record) {
    const value = record[key as keyof RunRecord];
    if (!leftOut(key, value)) out[key] = key === 'caps' ? storedCaps(value as Required<Caps>) : value;
  }
  return JSON.stringify(out, null, 1) + '\n';
}

/** The caps as written: the memory cap only when there is one (records before it lack it, and mean none). */
function storedCaps(caps: Required<Caps>): Caps {
  if (caps.maxMemoryBytes !== null) return caps;
  const { maxMemoryBytes: _none, ...rest } = caps;
  return rest;
}

function leftOut(key: string, value: unknown): boolean {
  if (key === 'keepChildren' || key === 'newSession' || key === 'attached' || key === 'afterAny' || key === 'followedUp') return value === false;
  if (key === 'after' || key === 'waitingFor') return Array.isArray(value) && value.length === 0;
  if (key === 'elapsedMs' || key === 'eventBytesAtEnd' || key === 'resetsAt' || key === 'limitWarning' || key === 'memory') return value === null;
  if (key === 'onLimit' || key === 'parkedUntil' || key === 'acp') return value === null;
  return key === 'leftovers' && Array.isArray(value) && value.length === 0;
}
