import { SubagentError } from '../base/errors.js';
import { EXECUTOR_NAMES, isExecutorName, jobEngine, type ExecutorName } from '../proc/engines.js';
import { findOnPath } from '../proc/path.js';
import { refusedArg } from '../proc/slurm.js';
import type { Placement } from '../registry/record.js';
import { envSetting } from './settings.js';

/** What start, resume and batch lines take about where a run's supervisor goes. */
export interface ExecutorOptions {
  /** local (default) or slurm; default SUBAGENT_EXECUTOR (resume: the run's own executor). */
  executor?: string | undefined;
  /** Options passed through to the engine's submission (`--slurm-arg`, repeatable); resume: the run's. */
  executorArgs?: string[] | undefined;
}

/**
 * The placement a new run records, resolved at the command's entrance: the option, else the earlier
 * run's (a resume), else SUBAGENT_EXECUTOR, else local. Checked before anything is written: a name
 * that is no executor, engine options for `local`, options that would break the run (a requeue, an
 * array), and an engine whose submit program is not on PATH.
 */
export function placementFrom(o: ExecutorOptions, env: NodeJS.ProcessEnv, earlier: Placement | null = null): Placement {
  const name = executorName(o.executor ?? earlier?.name ?? envSetting(env, 'executor', executorName) ?? 'local');
  const args = o.executorArgs ?? (earlier?.name === name ? earlier.args : []);
  const engine = jobEngine(name);
  if (!engine) {
    if (args.length) throw new SubagentError('E_ARG_INVALID', '--slurm-arg needs --executor slurm', { hint: 'add --executor slurm, or drop --slurm-arg' });
    return { name, args: [], jobId: null };
  }
  const refused = refusedArg(args);
  if (refused !== null) {
    throw new SubagentError('E_ARG_INVALID', `--slurm-arg ${refused} cannot be passed through: a run is one job, submitted once`, {
      value: refused,
      hint: 'drop it (docs/scaling.md lists what subagents sets itself and what it refuses)',
    });
  }
  if (!findOnPath(engine.submitProgram, env)) {
    throw new SubagentError('E_CMD_MISSING', `--executor ${name} needs ${engine.submitProgram}, which is not on PATH`, {
      program: engine.submitProgram,
      executor: name,
      hint: `run it where the ${name} client commands are installed, or put them on PATH`,
    });
  }
  // Only the caller's options can make the engine refuse a run: they are checked with it, once.
  const refusal = args.length ? engine.refusal(args, env) : null;
  if (refusal !== null) {
    throw new SubagentError('E_ARG_INVALID', `${name} refuses the --slurm-arg options: ${refusal}`, {
      value: args,
      hint: 'fix or drop the --slurm-arg options (sinfo shows the partitions and their limits); nothing was recorded',
    });
  }
  return { name, args, jobId: null };
}

/** An executor's name, checked; `source` names the variable it came from. */
function executorName(name: string, source?: string): ExecutorName {
  if (isExecutorName(name)) return name;
  throw new SubagentError('E_ARG_INVALID', `${source ? `${source} ` : ''}"${name}" is not an executor`, {
    value: name,
    hint: `give --executor ${EXECUTOR_NAMES.join(' or ')} (or SUBAGENT_EXECUTOR)`,
  });
}

/**
 * The registry's concurrency limit counts this machine's supervisors: a run placed on a job engine is
 * limited by the engine's own limits instead (docs/scaling.md), so --max-concurrent (and the free-memory
 * floor, --min-free-memory) is refused with it, and SUBAGENT_MAX_CONCURRENT does not apply to it.
 */
export function checkLimitFor(placement: Placement, maxConcurrent: number | undefined, minFreeMemory?: number): void {
  if (placement.name === 'local') return;
  const flag = maxConcurrent !== undefined ? '--max-concurrent' : minFreeMemory !== undefined ? '--min-free-memory' : null;
  if (flag === null) return;
  throw new SubagentError('E_ARG_INVALID', `${flag} limits this machine's runs; a run placed on ${placement.name} is limited by ${placement.name}`, {
    hint: `drop ${flag}, and use ${placement.name}'s own limits (docs/scaling.md, "How many at once")`,
  });
}
