import { randomUUID } from '../base/uuid.js';
import { SubagentError } from '../base/errors.js';
import type { AgentAdapter } from '../agents/types.js';
import { selfIdentity, identityOf } from '../proc/identity.js';
import { LOCAL_PLACEMENT, NO_CAPS, RECORD_FORMAT, unstartedFields, type RunRecord, type Status } from '../registry/record.js';
import { updateRecord, writeLauncher, type Published } from '../registry/store.js';
import { executorNamed, type Placed } from '../supervisor/place.js';
import { nowIso } from '../base/time.js';
import { enqueue, newTicket, readLimit, readMemoryFloor, writeLimit, writeMemoryFloor } from '../registry/queue.js';
import { findOnPath } from '../proc/path.js';
import type { WatchFields } from './run-watch.js';

/** What a start or resume asks of the registry's queue: its concurrency limit, its free-memory floor (0 removes either). */
export interface Admission {
  limit: number | undefined;
  floor: number | undefined;
}

/**
 * Sets the registry's limit and floor when asked for (0 removes one); a run started while either is in
 * force gets a queue ticket. The first write a start makes: it comes before the worktree and the name.
 */
export function queueTicketFor(registry: string, a: Admission): string | null {
  if (a.limit !== undefined) writeLimit(registry, a.limit);
  if (a.floor !== undefined) writeMemoryFloor(registry, a.floor);
  return readLimit(registry) > 0 || readMemoryFloor(registry) > 0 ? newTicket(randomUUID()) : null;
}

/** What a new record is made of: the fields start or resume chose; the rest are a new run's. */
export type RunSettings = Pick<
  RunRecord,
  'name' | 'run' | 'cli' | 'cwd' | 'model' | 'variant' | 'agent' | 'files' | 'extraArgs' | 'sessionId' | 'parent' | 'promptBytes' | 'storeEnv'
> &
  Partial<Pick<RunRecord, 'queueTicket' | 'worktree' | 'depth' | 'executor' | 'caps' | 'newSession' | 'attached'>> &
  Partial<Pick<RunRecord, 'onLimit' | 'acp'>> &
  Partial<Pick<RunRecord, 'after' | 'afterAny'>> &
  WatchFields;

/**
 * Refuses an option the CLI cannot honour, and a CLI that is not installed — before anything is recorded.
 * `program`: the one the run starts, when it is not the adapter's own (`--cli acp`: its agent's).
 */
export function checkAdapterCan(
  adapter: AgentAdapter,
  given: { model?: boolean; variant?: boolean; agent?: boolean; files?: boolean },
  env: NodeJS.ProcessEnv,
  program: string = adapter.program,
): void {
  for (const key of ['model', 'variant', 'agent', 'files'] as const) {
    if (given[key] && !adapter.supports[key]) {
      const flag = key === 'files' ? '--file' : `--${key}`;
      throw new SubagentError('E_ARG_UNSUPPORTED', `the ${adapter.cli} CLI cannot honour ${flag}`, {
        cli: adapter.cli,
        flag,
        hint: `drop ${flag}, or choose a CLI that supports it (docs/agents/ says what each CLI takes)`,
      });
    }
  }
  if (!findOnPath(program, env)) {
    throw new SubagentError('E_CMD_MISSING', `the ${adapter.cli} CLI ("${program}") is not on PATH`, {
      cli: adapter.cli,
      program,
      hint: `install it, or put it on PATH, or choose another --cli`,
    });
  }
}

