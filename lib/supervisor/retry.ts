import { existsSync } from 'node:fs';
import { monotonicMs, sleep } from '../base/time.js';
import type { Log } from './log.js';

/** The wait between two tries of a write the disk refused: doubling from the first to the last. */
const FIRST_WAIT_MS = 50;
const LAST_WAIT_MS = 2000;
/** A refusal that goes on is logged again this often, not at every try. */
const SAY_AGAIN_MS = 60_000;

/**
 * Runs `attempt` until it works: a record update or a read that failed on the run's own disk (ENOSPC,
 * EIO, EROFS, a lock that could not be written) is tried again, the event loop free in between, so the
 * caps, the time cap and the stall watch go on while the disk refuses (docs/reliability.md). It gives up
 * only when the run's directory is gone (removed by hand: nothing is left to write to).
 */
export async function untilItLands<T>(dir: string, what: string, attempt: () => T | Promise<T>, log: Log): Promise<T> {
  let wait = FIRST_WAIT_MS;
  let tries = 0;
  let saidAt = -Infinity;
  const since = monotonicMs();
  for (;;) {
    try {
      const done = await attempt();
      if (tries > 0) log(`${what}: done after ${tries + 1} tries (${Math.round((monotonicMs() - since) / 100) / 10} s)`);
      return done;
    } catch (err) {
      tries++;
      if (!existsSync(dir)) throw err;
      if (monotonicMs() - saidAt >= SAY_AGAIN_MS) {
        saidAt = monotonicMs();
        log(`${what} failed (trying again until it works): ${(err as Error).message}`);
      }
    }
    await sleep(wait);
    wait = Math.min(LAST_WAIT_MS, wait * 2);
  }
}
