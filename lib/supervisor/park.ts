import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { StreamState } from '../agents/types.js';
import { isoOf, nowIso } from '../base/time.js';
import { selfIdentity, identityOf } from '../proc/identity.js';
import { signalIdentity } from '../proc/signal.js';
import {
  DEFAULT_LIMIT_PROMPT,
  unstartedFields,
  type CancelRequest,
  type DoneRecord,
  type LimitPolicy,
  type RunRecord,
  type ScheduledRecord,
} from '../registry/record.js';
import { FILES, createRun, readLauncher, updateRecord, writeLauncher } from '../registry/store.js';
import type { Log } from './log.js';
import { executorNamed } from './place.js';

/**
 * Waiting out a limit (--on-limit wait; docs/contract.md, "Waiting out a limit"). A run that ends on a
 * limit whose reset its CLI said is followed, before its end is recorded, by its next attempt: run N+1,
 * published `scheduled` with `parkedUntil`, and its own supervisor started, which records it `running`
 * and waits until then to resume the session. Run N is then recorded `done` (failed, rate-limit) as
 * ever, and its end hooks are left to the attempt that ends the name. The name is never terminal
 * between the two: run N+1 exists before run N is done.
 */

/** At most this much after the reset, so that parked runs do not all come back in the same instant. */
export const PARK_JITTER_MS = 1000;

/** Where the next attempt of a run was published: its directory and its supervisor's pid. */
export interface NextAttempt {
  dir: string;
  run: number;
  pid: number | null;
}

/**
 * When the next attempt of a run ending as `ended` (its record as it is about to be written) may start;
 * null when it does not wait: not `--on-limit wait`, not a limit, no reset time said, no retries left,
 * or no session to resume.
 */
export function parkUntil(ended: RunRecord, now = Date.now()): string | null {
  const policy = ended.onLimit;
  if (!policy || ended.status !== 'done' || ended.reason !== 'rate-limit' || ended.resetsAt === null) return null;
  if (policy.retry >= policy.retries) return null;
  if (ended.sessionId === null && ended.cli !== 'shell') return null;
  const reset = Date.parse(ended.resetsAt);
  if (Number.isNaN(reset)) return null;
  return isoOf(Math.max(reset, now) + Math.floor(Math.random() * PARK_JITTER_MS));
}

/**
 * Publishes the next attempt of the run whose end is `ended`, parked until `until`, and starts its
 * supervisor. Its prompt: the continuation prompt, or this run's own prompt when its agent never began
 * (the model answered nothing). Null when another writer published run N+1 first.
 */
export async function publishNext(
  registry: string,
  dir: string,
  ended: DoneRecord,
  state: StreamState | null,
  until: string,
  log: Log,
): Promise<NextAttempt | null> {
  const policy = ended.onLimit as LimitPolicy;
  const began = state !== null && (state.toolUses > 0 || (state.usage?.outputTokens ?? 0) > 0);
  const prompt = began ? Buffer.from(policy.prompt ?? DEFAULT_LIMIT_PROMPT, 'utf8') : readFileSync(join(dir, FILES.prompt));
  const record = nextRecord(ended, prompt.length, until);
  const run = createRun(registry, ended.name, record, prompt);
  if (run === null) {
    log(`run ${record.run} of "${ended.name}" exists already: not parking`);
    return null;
  }
  log(
    `limit until ${ended.resetsAt}: run ${record.run} parked until ${until} (attempt ${policy.retry + 1} of ${policy.retries}, ${began ? 'continuation prompt' : 'its prompt again: the agent never began'})`,
  );
  return placeNext(registry, run.dir, record);
}

/**
 * Starts the supervisor of a run a supervisor published for its name (an attempt after a limit, a
 * follow-up), where the run's record places it, with this supervisor's environment, and records who
 * vouches for it.
 */
export async function placeNext(registry: string, dir: string, record: RunRecord): Promise<NextAttempt> {
  const placed = await executorNamed(record.executor.name).place({
    registry,
    dir,
    env: process.env,
    label: `subagent:${record.name}:${record.run}`,
    args: record.executor.args,
  });
  if (placed.pid !== null) writeLauncher(dir, identityOf(placed.pid) ?? { pid: placed.pid, startTime: 'exited', bootId: selfIdentity().bootId });
  if (placed.jobId !== null) {
    const jobId = placed.jobId;
    updateRecord(dir, (r) => ({ ...r, executor: { ...r.executor, jobId } }));
  }
  return { dir, run: record.run, pid: placed.pid };
}

/** Run N+1 as a resume of run N's session would make it, with one more retry counted and `parkedUntil`. */
function nextRecord(ended: DoneRecord, promptBytes: number, until: string): ScheduledRecord {
  const policy = ended.onLimit as LimitPolicy;
  // A queue slot is asked for when the wait is over, not held while parked.
  return { ...sessionNext(ended, promptBytes, null), onLimit: { ...policy, retry: policy.retry + 1 }, parkedUntil: until };
}

/**
 * Run N+1 of a name as a resume of run N's session makes it, with run N's options, published by a
 * supervisor: an attempt after a limit (above), a follow-up (lib/supervisor/follow-up.ts).
 */
export function sessionNext(ended: RunRecord, promptBytes: number, queueTicket: string | null): ScheduledRecord {
  // The end's own fields stay with run N.
  const { resetsAt: _r, elapsedMs: _e, eventBytesAtEnd: _b, leftovers: _l, ...core } = ended as DoneRecord;
  return {
    ...core,
    ...unstartedFields(nowIso(), selfIdentity()),
    run: ended.run + 1,
    files: [],
    promptBytes,
    queueTicket,
    executor: { ...ended.executor, jobId: null },
    // Its session began: this run resumes it.
    newSession: false,
    // A person's turn (subagent-attach) is followed by an ordinary run of the session.
    attached: false,
    after: [],
    afterAny: false,
  };
}

/**
 * A cancel of run N that came as its next attempt was published reaches that attempt too: its intent,
 * then SIGTERM once its supervisor has recorded it running (its handler is in place by then; before, the
 * supervisor finds the intent in the record itself, at its start or when it records the run parked).
 */
export function cancelNext(next: NextAttempt, request: CancelRequest, log: Log): void {
  try {
    const after = updateRecord(next.dir, (r) => (r.status === 'done' || r.cancel ? null : { ...r, cancel: request }));
    const launcher = after.status === 'running' ? (after.supervisor ?? readLauncher(next.dir)) : null;
    if (launcher) signalIdentity(launcher, 'SIGTERM');
  } catch (err) {
    log(`cancelling the parked run ${next.run} failed: ${(err as Error).message}`);
  }
}
