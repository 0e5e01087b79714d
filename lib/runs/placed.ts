import { liveness } from '../proc/identity.js';
import { jobEngine, type ExecutorName } from '../proc/engines.js';
import type { JobLookup, JobState } from '../proc/jobs.js';
import type { Placement, RunRecord, Status } from '../registry/record.js';

/**
 * The job states one look at the registry uses: each engine is asked once, at its first question
 * (`batched`: for every job of this user, for a listing of many runs; else job by job). Liveness of a
 * run placed on a job engine comes from here, never from /proc of this host.
 */
export class JobViews {
  private readonly lookups = new Map<ExecutorName, JobLookup>();

  constructor(private readonly batched: boolean) {}

  /** The job's state; null when the engine no longer knows it. Throws when the engine cannot be asked. */
  state(placement: Placement & { jobId: string }): JobState | null {
    let lookup = this.lookups.get(placement.name);
    if (!lookup) {
      lookup = jobEngine(placement.name)!.lookup(this.batched);
      this.lookups.set(placement.name, lookup);
    }
    return lookup.state(placement.jobId);
  }
}

/** What a job-placed run that is not recorded done really is, and whether its record must be read again. */
export interface JobVerdict {
  status: Status;
  statusReason: string | null;
  /** Processes of the run may be alive (cancel has something to do). */
  alive: boolean;
  /** The job is over (or unknown to the engine): a `done` record written meanwhile wins. */
  ended: boolean;
  job: JobState | null;
}

/**
 * A run placed on a job engine, not recorded done: pending → `scheduled` with the engine's reason;
 * running → as recorded; ended without the supervisor's record (node failure, time limit, out of
 * memory, a cancel by someone else) → `unknown` with the engine's state and reason. Before the job id is
 * recorded, the start command vouches for it, as for a local run.
 */
export function jobVerdict(r: RunRecord, placement: Placement, views: JobViews, dir: string): JobVerdict {
  const engine = placement.name;
  if (placement.jobId === null) {
    if (liveness(r.starter) !== 'dead') return { status: r.status, statusReason: `being submitted to ${engine}`, alive: false, ended: false, job: null };
    return {
      status: 'unknown',
      statusReason: `the start command ended before the ${engine} job was submitted`,
      alive: false,
      ended: true,
      job: null,
    };
  }
  const jobId = placement.jobId;
  let job: JobState | null;
  try {
    job = views.state({ ...placement, jobId });
  } catch (err) {
    return {
      status: r.status,
      statusReason: `${engine} could not be asked about job ${jobId} (${(err as Error).message}); the run may still be ${r.status}`,
      alive: true,
      ended: false,
      job: null,
    };
  }
  if (job === null) {
    return {
      status: 'unknown',
      statusReason: `${engine} no longer knows job ${jobId}, and the supervisor recorded no end${neverStarted(r, dir)}`,
      alive: false,
      ended: true,
      job,
    };
  }
  const why = job.reason ? `, reason ${job.reason}` : '';
  switch (job.phase) {
    case 'pending':
      return { status: 'scheduled', statusReason: `${engine} job ${jobId} is pending${job.reason ? ` (${job.reason})` : ''}`, alive: false, ended: false, job };
    case 'running':
      return { status: r.status, statusReason: job.state === 'RUNNING' ? null : `${engine} job ${jobId} is ${job.state}`, alive: true, ended: false, job };
    case 'ending':
      return { status: r.status, statusReason: `${engine} job ${jobId} is ending (${job.state}${why})`, alive: true, ended: false, job };
    default:
      return {
        status: 'unknown',
        statusReason: `${engine} job ${jobId} ended (${job.state}${why}) without the supervisor's record${neverStarted(r, dir)}`,
        alive: false,
        ended: true,
        job,
      };
  }
}

/** A job that ended before its supervisor recorded anything: most often a node that cannot see the registry. */
function neverStarted(r: RunRecord, dir: string): string {
  return r.status === 'scheduled' && r.supervisor === null
    ? `; its supervisor never recorded the run: is the registry on a filesystem the node sees? (the job's output is ${dir}/supervisor.log)`
    : '';
}
