import type { JobEngine } from './jobs.js';
import { slurm } from './slurm.js';

/**
 * Where a run's supervisor is placed (`--executor`, SUBAGENT_EXECUTOR, recorded in the run's record):
 * `local`, a detached process of this machine (lib/supervisor/spawn.ts), or a job of a batch system.
 * Adding an engine is adding its module beside lib/proc/slurm.ts and its name here.
 */
export const EXECUTOR_NAMES = ['local', 'slurm'] as const;
export type ExecutorName = (typeof EXECUTOR_NAMES)[number];

const ENGINES: Record<Exclude<ExecutorName, 'local'>, JobEngine> = { slurm };

/** The job engine of an executor; null for `local`. */
export function jobEngine(name: ExecutorName): JobEngine | null {
  return name === 'local' ? null : ENGINES[name];
}

export function isExecutorName(value: string): value is ExecutorName {
  return (EXECUTOR_NAMES as readonly string[]).includes(value);
}
