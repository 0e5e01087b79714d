import { readFileSync } from 'node:fs';

/**
 * Guarantee 4: a process is "the one we recorded" only if its pid exists, it is not a zombie, and its
 * start time (field 22 of /proc/<pid>/stat, in clock ticks since boot) and the boot id match.
 */
export interface ProcessIdentity {
  pid: number;
  startTime: string;
  bootId: string;
}

export interface ProcStat {
  pid: number;
  comm: string;
  state: string;
  ppid: number;
  pgid: number;
  sid: number;
  startTime: string;
}

let cachedBootId: string | undefined;

export function bootId(): string {
  if (cachedBootId === undefined) {
    try {
      cachedBootId = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
    } catch {
      cachedBootId = 'unknown-boot';
    }
  }
  return cachedBootId;
}

/** Parses /proc/<pid>/stat; the command name may hold spaces and ")" so fields are read after the last ")". */
export function parseStat(text: string): ProcStat | null {
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

export function readStat(pid: number): ProcStat | null {
  try {
    return parseStat(readFileSync(`/proc/${pid}/stat`, 'latin1'));
  } catch {
    return null;
  }
}

export function identityOf(pid: number): ProcessIdentity | null {
  const stat = readStat(pid);
  if (!stat || stat.state === 'Z' || stat.state === 'X') return null;
  return { pid, startTime: stat.startTime, bootId: bootId() };
}

export function sameProcess(id: ProcessIdentity, stat: ProcStat | null): boolean {
  return stat !== null && stat.state !== 'Z' && stat.state !== 'X' && stat.startTime === id.startTime && id.bootId === bootId();
}

export function isAlive(id: ProcessIdentity | null | undefined): boolean {
  if (!id || !Number.isInteger(id.pid) || id.pid <= 0) return false;
  if (id.bootId !== bootId()) return false;
  return sameProcess(id, readStat(id.pid));
}

export function isIdentity(value: unknown): value is ProcessIdentity {
  const v = value as ProcessIdentity;
  return typeof v === 'object' && v !== null && Number.isInteger(v.pid) && typeof v.startTime === 'string' && typeof v.bootId === 'string';
}

export function selfIdentity(): ProcessIdentity {
  const id = identityOf(process.pid);
  if (!id) throw new Error('cannot read /proc/self/stat: subagents needs Linux /proc');
  return id;
}
