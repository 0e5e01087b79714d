import { readdirSync, readFileSync } from 'node:fs';
import { bootId, readStat, sameProcess, type ProcStat, type ProcessIdentity } from './identity.js';

/** One process as seen in a snapshot: enough to find it again and to prove it is still the same one. */
export interface Seen extends ProcessIdentity {
  ppid: number;
  pgid: number;
  sid: number;
  comm: string;
}

export function allProcesses(): ProcStat[] {
  const out: ProcStat[] = [];
  for (const entry of readdirSync('/proc')) {
    if (entry.charCodeAt(0) < 48 || entry.charCodeAt(0) > 57) continue;
    const stat = readStat(Number(entry));
    if (stat && stat.state !== 'Z' && stat.state !== 'X') out.push(stat);
  }
  return out;
}

function hasMarker(pid: number, marker: string): boolean {
  try {
    const env = readFileSync(`/proc/${pid}/environ`, 'latin1');
    return env.startsWith(marker + '\0') || env.includes('\0' + marker + '\0') || env.endsWith('\0' + marker);
  } catch {
    return false;
  }
}

/**
 * The run's processes right now: every descendant of the roots (a parent-pid walk, which follows tool
 * processes into their own sessions and groups) and every process whose environment carries the run's
 * marker (which also finds what was re-parented away from the tree). Roots are included when alive.
 */
export function snapshotRun(roots: ProcessIdentity[], marker: string | null, exclude: ReadonlySet<number> = new Set()): Seen[] {
  const procs = allProcesses();
  const byParent = new Map<number, ProcStat[]>();
  for (const p of procs) {
    const list = byParent.get(p.ppid);
    if (list) list.push(p);
    else byParent.set(p.ppid, [p]);
  }
  const found = new Map<number, ProcStat>();
  const queue: ProcStat[] = [];
  for (const root of roots) {
    const stat = procs.find((p) => p.pid === root.pid);
    if (stat && sameProcess(root, stat)) queue.push(stat);
  }
  if (marker) for (const p of procs) if (p.pid !== process.pid && hasMarker(p.pid, marker)) queue.push(p);
  while (queue.length) {
    const p = queue.shift()!;
    if (found.has(p.pid) || exclude.has(p.pid) || p.pid === process.pid) continue;
    found.set(p.pid, p);
    for (const child of byParent.get(p.pid) ?? []) queue.push(child);
  }
  const boot = bootId();
  return [...found.values()].map((p) => ({ pid: p.pid, startTime: p.startTime, bootId: boot, ppid: p.ppid, pgid: p.pgid, sid: p.sid, comm: p.comm }));
}

export function stillAlive(seen: Seen[]): Seen[] {
  return seen.filter((s) => sameProcess(s, readStat(s.pid)));
}
