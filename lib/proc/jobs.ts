import { SubagentError } from '../base/errors.js';
import { childProcess } from './child-process.js';

/**
 * A batch system that runs a run's supervisor as a job of its own (docs/scaling.md): Slurm today,
 * Kubernetes Jobs on the same interface next. The local executor is not one: its supervisor is a
 * process of this machine, looked at by identity (lib/proc/identity.ts). An engine only runs its
 * own commands and reads their text; what a job's state means for a run is lib/runs/placed.ts's.
 */
export interface JobEngine {
  readonly name: string;
  /** The program that submits, whose absence is E_CMD_MISSING before anything is recorded. */
  readonly submitProgram: string;
  /**
   * The engine's refusal of the caller's options, in its words, or null when it would take them: asked
   * before anything is recorded, so that a bad option changes nothing. Null too when the engine cannot
   * be asked (the submission then says so).
   */
  refusal(args: readonly string[], env: NodeJS.ProcessEnv): string | null;
  /** Submits a job whose one process is `command` (exec'd); returns the job id. */
  submit(job: JobSpec): string;
  /** States of jobs, from one query per lookup (see JobLookup). */
  lookup(batched: boolean): JobLookup;
  /** The graceful signal to the job's one process (the supervisor). Never for a job not running. */
  signal(jobId: string, signal: 'TERM'): void;
  /** Ends the job (a pending one is only removed from the queue). */
  cancel(jobId: string): void;
}

export interface JobSpec {
  /** Says which run: shown by the engine's own tools. */
  name: string;
  /** The argv of the job's one process. */
  command: string[];
  /** Its working directory on the node. */
  cwd: string;
  /** Its environment, whole. */
  env: NodeJS.ProcessEnv;
  /** Where the job's stdout and stderr go (a file in the run's directory). */
  output: string;
  /** The caller's own options for the engine, passed through (--slurm-arg). */
  args: string[];
  /** Jobs of this engine that must end (whatever their outcome) before this one may start. */
  after?: string[];
}

/** Where a job is in its life, the engine's words aside. */
export type JobPhase = 'pending' | 'running' | 'ending' | 'ended';

export interface JobState {
  id: string;
  phase: JobPhase;
  /** The engine's own state name (PENDING, RUNNING, TIMEOUT, NODE_FAIL, …). */
  state: string;
  /** The engine's reason (Priority, Resources, TimeLimit, …), or null when it gives none. */
  reason: string | null;
}

/**
 * Job states for one listing: the first question asks the engine once, every later one is answered
 * from that answer. `batched`: the first question asks for every job of this user (a listing of many
 * runs); otherwise for that one job. A job the engine no longer knows is null; when the engine cannot
 * be asked, `state` throws the reason (the caller reports the run as recorded, with that reason).
 */
export interface JobLookup {
  state(jobId: string): JobState | null;
}

/** Runs one of the engine's commands, bounded: a controller that does not answer must not hang a verb. */
export function runBounded(
  program: string,
  args: string[],
  o: { env?: NodeJS.ProcessEnv; input?: string; timeoutMs: number },
): { status: number | null; stdout: string; stderr: string; error: string | null } {
  const r = childProcess().spawnSync(program, args, {
    env: o.env ?? process.env,
    input: o.input ?? '',
    timeout: o.timeoutMs,
    killSignal: 'SIGKILL',
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  // EPIPE: it exited without reading its input (an option it refused first); its status and stderr say why.
  const failed = r.error && (r.error as NodeJS.ErrnoException).code !== 'EPIPE' ? r.error : null;
  const error = failed
    ? (failed as NodeJS.ErrnoException).code === 'ETIMEDOUT'
      ? `${program} did not answer within ${o.timeoutMs / 1000} s`
      : `${program}: ${failed.message}`
    : null;
  return { status: r.status, stdout: r.stdout ?? '', stderr: r.stderr ?? '', error };
}

/** The engine refused a submission, or could not be asked: nothing of the run was placed. */
export function engineFailed(engine: string, what: string, details: Record<string, unknown>, hint: string): SubagentError {
  return new SubagentError('E_EXECUTOR_FAILED', `${engine}: ${what}`, { executor: engine, ...details, hint });
}
