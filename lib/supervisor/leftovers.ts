import type { ProcessIdentity } from '../proc/identity.js';
import { stopRun, waitGone } from '../proc/stop.js';
import { snapshotRun, stillAlive, type Seen } from '../proc/tree.js';
import type { LeftoverProcess } from '../registry/record.js';
import type { Log } from './log.js';

/**
 * How long what the agent left running when it exited gets to end by itself before it is stopped (TERM,
 * then KILL after LEFTOVER_KILL_MS), unless the run keeps it (--keep-children). docs/contract.md.
 */
export const LEFTOVER_GRACE_MS = 2000;
const LEFTOVER_KILL_MS = 1000;

export interface Leftovers {
  runId: string;
  /** The agent that exited (its process group counts), or null. */
  agent: ProcessIdentity | null;
  agentPid: number;
  /** --keep-children: reported, not stopped. */
  keep: boolean;
  /** Given LEFTOVER_GRACE_MS to end by themselves first (not when the run was stopped or cancelled). */
  waits: boolean;
  log: Log;
}

/**
 * What a run left running once its agent exited (its background children, the children of a crashed
 * agent, a daemon the CLI started: what carries the run's marker, and the agent's process group). Kept
 * with --keep-children; else, after the grace, stopped: TERM, KILL. Returns what still lives, for the
 * record (cancel reaches it there).
 */
export async function stopLeftovers(o: Leftovers): Promise<LeftoverProcess[]> {
  const snapshot = () => snapshotRun([], `SUBAGENT_RUN_ID=${o.runId}`, new Set([process.pid]), [o.agentPid], o.agent?.startTime ?? null);
  try {
    let left = unique(snapshot());
    if (left.length === 0) return [];
    const names = (seen: Seen[]) => seen.map((p) => `${p.pid} (${p.comm})`).join(', ');
    if (o.keep) {
      o.log(`the agent left ${names(left)} running: kept (--keep-children)`);
      return left;
    }
    if (o.waits) left = unique([...(await waitGone(left, LEFTOVER_GRACE_MS)), ...snapshot()]);
    if (left.length === 0) return [];
    o.log(`the agent left ${names(left)} running: stopping them`);
    const { seen } = await stopRun(left, snapshot, { signal: 'SIGTERM', wholeTree: true, agent: null, graceMs: LEFTOVER_KILL_MS });
    return unique(stillAlive([...seen, ...snapshot()]));
  } catch (err) {
    o.log(`stopping what the agent left running failed: ${(err as Error).message}`);
    return [];
  }
}

/** Each process once (a snapshot may see one twice), as the record keeps it. */
function unique(seen: Seen[]): LeftoverProcess[] {
  const byPid = new Map(seen.map((p) => [p.pid, { pid: p.pid, startTime: p.startTime, bootId: p.bootId, ppid: p.ppid, pgid: p.pgid, comm: p.comm }]));
  return [...byPid.values()];
}
