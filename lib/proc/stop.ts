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

/** How to stop a run's processes (`stopProcesses`). */
export interface StopPlan {
  /** The run's processes as first seen (non-empty). */
  seen: Seen[];
  /** A new look at the run's processes (a parent-pid walk from the agent, and its marker). */
  snapshot: () => Seen[];
  /** The agent: with `wholeTree` false, the only process the first signal goes to. */
  agent: ProcessIdentity | null;
  signal: NodeJS.Signals;
  /** The first signal to every process of the snapshot and their groups, not to the agent alone. */
  wholeTree: boolean;
  /** How long the first signal is given before TERM, then KILL. */
  graceMs: number;
}

/**
 * The escalation of subagent-cancel, also the supervisor's when it stops a run at a spend cap: the first
 * signal (to the agent alone when it is trusted to stop its own tools, else to the whole tree), a grace,
 * then SIGTERM (when the first was neither TERM nor KILL) and SIGKILL to whatever of the run remains,
 * re-snapshotted each time. Every signal goes only to a process whose identity still matches.
 * Returns how many processes the first signal reached, and the last set of processes seen.
 */
export async function stopProcesses(p: StopPlan): Promise<{ signalled: number; seen: Seen[] }> {
  const { signal, snapshot } = p;
  let seen = p.seen;
  let signalled = 0;
  if (p.wholeTree) signalled += signalAll(seen, signal, true);
  else if (p.agent) signalled += signalIdentity(p.agent, signal) ? 1 : 0;
  let left = await waitGone(seen, signal === 'SIGKILL' ? 1000 : p.graceMs);
  if (left.length || snapshot().length) {
    seen = [...left, ...snapshot()];
    if (signal !== 'SIGTERM' && signal !== 'SIGKILL') {
      signalAll(seen, 'SIGTERM', true);
      left = await waitGone(seen, 1000);
      seen = [...left, ...snapshot()];
    }
    signalAll(seen, 'SIGKILL', true);
    await waitGone(seen, 2000);
  }
  return { signalled, seen };
}
