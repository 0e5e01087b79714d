import { backend } from './backend.js';
import { bootId, liveness, type ProcStat, type ProcessIdentity } from './identity.js';
import { readStartTime } from './start-time.js';
import { indexed } from './subtree.js';

/** One process as seen in a snapshot: enough to find it again and to prove it is still the same one. */
export interface Seen extends ProcessIdentity {
  ppid: number;
  pgid: number;
  comm: string;
}

/**
 * The run's processes right now: every descendant of the roots (a parent-pid walk, which follows tool
 * processes into their own sessions and groups) and, where the backend can read environments (Linux),
 * every process whose environment carries the run's marker (which also finds what was re-parented away
 * from the tree). Roots are included when proven alive: one this backend cannot check is left out, so
 * it is never signalled. The ps backend cannot read environments: there only the walk finds processes.
 * `groups`: process groups whose members belong to the run too (an exited agent's group: its background
 * children stay in it, re-parented away from the walk) — taken only while no live process holds the
 * group's pid, which then would be a new one that reused it. `bornSince`: a start time (of the run's
 * agent) before which no process of the run can have started; the marker is then looked for only in
 * processes started since (reading every process's environment is most of a snapshot's cost).
 */
export function snapshotRun(
  roots: ProcessIdentity[],
  marker: string | null,
  exclude: ReadonlySet<number> = new Set(),
  groups: readonly number[] = [],
  bornSince: string | null = null,
): Seen[] {
  const b = backend();
  if (roots.length === 0 && groups.length === 0 && (marker === null || !b.marked)) return [];
  const procs = b.processes();
  const { byPid, byParent } = indexed(procs);
  const found = new Map<number, ProcStat>();
  const queue: ProcStat[] = [];
  for (const root of roots) {
    const stat = byPid.get(root.pid);
    if (stat && liveness(root) === 'alive') queue.push(stat);
  }
  if (marker && b.marked) queue.push(...b.marked(bornSince === null ? procs : procs.filter((p) => !startedBefore(p.startTime, bornSince)), marker));
  for (const g of groups) if (!byPid.has(g)) for (const p of procs) if (p.pgid === g) queue.push(p);
  while (queue.length) {
    const p = queue.shift()!;
    if (found.has(p.pid) || exclude.has(p.pid) || p.pid === process.pid) continue;
    found.set(p.pid, p);
    for (const child of byParent.get(p.pid) ?? []) queue.push(child);
  }
  const boot = bootId();
  return [...found.values()].map((p) => ({ pid: p.pid, startTime: p.startTime, bootId: boot, ppid: p.ppid, pgid: p.pgid, comm: p.comm }));
}

/** Whether start time `a` is before `b`, when both are in the same comparable form (else false: not known to be). */
function startedBefore(a: string, b: string): boolean {
  const x = readStartTime(a);
  const y = readStartTime(b);
  if (x.clock === 'ticks' && y.clock === 'ticks') return Number(x.ticks) < Number(y.ticks);
  if (x.clock === 'epoch' && y.clock === 'epoch') return x.seconds < y.seconds;
  return false;
}

export function stillAlive(seen: Seen[]): Seen[] {
  return seen.filter((s) => liveness(s) === 'alive');
}
