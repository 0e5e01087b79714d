import { closeSync, openSync, readdirSync, readFileSync, readSync } from 'node:fs';
import type { ProcBackend, ProcStat } from './types.js';
import { readStartTime } from './start-time.js';

/**
 * The Linux backend: /proc. Start times are field 22 of /proc/<pid>/stat (clock ticks since boot,
 * exact to the tick); the boot id is /proc/sys/kernel/random/boot_id.
 */
export interface LinuxStat extends ProcStat {
  sid: number;
  /** utime + stime + cutime + cstime (fields 14–17), in clock ticks. */
  cpuTicks: number;
  /** The resident set size (field 24), in pages. */
  rssPages: number;
}

/**
 * Parses /proc/<pid>/stat; the command name may hold spaces and ")" so fields are read after the last ")".
 * Only the fields used are cut out (fields 3–6, 14–17, 22, 24): a walk of /proc parses every process's.
 */
export function parseStat(text: string): LinuxStat | null {
  const open = text.indexOf('(');
  const close = text.lastIndexOf(')');
  if (open === -1 || close === -1) return null;
  // f[0] is field 3 (state); field N is f[N - 3].
  const f: string[] = [];
  for (let at = close + 2, i = 0; i <= 21 && at <= text.length; i++) {
    const end = text.indexOf(' ', at);
    const stop = end === -1 ? text.length : end;
    f.push(i <= 3 || (i >= 11 && i <= 14) || i === 19 || i === 21 ? text.slice(at, stop) : '');
    at = stop + 1;
  }
  const pid = Number(text.slice(0, open).trim());
  const startTime = f[19];
  if (!Number.isInteger(pid) || startTime === undefined) return null;
  return {
    pid,
    comm: text.slice(open + 1, close),
    state: f[0] || '?',
    ppid: Number(f[1]),
    pgid: Number(f[2]),
    sid: Number(f[3]),
    startTime: startTime.trimEnd(),
    cpuTicks: Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]),
    rssPages: Number(f[21] ?? 0) || 0,
  };
}

/**
 * One buffer for every stat read: /proc files have no size, so readFileSync would take a 64 KiB buffer
 * for each, and a walk of /proc (the supervisor's stall checks, every few seconds) would leave MBs of
 * them for the collector. A stat line is well under 4 KiB (52 numbers and a 64-byte name at most).
 */
const statBuffer = Buffer.alloc(4096);

export function readStat(pid: number): LinuxStat | null {
  let fd: number;
  try {
    fd = openSync(`/proc/${pid}/stat`, 'r');
  } catch {
    return null;
  }
  try {
    const n = readSync(fd, statBuffer, 0, statBuffer.length, 0);
    return parseStat(statBuffer.toString('latin1', 0, n));
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
}

const gone = (s: ProcStat | null): s is null => s === null || s.state === 'Z' || s.state === 'X';

let cachedBootId: string | undefined;

function bootId(): string {
  if (cachedBootId === undefined) {
    try {
      cachedBootId = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
    } catch {
      cachedBootId = 'unknown-boot';
    }
  }
  return cachedBootId;
}

/**
 * /proc's start times count USER_HZ ticks: 100 a second on every architecture Node runs on (what
 * sysconf(_SC_CLK_TCK) returns, and what procps divides by).
 */
const TICKS_PER_SECOND = 100;

/** The boot time in seconds since the epoch (`btime` of /proc/stat), read each time: a clock step moves it. */
function bootTime(): number | null {
  try {
    const m = /^btime (\d+)$/m.exec(readFileSync('/proc/stat', 'latin1'));
    return m ? Number(m[1]) : null;
  } catch {
    return null;
  }
}

/** A start time in ticks as `ps -o lstart` shows it on Linux: procps computes btime + ticks / Hertz, truncated. */
export function epochOfTicks(ticks: string, btime: number): number {
  return btime + Math.floor(Number(ticks) / TICKS_PER_SECOND);
}

let cachedPageSize: number | undefined;

/**
 * The size of a page, which /proc's RSS counts: Node has no getpagesize(), but its own RSS
 * (process.memoryUsage.rss()) is libuv's reading of the same field of /proc/self/stat times the page size,
 * so the two, read back to back, give it (rounded to a power of two: a page or two may come and go
 * between the reads). 4 KiB when it cannot be read.
 */
export function pageSize(): number {
  if (cachedPageSize === undefined) {
    const pages = readStat(process.pid)?.rssPages ?? 0;
    const bytes = process.memoryUsage.rss();
    cachedPageSize = pages > 0 && bytes > 0 ? 2 ** Math.round(Math.log2(bytes / pages)) : 4096;
  }
  return cachedPageSize;
}

/** MemAvailable of /proc/meminfo, in bytes: the kernel's estimate of what new work can take without swapping. */
function memAvailable(): number | null {
  try {
    const m = /^MemAvailable:\s+(\d+) kB$/m.exec(readFileSync('/proc/meminfo', 'latin1'));
    return m ? Number(m[1]) * 1024 : null;
  } catch {
    return null;
  }
}

function hasMarker(pid: number, marker: string): boolean {
  try {
    const env = readFileSync(`/proc/${pid}/environ`, 'latin1');
    return env.startsWith(marker + '\0') || env.includes('\0' + marker + '\0') || env.endsWith('\0' + marker);
  } catch {
    return false;
  }
}

function allStats(): LinuxStat[] {
  const out: LinuxStat[] = [];
  for (const entry of readdirSync('/proc')) {
    if (entry.charCodeAt(0) < 48 || entry.charCodeAt(0) > 57) continue;
    const stat = readStat(Number(entry));
    if (!gone(stat)) out.push(stat);
  }
  return out;
}

export const linux: ProcBackend = {
  name: 'linux',
  bootId,
  identityOf(pid) {
    const stat = readStat(pid);
    return gone(stat) ? null : { pid, startTime: stat.startTime, bootId: bootId() };
  },
  liveness(id) {
    const recorded = readStartTime(id.startTime);
    const stat = readStat(id.pid);
    if (recorded.clock === 'gone' || gone(stat)) return 'dead';
    if (recorded.clock === 'ticks') return stat.startTime === recorded.ticks ? 'alive' : 'dead';
    if (recorded.clock === 'epoch') {
      // Written by the ps backend: compare in its unit, whole seconds (so a pid reused within the same
      // second would pass, as it would for that backend).
      const btime = bootTime();
      if (btime === null) return 'unchecked';
      return epochOfTicks(stat.startTime, btime) === recorded.seconds ? 'alive' : 'dead';
    }
    return 'unchecked';
  },
  processes: allStats,
  cpuTimes() {
    return allStats().map((s) => ({ pid: s.pid, ppid: s.ppid, cpuMs: (s.cpuTicks * 1000) / TICKS_PER_SECOND }));
  },
  memory() {
    const page = pageSize();
    return allStats().map((s) => ({ pid: s.pid, ppid: s.ppid, rssBytes: s.rssPages * page }));
  },
  availableMemory: memAvailable,
  marked(procs, marker) {
    return procs.filter((p) => p.pid !== process.pid && hasMarker(p.pid, marker));
  },
  forget() {},
};
