import { readdirSync, readFileSync } from 'node:fs';
import type { ProcBackend } from './backend.js';
import type { ProcStat } from './identity.js';
import { readStartTime } from './start-time.js';

/**
 * The Linux backend: /proc. Start times are field 22 of /proc/<pid>/stat (clock ticks since boot,
 * exact to the tick); the boot id is /proc/sys/kernel/random/boot_id.
 */
export interface LinuxStat extends ProcStat {
  sid: number;
}

/** Parses /proc/<pid>/stat; the command name may hold spaces and ")" so fields are read after the last ")". */
export function parseStat(text: string): LinuxStat | null {
  const open = text.indexOf('(');
  const close = text.lastIndexOf(')');
  if (open === -1 || close === -1) return null;
  const fields = text.slice(close + 2).split(' ');
  // fields[0] is field 3 (state); field N is fields[N - 3].
  const pid = Number(text.slice(0, open).trim());
  const startTime = fields[19];
  if (!Number.isInteger(pid) || startTime === undefined) return null;
  return {
    pid,
    comm: text.slice(open + 1, close),
    state: fields[0] ?? '?',
    ppid: Number(fields[1]),
    pgid: Number(fields[2]),
    sid: Number(fields[3]),
    startTime,
  };
}

export function readStat(pid: number): LinuxStat | null {
  try {
    return parseStat(readFileSync(`/proc/${pid}/stat`, 'latin1'));
  } catch {
    return null;
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

function hasMarker(pid: number, marker: string): boolean {
  try {
    const env = readFileSync(`/proc/${pid}/environ`, 'latin1');
    return env.startsWith(marker + '\0') || env.includes('\0' + marker + '\0') || env.endsWith('\0' + marker);
  } catch {
    return false;
  }
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
  processes() {
    const out: ProcStat[] = [];
    for (const entry of readdirSync('/proc')) {
      if (entry.charCodeAt(0) < 48 || entry.charCodeAt(0) > 57) continue;
      const stat = readStat(Number(entry));
      if (!gone(stat)) out.push(stat);
    }
    return out;
  },
  marked(procs, marker) {
    return procs.filter((p) => p.pid !== process.pid && hasMarker(p.pid, marker));
  },
  forget() {},
};
