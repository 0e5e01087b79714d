import { SubagentError } from '../base/errors.js';
import { nameNotFound, validateName } from '../registry/names.js';
import { latestRun, readRecord, runDir } from '../registry/store.js';
import type { Placement } from '../registry/record.js';

/**
 * `--after NAME[,NAME…]` (docs/contract.md, "Runs that follow runs"): the names a new run waits for,
 * checked at the start's entrance — each a name of this registry, none of them the run's own, and no
 * cycle through the runs that are still waiting — so that a refused start changes nothing.
 */

/** The options of start and resume that make a run follow others. */
export interface AfterOptions {
  /** Names whose latest runs must be done first; each entry may be a comma list. */
  after?: string[] | undefined;
  /** Follow them whatever their outcome (default: only when each succeeded). */
  afterAny?: boolean | undefined;
}

/** The names of `--after` (repeatable, each a comma list; on a batch line a string or an array), each valid, once, in order. */
export function afterNames(given: readonly string[] | undefined): string[] {
  const names: string[] = [];
  for (const part of (given ?? []).flatMap((g) => g.split(','))) {
    const name = validateName(part.trim());
    if (!names.includes(name)) names.push(name);
  }
  return names;
}

/**
 * Refuses a dependency that cannot be waited for: a name this registry does not hold (`E_NAME_NOT_FOUND`:
 * a name of another registry is not one of this one's), and a cycle (`E_ARG_INVALID`, `details.cycle`):
 * the run's own name, or a name whose latest run still waits, through the runs it waits for, on this one.
 */
export function checkDependencies(registry: string, name: string, after: readonly string[]): void {
  if (after.includes(name)) throw cycleError(name, after, [name, name]);
  for (const dep of after) if (latestRun(registry, dep) === null) throw nameNotFound(dep, registry);
  for (const dep of after) {
    const cycle = pathTo(registry, dep, name, [name]);
    if (cycle) throw cycleError(name, after, cycle);
  }
}

function cycleError(name: string, after: readonly string[], cycle: string[]): SubagentError {
  return new SubagentError('E_ARG_INVALID', `--after would make a cycle: ${cycle.join(' → ')}`, {
    name,
    after,
    cycle,
    hint: 'a run cannot wait, directly or through others, for itself: drop the name that closes the cycle',
  });
}

/**
 * A run placed on a job engine that follows only runs of the same engine: the jobs of those not done yet,
 * for the engine to hold this one's job until they end (Slurm's --dependency=afterany), so that no job
 * slot is held while it waits; its supervisor still tells their outcomes. Empty when that is not exact —
 * a followed run that is local, or whose job id is not recorded yet: its supervisor then waits in its job.
 */
export function engineDependencies(registry: string, after: readonly string[], placement: Placement): string[] {
  if (placement.name === 'local') return [];
  const jobs: string[] = [];
  for (const name of after) {
    const run = latestRun(registry, name);
    if (run === null) return [];
    try {
      const r = readRecord(runDir(registry, name, run));
      if (r.status === 'done') continue;
      if (r.executor.name !== placement.name || r.executor.jobId === null) return [];
      jobs.push(r.executor.jobId);
    } catch {
      return [];
    }
  }
  return jobs;
}

/** The chain of waiting runs from `from` to `target` (prefixed by `path`), or null when there is none. */
function pathTo(registry: string, from: string, target: string, path: string[], seen = new Set<string>()): string[] | null {
  if (from === target) return [...path, from];
  if (seen.has(from)) return null;
  seen.add(from);
  for (const next of stillWaitingFor(registry, from)) {
    const found = pathTo(registry, next, target, [...path, from], seen);
    if (found) return found;
  }
  return null;
}

/** What a name's latest run still waits for: nothing once it started or ended, or when it cannot be read. */
function stillWaitingFor(registry: string, name: string): string[] {
  const run = latestRun(registry, name);
  if (run === null) return [];
  try {
    const r = readRecord(runDir(registry, name, run));
    return r.status === 'done' ? [] : r.waitingFor;
  } catch {
    return [];
  }
}
