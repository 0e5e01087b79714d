/**
 * A process and its descendants by parent pid, from one look at every process: what a run's CPU time
 * (cpu.ts) and memory (memory.ts) are summed over. Empty when `root` is not in the look.
 */
export function subtree<T extends { pid: number; ppid: number }>(root: number, procs: readonly T[]): T[] {
  const { byPid, byParent } = indexed(procs);
  const out = new Map<number, T>();
  const first = byPid.get(root);
  const queue = first ? [first] : [];
  while (queue.length) {
    const p = queue.pop()!;
    if (out.has(p.pid)) continue;
    out.set(p.pid, p);
    queue.push(...(byParent.get(p.pid) ?? []));
  }
  return [...out.values()];
}

/** One look at every process, by pid and by parent pid. */
export function indexed<T extends { pid: number; ppid: number }>(procs: readonly T[]): { byPid: Map<number, T>; byParent: Map<number, T[]> } {
  const byPid = new Map<number, T>();
  const byParent = new Map<number, T[]>();
  for (const p of procs) {
    byPid.set(p.pid, p);
    const list = byParent.get(p.ppid);
    if (list) list.push(p);
    else byParent.set(p.ppid, [p]);
  }
  return { byPid, byParent };
}
