import { backend } from './backend.js';
import { subtree } from './subtree.js';

/**
 * The CPU time (ms) used so far by each process of a tree: `root` and its descendants by parent pid,
 * from one look. Empty when `root` is gone. The caller vouches for `root` (the supervisor's own
 * unreaped child: its pid cannot have been reused).
 */
export function treeCpu(root: number): Map<number, number> {
  return new Map(subtree(root, backend().cpuTimes()).map((p) => [p.pid, p.cpuMs]));
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
