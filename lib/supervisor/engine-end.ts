import { readRecord } from '../registry/store.js';
import type { RunRecord } from '../registry/record.js';
import { sleep } from '../base/time.js';

/**
 * A supervisor placed on a job engine (Slurm) gets SIGTERM in two ways: from `cancel`, which records its
 * intent first and then signals the job's one process, and from the engine itself, which ends the job
 * (its time limit, a preemption, a cancel by someone else) by signalling every process of the job. The
 * second is not ours to explain: the supervisor leaves at once without a record, and `status` reports
 * the run `unknown` with the engine's own state and reason (TIMEOUT, TimeLimit…) — docs/scaling.md.
 */

/** The supervisor's exit code when the engine ended its job: 128 + SIGTERM, as if the signal had ended it. */
export const ENGINE_END_EXIT = 143;

export function placedOnEngine(r: RunRecord): boolean {
  return r.executor !== undefined && r.executor.name !== 'local';
}

export function cancelRequested(dir: string): boolean {
  try {
    return readRecord(dir).cancel !== null;
  } catch {
    return false;
  }
}

/** The graceful signal a recorded cancel asked for (INT or TERM), or null (none recorded, or KILL). */
export function askedSignal(dir: string): 'SIGINT' | 'SIGTERM' | null {
  try {
    const signal = readRecord(dir).cancel?.signal;
    return signal === 'SIGINT' || signal === 'SIGTERM' ? signal : null;
  } catch {
    return null;
  }
}

/**
 * The engine signals the agent and the supervisor at about the same moment, so the agent's death may be
 * seen first. An agent ended by a signal that no cancel asked for, on an engine: the engine's SIGTERM
 * to the supervisor gets a moment to arrive (the handler then leaves) before the end is recorded.
 */
export async function engineEndGrace(dir: string): Promise<void> {
  if (!cancelRequested(dir)) await sleep(1000);
}
