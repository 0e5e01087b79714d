/**
 * Processes, as /proc shows them: liveness, states, groups and sessions, the processes carrying a
 * marker in their environment, ending processes by pid (never by name), and the start-time forms of
 * the process backend under test (SUBAGENT_PROC_BACKEND=ps records epoch seconds, /proc clock ticks).
 */
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { readStat } from '../../lib/proc/linux.js';
import { LONG, until } from './wait.js';

export function pidAlive(pid: number): boolean {
  const state = readStat(pid)?.state;
  return state !== undefined && state !== 'Z' && state !== 'X';
}

/** True while `pid` is stopped (SIGSTOP), e.g. a verb holding still at a SUBAGENT_TEST_PAUSE_AT checkpoint. */
export const isStopped = (pid: number): boolean => readStat(pid)?.state === 'T';
export const procPpid = (pid: number): number | null => readStat(pid)?.ppid ?? null;
export const procPgid = (pid: number): number | null => readStat(pid)?.pgid ?? null;
export const procSid = (pid: number): number | null => readStat(pid)?.sid ?? null;

/** Waits until `pid` is gone (or a zombie). */
export async function untilGone(pid: number, what: string, timeoutMs = LONG): Promise<void> {
  await until(what, () => !pidAlive(pid), timeoutMs, 25);
}

/** The environment of every process whose environment holds `needle`, `KEY=value` strings, by pid; the living ones. */
function environments(needle: string): Array<{ pid: number; env: string[] }> {
  const out: Array<{ pid: number; env: string[] }> = [];
  for (const e of readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    try {
      const env = readFileSync(`/proc/${e}/environ`, 'latin1').split('\0');
      if (env.includes(needle) && pidAlive(Number(e))) out.push({ pid: Number(e), env });
    } catch {
      /* gone or not ours */
    }
  }
  return out;
}

/** Pids of live processes whose environment holds `needle` (`KEY=value`, e.g. a box's marker). */
export function pidsWithEnv(needle: string): number[] {
  return environments(needle).map((p) => p.pid);
}

/** Run ids (SUBAGENT_RUN_ID) of the live processes carrying `marker` (`KEY=value`) in their environment, with their pids. */
export function liveRunIds(marker: string): Map<string, number[]> {
  const out = new Map<string, number[]>();
  for (const { pid, env } of environments(marker)) {
    const id = env.find((v) => v.startsWith('SUBAGENT_RUN_ID='));
    if (!id) continue;
    const k = id.slice('SUBAGENT_RUN_ID='.length);
    out.set(k, [...(out.get(k) ?? []), pid]);
  }
  return out;
}

/** Living processes (not this one) whose command line, arguments joined by spaces, contains `needle`. */
export function pidsWithCmdline(needle: string): number[] {
  const out: number[] = [];
  for (const e of readdirSync('/proc')) {
    if (!/^\d+$/.test(e) || Number(e) === process.pid) continue;
    try {
      if (readFileSync(`/proc/${e}/cmdline`, 'latin1').split('\0').join(' ').includes(needle) && pidAlive(Number(e))) out.push(Number(e));
    } catch {
      /* gone */
    }
  }
  return out;
}

/** Ends processes a test started, by pid (never by name): SIGKILL to each that still lives. */
export function killPids(pids: number[]): void {
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      /* gone */
    }
  }
}

/** True once `pid` has an inotify descriptor: a waiter or follower has taken its first look and is watching. */
export function hasInotify(pid: number): boolean {
  try {
    for (const fd of readdirSync(`/proc/${pid}/fd`)) {
      try {
        if (readlinkSync(`/proc/${pid}/fd/${fd}`).includes('inotify')) return true;
      } catch {
        /* closed meanwhile */
      }
    }
  } catch {
    /* gone */
  }
  return false;
}

/** This boot's id, as the records hold it. */
export function bootId(): string {
  return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
}

/** The suite runs with the portable process backend forced (SUBAGENT_PROC_BACKEND=ps, lib/proc/ps.ts). */
export const PS_BACKEND = process.env.SUBAGENT_PROC_BACKEND === 'ps';

/** The skip reason of a test that holds only where the backend reads environments (the run marker). */
export const NEEDS_ENVIRON = 'the ps process backend cannot read environments, so nothing is found by the run marker SUBAGENT_RUN_ID (docs/platforms.md)';

/** A start time `n` in the form the backend under test records: clock ticks, or with ps epoch seconds. */
export function startTimeForm(n: number): string {
  return PS_BACKEND ? `epoch:${n}` : String(n);
}

function startValue(t: string): number {
  return Number(t.replace(/^epoch:/, ''));
}

/** Another start time of the same form as `t`, `by` units (ticks or seconds) later. */
export function laterStartTime(t: string, by: number): string {
  return startTimeForm(startValue(t) + by);
}

function bootTime(): number {
  return Number(/^btime (\d+)$/m.exec(readFileSync('/proc/stat', 'latin1'))![1]);
}

/**
 * A process's start time as the backend under test records it, read from /proc: field 22 of its stat
 * (ticks since boot), or with ps the seconds `ps -o lstart` shows — btime + ticks / 100, as procps
 * computes it.
 */
export function procStartTime(pid: number): string | null {
  const ticks = readStat(pid)?.startTime;
  if (ticks === undefined) return null;
  return PS_BACKEND ? startTimeForm(bootTime() + Math.floor(Number(ticks) / 100)) : ticks;
}

/**
 * With the ps backend, waits until a process started now would get a later start second than every
 * process started before the call: ps's start times are whole seconds, so a process that takes a
 * recorded pid within the same second passes for the recorded one (the documented limit; docs/platforms.md).
 * Then a test's "unrelated process on a recorded pid" really is distinguishable. At once with /proc.
 */
export async function pastThisSecond(): Promise<void> {
  if (!PS_BACKEND) return;
  const now = () => Math.floor(Number(readFileSync('/proc/uptime', 'latin1').split(' ')[0]));
  const then = now();
  await until('the next second', () => now() > then, 5_000);
}