export function newRecord(s: RunSettings): RunRecord {
  return {
    format: RECORD_FORMAT,
    name: s.name,
    run: s.run,
    ...unstartedFields(nowIso(), selfIdentity()),
    cli: s.cli,
    model: s.model,
    variant: s.variant,
    agent: s.agent,
    files: s.files,
    extraArgs: s.extraArgs,
    cwd: s.cwd,
    sessionId: s.sessionId,
    parent: s.parent,
    promptBytes: s.promptBytes,
    caps: s.caps ?? NO_CAPS,
    storeEnv: s.storeEnv,
    queueTicket: s.queueTicket ?? null,
    worktree: s.worktree ?? null,
    depth: s.depth ?? 1,
    executor: s.executor ?? LOCAL_PLACEMENT,
    stallAfterSec: s.stallAfterSec,
    stallAction: s.stallAction,
    onEnd: s.onEnd,
    hookTimeoutSec: s.hookTimeoutSec,
    cancelGraceMs: s.cancelGraceMs,
    keepChildren: s.keepChildren,
    newSession: s.newSession ?? false,
    attached: s.attached ?? false,
    onLimit: s.onLimit ?? null,
    after: s.after ?? [],
    afterAny: s.afterAny ?? false,
    // Every name is waited for until its supervisor has looked (lib/supervisor/after.ts).
    waitingFor: s.after ?? [],
    acp: s.acp ?? null,
  };
}

/**
 * Starts the supervisor of a published run where its record places it, and records who vouches for it
 * (a local supervisor's identity, or the job's id), so that a run never depends on the start command
 * staying alive to be seen as scheduled. It is started even when the fsync that made the run's
 * directory entry durable failed (the run is published either way): that failure is reported after,
 * instead of success. A submission the engine refuses leaves the run recorded as failed.
 */
export async function launchSupervisor(
  registry: string,
  run: Published,
  env: NodeJS.ProcessEnv,
  ticket: string | null,
  record: RunRecord,
  afterJobs: string[] = [],
): Promise<Placed> {
  if (ticket) enqueue(registry, ticket, run.dir);
  const placement = record.executor;
  let placed: Placed;
  try {
    const label = `subagent:${record.name}:${record.run}`;
    placed = await executorNamed(placement.name).place({ registry, dir: run.dir, env, label, args: placement.args, after: afterJobs });
  } catch (err) {
    if (placement.name !== 'local') recordNotPlaced(run.dir, (err as Error).message);
    throw err;
  }
  if (placed.pid !== null) writeLauncher(run.dir, identityOf(placed.pid) ?? { pid: placed.pid, startTime: 'exited', bootId: selfIdentity().bootId });
  if (placed.jobId !== null) {
    const jobId = placed.jobId;
    updateRecord(run.dir, (r) => ({ ...r, executor: { ...r.executor, jobId } }));
  }
  run.assertDurable();
  return placed;
}

/** A run whose supervisor the engine would not take: it ends here, failed, with the engine's words. */
function recordNotPlaced(dir: string, error: string): void {
  updateRecord(dir, (r) =>
    r.status === 'done'
      ? null
      : {
          ...r,
          status: 'done',
          outcome: 'failed',
          error,
          endReason: 'executor-failed',
          resetsAt: null,
          finishedAt: nowIso(),
          elapsedMs: null,
          eventBytesAtEnd: null,
          leftovers: [],
        },
  );
}

/** What start and resume resolve to: the run as it was published (docs/schemas/start.schema.json). */
export interface StartResult {
  ok: true;
  registry: string;
  name: string;
  /** The supervisor's pid; null for a run placed on a job engine (its supervisor runs on a node). */
  pid: number | null;
  /** Where the supervisor was placed: local or slurm. */
  executor: string;
  /** The engine's job id (slurm); null for local. */
  jobId: string | null;
  /** `scheduled`: the supervisor starts the agent (or queues it) on its own. */
  status: Status;
  /** The CLI's session id where it is chosen in advance, else null until the agent reports it. */
  sessionId: string | null;
  cli: string;
  model: string | null;
  mode: 'new' | 'resume';
  run: number;
  startedAt: string;
}

export function launchResult(registry: string, r: RunRecord, placed: Placed, mode: 'new' | 'resume'): StartResult {
  return {
    ok: true,
    registry,
    name: r.name,
    pid: placed.pid,
    executor: r.executor.name,
    jobId: placed.jobId,
    status: r.status,
    sessionId: r.sessionId,
    cli: r.cli,
    model: r.model,
    mode,
    run: r.run,
    startedAt: r.startedAt,
  };
}

export function storeEnvOf(adapter: AgentAdapter, env: NodeJS.ProcessEnv): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k of adapter.storeEnvKeys) {
    const v = env[k];
    if (v !== undefined) out[k] = v;
  }
  return out;
}
