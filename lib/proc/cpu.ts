import { backend } from './backend.js';

/**
 * The CPU time (ms) used so far by each process of a tree: `root` and its descendants by parent pid,
 * from one look. Empty when `root` is gone. The caller vouches for `root` (the supervisor's own
 * unreaped child: its pid cannot have been reused).
 */
export function treeCpu(root: number): Map<number, number> {
  const procs = backend().cpuTimes();
  const byParent = new Map<number, number[]>();
  const cpu = new Map<number, number>();
  for (const p of procs) {
    cpu.set(p.pid, p.cpuMs);
    const list = byParent.get(p.ppid);
    if (list) list.push(p.pid);
    else byParent.set(p.ppid, [p.pid]);
  }
  const out = new Map<number, number>();
  const queue = cpu.has(root) ? [root] : [];
  while (queue.length) {
    const pid = queue.pop()!;
    if (out.has(pid)) continue;
    out.set(pid, cpu.get(pid)!);
    queue.push(...(byParent.get(pid) ?? []));
  }
  return out;
}

/**
 * CPU used between two looks at a tree: what each process that was there before added, and all of a
 * process new since (a pid whose count went down is a new process on a reused pid).
 */
export function cpuUsedSince(before: Map<number, number>, now: Map<number, number>): number {
  let used = 0;
  for (const [pid, ms] of now) {
    const was = before.get(pid);
    used += was === undefined || ms < was ? ms : ms - was;
  }
  return used;
}
