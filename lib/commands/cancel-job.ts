import { jobEngine } from '../proc/engines.js';
import type { JobEngine, JobState } from '../proc/jobs.js';
import { readRecord } from '../registry/store.js';
import type { RunRecord } from '../registry/record.js';
import { monotonicMs, sleep } from '../base/time.js';
import { recordCancelledEnd } from './cancel-end.js';

/** How long cancel waits for a job to end once the engine was told to end it (Slurm: its KillWait, 30 s by default). */
const JOB_END_MS = 45_000;
/** How long a run being submitted may take to get its job id recorded. */
const SUBMIT_MS = 35_000;

export interface JobCancel {
  /** The job's state when cancel found it, and when it left it. */
  before: string | null;
  after: string | null;
  /** Whether the supervisor was signalled (a running job), and whether the job itself was cancelled. */
  signalled: boolean;
  jobCancelled: boolean;
  /** Set when the job had not ended by the deadline. */
  warning: string | null;
}

/**
 * Cancel of a run placed on a job engine (docs/scaling.md), after its intent is recorded: a pending job
 * is cancelled without a signal (Slurm retries a signal to a pending job for ~95 s); a running one gets
 * the graceful SIGTERM on its one process, the supervisor, which stops its agent and records the end —
 * then, after the grace period, the job is cancelled whatever remains. Every outcome is checked by the
 * job's state, never by the engine command's exit status; a run whose supervisor recorded no end is
 * recorded `cancelled` here.
 */
export async function cancelJob(dir: string, marked: RunRecord, signal: string, graceMs: number): Promise<JobCancel> {
  const placement = marked.executor;
  const engine = jobEngine(placement.name)!;
  const jobId = placement.jobId ?? (await jobIdOnceSubmitted(dir));
  const out: JobCancel = { before: null, after: null, signalled: false, jobCancelled: false, warning: null };
  if (jobId === null) {
    recordCancelledEnd(dir, signal, `cancelled before the ${placement.name} job was submitted`);
    return out;
  }
  let job = stateOf(engine, jobId);
  out.before = job?.state ?? null;
  if (job?.phase === 'running' && signal !== 'SIGKILL') {
    engine.signal(jobId, 'TERM');
    out.signalled = true;
    job = await until(engine, jobId, graceMs, (j) => j === null || j.phase === 'ended' || readRecord(dir).status === 'done');
    const ended = recordedEnd(dir);
    if (job !== null && job.phase !== 'ended' && ended) {
      // The supervisor recorded the end: it leaves by itself, once the run's end hooks (which it is
      // starting, or waits for) are done — the job's end would kill them. Left to end, for as long as a
      // hook may take.
      job = await until(engine, jobId, hookBoundMs(ended), (j) => j === null || j.phase === 'ended');
    }
  }
  if (job !== null && job.phase !== 'ended') {
    engine.cancel(jobId);
    out.jobCancelled = true;
    job = await until(engine, jobId, JOB_END_MS, (j) => j === null || j.phase === 'ended');
  }
  out.after = job?.state ?? null;
  if (job !== null && job.phase !== 'ended') out.warning = `${placement.name} job ${jobId} is still ${job.state} ${JOB_END_MS / 1000} s after it was cancelled`;
  else if (readRecord(dir).status !== 'done')
    recordCancelledEnd(
      dir,
      signal,
      out.before === 'PENDING' || marked.supervisor === null
        ? `cancelled while the ${placement.name} job was ${out.before ?? 'gone'}; the agent never started`
        : `the supervisor did not record the end; the ${placement.name} job ended ${job?.state ?? '(no longer known)'} when cancelled`,
    );
  return out;
}

/** The run's record when it is `done` (its supervisor recorded the end), else null. */
function recordedEnd(dir: string): RunRecord | null {
  try {
    const r = readRecord(dir);
    return r.status === 'done' ? r : null;
  } catch {
    return null;
  }
}

/** A hook's timeout, then the KILL 2 s later, and a margin for the supervisor to leave. */
function hookBoundMs(r: RunRecord): number {
  return (r.hookTimeoutSec + 5) * 1000;
}

function stateOf(engine: JobEngine, jobId: string): JobState | null {
  try {
    return engine.lookup(false).state(jobId);
  } catch {
    // The engine cannot be asked now: the job counts as not ended, and is cancelled (bounded) anyway.
    return { id: jobId, phase: 'running', state: 'UNKNOWN', reason: null };
  }
}

/** Asks the engine every 100 ms until `done` holds or the time is up; the last state seen. */
async function until(engine: JobEngine, jobId: string, ms: number, done: (j: JobState | null) => boolean): Promise<JobState | null> {
  const end = monotonicMs() + ms;
  let job = stateOf(engine, jobId);
  while (!done(job) && monotonicMs() < end) {
    await sleep(100);
    job = stateOf(engine, jobId);
  }
  return job;
}

/** A run whose start command is still submitting it: its job id, once recorded (null: never). */
async function jobIdOnceSubmitted(dir: string): Promise<string | null> {
  const end = monotonicMs() + SUBMIT_MS;
  for (;;) {
    const r = readRecord(dir);
    const id = r.executor.jobId;
    if (id !== null || r.status === 'done' || monotonicMs() > end) return id;
    await sleep(100);
  }
}
