import { monotonicMs, sleep } from '../base/time.js';
import type { ProcessIdentity } from './identity.js';
import { signalAll, signalIdentity } from './signal.js';
import { stillAlive, type Seen } from './tree.js';

/** Waits until none of `seen` is alive, or the time is up; returns what still lives. */
export async function waitGone(seen: Seen[], ms: number): Promise<Seen[]> {
  const end = monotonicMs() + ms;
  let alive = stillAlive(seen);
  while (alive.length && monotonicMs() < end) {
    await sleep(20);
    alive = stillAlive(alive);
  }
  return alive;
}

/** How a run's processes are stopped: its first signal, and to whom. */
export interface Stop {
  signal: NodeJS.Signals;
  /** The first signal goes to every process of the run and their groups; else to the agent alone (a CLI that ends its own tools on it). */
  wholeTree: boolean;
  agent: ProcessIdentity | null;
  /** How long the processes get after the first signal before TERM and KILL. */
  graceMs: number;
}

/**
 * Whether a stop's first signal goes to every process of the run: KILL always; else when the CLI's own
 * graceful signal is TERM. A CLI that ends on INT ends its own tools: it alone gets the first signal.
 */
export function firstSignalToWholeTree(signal: NodeJS.Signals, graceful: NodeJS.Signals): boolean {
  return signal === 'SIGKILL' || graceful === 'SIGTERM';
}

/**
 * Stops a run's processes (`seen`, and what `snapshot` finds of the run later): the first signal, the
 * grace, then TERM (when the first was neither TERM nor KILL) and KILL to whatever remains. Returns how
 * many processes the first signal reached and the last processes seen.
 */
export async function stopRun(seen: Seen[], snapshot: () => Seen[], s: Stop): Promise<{ signalled: number; seen: Seen[] }> {
  let signalled = 0;
  if (s.wholeTree) signalled += signalAll(seen, s.signal, true);
  else if (s.agent) signalled += signalIdentity(s.agent, s.signal) ? 1 : 0;
  let left = await waitGone(seen, s.signal === 'SIGKILL' ? 1000 : s.graceMs);
  if (left.length || snapshot().length) {
    seen = [...left, ...snapshot()];
    if (s.signal !== 'SIGTERM' && s.signal !== 'SIGKILL') {
      signalAll(seen, 'SIGTERM', true);
      left = await waitGone(seen, 1000);
      seen = [...left, ...snapshot()];
    }
    signalAll(seen, 'SIGKILL', true);
    await waitGone(seen, 2000);
  }
  return { signalled, seen };
}
