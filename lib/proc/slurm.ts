import { engineFailed, runBounded, type JobEngine, type JobLookup, type JobPhase, type JobSpec, type JobState } from './jobs.js';

/**
 * Slurm as a job engine, through its client commands and their text formats (no JSON: Slurm 22.05's
 * `scontrol` has none and its `squeue --json` ignores `-j`). Measured behaviour: ../shared/SLURM.md
 * and docs/scaling.md.
 */

const SUBMIT_TIMEOUT_MS = 30_000;
const QUERY_TIMEOUT_MS = 10_000;
const CANCEL_TIMEOUT_MS = 10_000;

/** Options of the caller's that would break what the run relies on: refused, not passed through. */
const REFUSED = ['--array', '-a', '--requeue', '--wrap'];

/** Single-quoted for /bin/sh. */
function shQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/** The batch script: the supervisor exec'd, so that it is the job's one process and gets its signals. */
export function batchScript(command: string[]): string {
  return `#!/bin/sh\nexec ${command.map(shQuote).join(' ')}\n`;
}

/** The caller's options first, ours last: where both set one, ours win (sbatch takes the last). */
export function sbatchArgs(job: JobSpec): string[] {
  return [
    ...job.args,
    '--parsable',
    // A requeued job would start a second supervisor for the run after a node failure.
    '--no-requeue',
    `--job-name=${job.name}`,
    `--chdir=${job.cwd}`,
    '--export=ALL',
    `--output=${job.output}`,
    '--open-mode=append',
    // afterany, not afterok: a supervisor exits 0 whatever its run's outcome; it tells that itself (--after).
    ...(job.after?.length ? [`--dependency=afterany:${job.after.join(':')}`] : []),
  ];
}

/** An option of the caller's that cannot be passed through, or null. */
export function refusedArg(args: readonly string[]): string | null {
  return args.find((a) => REFUSED.includes(a.split('=')[0]!) || /^-a./.test(a)) ?? null;
}

const PENDING = new Set(['PENDING', 'REQUEUED', 'REQUEUE_HOLD', 'REQUEUE_FED', 'RESV_DEL_HOLD', 'CONFIGURING']);
const RUNNING = new Set(['RUNNING', 'SUSPENDED', 'STOPPED', 'RESIZING', 'SIGNALING']);
const ENDING = new Set(['COMPLETING', 'STAGE_OUT']);

export function phaseOf(state: string): JobPhase {
  if (PENDING.has(state)) return 'pending';
  if (RUNNING.has(state)) return 'running';
  if (ENDING.has(state)) return 'ending';
  return 'ended';
}

/** `squeue -h -O 'JobID:|,State:|,Reason:|'` lines → states by job id. */
export function parseSqueue(text: string): Map<string, JobState> {
  const out = new Map<string, JobState>();
  for (const line of text.split('\n')) {
    const [id, state, reason] = line.split('|').map((f) => f.trim());
    if (!id || !state) continue;
    out.set(id, { id, phase: phaseOf(state), state, reason: reason && reason !== 'None' ? reason : null });
  }
  return out;
}

const FORMAT = 'JobID:|,State:|,Reason:|';

function query(args: string[]): Map<string, JobState> {
  const r = runBounded('squeue', ['--states=all', '-h', '-O', FORMAT, ...args], { timeoutMs: QUERY_TIMEOUT_MS });
  if (r.error) throw new Error(r.error);
  // One unknown id asked alone is an error (rc 1); in a list it is dropped silently.
  if (r.status !== 0) {
    if (/Invalid job id/i.test(r.stderr)) return new Map();
    throw new Error(`squeue exited ${r.status}: ${r.stderr.trim().split('\n').pop() ?? ''}`);
  }
  return parseSqueue(r.stdout);
}

class SlurmLookup implements JobLookup {
  private known: Map<string, JobState> | null = null;
  private failure: Error | null = null;

  constructor(private readonly batched: boolean) {}

  state(jobId: string): JobState | null {
    if (this.failure) throw this.failure;
    if (this.known === null || (!this.batched && !this.known.has(jobId))) {
      try {
        const got = query(this.batched ? [`--user=${process.getuid?.() ?? ''}`] : [`--jobs=${jobId}`]);
        this.known = this.batched ? got : new Map([...(this.known ?? []), ...got]);
      } catch (err) {
        this.failure = err as Error;
        throw this.failure;
      }
    }
    return this.known.get(jobId) ?? null;
  }
}

/** The options already asked about in this process (a batch gives many runs the same ones). */
const refusals = new Map<string, string | null>();

export const slurm: JobEngine = {
  name: 'slurm',
  submitProgram: 'sbatch',
  refusal(args, env) {
    const key = JSON.stringify(args);
    if (refusals.has(key)) return refusals.get(key) ?? null;
    // --test-only: the controller checks the options (a partition, a time, resources) and submits nothing.
    const r = runBounded('sbatch', ['--test-only', ...args, '--job-name=subagent-check', '--output=/dev/null', '--wrap=true'], {
      env,
      timeoutMs: SUBMIT_TIMEOUT_MS,
    });
    const lines = r.stderr
      .split('\n')
      .map((l) => l.trim())
      .filter(Boolean);
    // Exit 1 or 255 with an error line: refused. A controller that does not answer is not the options' fault.
    const refused = !r.error && r.status !== 0 && !/unable to contact|timed out|connection refused/i.test(r.stderr);
    const said = refused ? (lines.find((l) => /error/i.test(l)) ?? lines[0] ?? `sbatch --test-only exited ${r.status}`).replace(/^sbatch: error: /, '') : null;
    refusals.set(key, said);
    return said;
  },
  submit(job) {
    const r = runBounded('sbatch', sbatchArgs(job), { env: job.env, input: batchScript(job.command), timeoutMs: SUBMIT_TIMEOUT_MS });
    const id = r.stdout.trim().split(';')[0] ?? '';
    if (r.error || r.status !== 0 || !/^[0-9]+$/.test(id)) {
      const said = (r.error ?? r.stderr.trim().split('\n').pop()) || `exit status ${r.status}`;
      throw engineFailed(
        'slurm',
        `sbatch refused the run: ${said}`,
        { program: 'sbatch', args: job.args },
        'the run is recorded as failed (endReason executor-failed); check the --slurm-arg options and that the cluster answers (sinfo), then start it again under a new name',
      );
    }
    return id;
  },
  lookup(batched) {
    return new SlurmLookup(batched);
  },
  signal(jobId, signal) {
    // --batch: only the batch step's main process, the supervisor, which passes the agent its CLI's
    // graceful signal. Never sent to a pending job (scancel retries for ~95 s, then fails).
    runBounded('scancel', [`--signal=${signal}`, '--batch', jobId], { timeoutMs: CANCEL_TIMEOUT_MS });
  },
  cancel(jobId) {
    // Its exit status means little (0 for an ended or unknown job): the caller checks the state.
    runBounded('scancel', [jobId], { timeoutMs: CANCEL_TIMEOUT_MS });
  },
};
