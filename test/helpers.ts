import assert from 'node:assert/strict';
import { spawn, spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, readlinkSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { TEST_KNOBS } from '../lib/base/checkpoint.js';
import { readStat } from '../lib/proc/linux.js';

/** The test-only variables of lib/base/checkpoint.ts: a sandbox starts without them; a test sets them per call. */
export { TEST_KNOBS };

/** The repository root (tests run from dist/test/…, the executables live in bin/). */
export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const BIN = join(ROOT, 'bin');

export type Verb = 'start-subagent' | 'resume-subagent' | 'status' | 'result' | 'search' | 'cancel';

export interface RunOut {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** The one JSON line stdout must hold (undefined when it is plain text). */
  json: any;
}

export interface Sandbox {
  dir: string;
  registry: string;
  env: NodeJS.ProcessEnv;
  run(verb: Verb, args: string[], opts?: { input?: string | Buffer; env?: NodeJS.ProcessEnv; cwd?: string; timeoutMs?: number }): RunOut;
  runAsync(verb: Verb, args: string[], opts?: { input?: string | Buffer; env?: NodeJS.ProcessEnv; cwd?: string }): Promise<RunOut>;
  cleanup(): void;
}

export function parseOneLine(stdout: string): any {
  const lines = stdout.split('\n');
  if (lines.length !== 2 || lines[1] !== '') throw new Error(`expected exactly one line on stdout, got ${lines.length - 1}: ${stdout.slice(0, 500)}`);
  return JSON.parse(lines[0]!);
}

function finish(r: { status: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }): RunOut {
  let json: any;
  try {
    json = parseOneLine(r.stdout);
  } catch {
    json = undefined;
  }
  return { code: r.status, signal: r.signal, stdout: r.stdout, stderr: r.stderr, json };
}

/** A temp directory with its own registry and HOME; every run of a verb uses them. */
export function sandbox(prefix = 'subagents-test-'): Sandbox {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
  const registry = join(dir, 'registry');
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    HOME: dir,
    SUBAGENT_DIR: registry,
    SUBAGENT_CANCEL_GRACE_MS: '1500',
  };
  for (const k of ['SUBAGENT_CLI', 'SUBAGENT_MODEL', 'SUBAGENT_VARIANT', 'SUBAGENT_WAIT_TIMEOUT_SEC', 'SUBAGENT_PARENT', 'SUBAGENT_DEPTH', 'SUBAGENT_RUN_ID', 'OPENCODE_PSA_DIR', 'OPENCODE_PSA_MODEL', 'OPENCODE_PSA_VARIANT', 'OPENCODE_PSA_WAIT_TIMEOUT_SEC', 'NO_COLOR', ...TEST_KNOBS]) delete env[k];
  const box: Sandbox = {
    dir,
    registry,
    env,
    run(verb, args, opts = {}) {
      const r: SpawnSyncReturns<string> = spawnSync(join(BIN, verb), args, {
        cwd: opts.cwd ?? dir,
        env: { ...env, ...opts.env },
        input: opts.input ?? '',
        encoding: 'utf8',
        maxBuffer: 256 * 1024 * 1024,
        timeout: opts.timeoutMs ?? 120_000,
      });
      if (r.error) throw r.error;
      return finish(r);
    },
    runAsync(verb, args, opts = {}) {
      return new Promise((resolve, reject) => {
        const child = spawn(join(BIN, verb), args, { cwd: opts.cwd ?? dir, env: { ...env, ...opts.env }, stdio: ['pipe', 'pipe', 'pipe'] });
        let stdout = '';
        let stderr = '';
        child.stdout.setEncoding('utf8').on('data', (d) => (stdout += d));
        child.stderr.setEncoding('utf8').on('data', (d) => (stderr += d));
        child.on('error', reject);
        child.on('close', (status, signal) => resolve(finish({ status, signal, stdout, stderr })));
        child.stdin.end(opts.input ?? '');
      });
    },
    cleanup() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return box;
}

/** Polls a condition until it holds or the deadline passes (never a fixed sleep). */
export async function until<T>(what: string, fn: () => T | undefined | null | false, timeoutMs = 20_000, everyMs = 20): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/**
 * until() for a condition only a live run can meet (its tool running, its session known): gives up at once
 * when the run's record says done, and either way the error carries the record and the end of the run's
 * stderr. The deadline is generous because an agent CLI's boot on a loaded CI machine can take tens of
 * seconds; a run that ended early fails fast, so the deadline is only reached by a real hang.
 */
export async function untilInRun<T>(what: string, runDir: string, fn: () => T | undefined | null | false, timeoutMs = 120_000): Promise<T> {
  const start = Date.now();
  const record = (): any => {
    try {
      return readJson(join(runDir, 'record.json'));
    } catch {
      return null; // not written yet
    }
  };
  const state = (): string => {
    let err = '';
    try {
      err = readFileSync(join(runDir, 'stderr.log'), 'utf8').slice(-2000);
    } catch {
      /* none */
    }
    return `after ${Date.now() - start} ms; record: ${JSON.stringify(record())}; stderr: ${err || '(empty)'}`;
  };
  for (;;) {
    const v = fn();
    if (v) return v;
    if (record()?.status === 'done' && !fn()) throw new Error(`the run ended before ${what}: ${state()}`);
    if (Date.now() - start > timeoutMs) throw new Error(`timed out waiting for ${what}: ${state()}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** The suite runs with the portable process backend forced (SUBAGENT_PROC_BACKEND=ps, lib/proc/ps.ts). */
export const PS_BACKEND = process.env.SUBAGENT_PROC_BACKEND === 'ps';

/** The skip reason of a test that holds only where the backend reads environments (the run marker). */
export const NEEDS_ENVIRON =
  'the ps process backend cannot read environments, so nothing is found by the run marker SUBAGENT_RUN_ID (docs/platforms.md)';

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

/** True while `pid` is stopped (SIGSTOP), e.g. a verb holding still at a SUBAGENT_TEST_PAUSE_AT checkpoint. */
export const isStopped = (pid: number): boolean => readStat(pid)?.state === 'T';
export const procPpid = (pid: number): number | null => readStat(pid)?.ppid ?? null;
export const procPgid = (pid: number): number | null => readStat(pid)?.pgid ?? null;
export const procSid = (pid: number): number | null => readStat(pid)?.sid ?? null;

export function pidAlive(pid: number): boolean {
  const state = readStat(pid)?.state;
  return state !== undefined && state !== 'Z' && state !== 'X';
}

/** Pids of live processes whose environment holds `needle` (e.g. a marker a test put there). */
export function pidsWithEnv(needle: string): number[] {
  const out: number[] = [];
  for (const e of readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    try {
      if (readFileSync(`/proc/${e}/environ`, 'latin1').split('\0').includes(needle) && pidAlive(Number(e))) out.push(Number(e));
    } catch {
      /* gone or not ours */
    }
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

export function readJson(path: string): any {
  return JSON.parse(readFileSync(path, 'utf8'));
}

/** Ends every process a test started that still lives, by pid (never by name). */
export function killPids(pids: number[]): void {
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      /* gone */
    }
  }
}

/** True once `pid` has an inotify descriptor: a waiter has taken its first look and is watching. */
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

/**
 * A test that cannot run here because a tool or program is missing: a skip that prints the reason on a
 * developer's machine, a failure under CI (CI set, as every CI service does), where `make test` installs
 * what the tests need and nothing may pass by skipping.
 */
export function skipUnlessCi(t: { skip(message?: string): void }, why: string): void {
  const ci = process.env.CI;
  if (ci && !/^(0|false)$/i.test(ci)) assert.fail(`${why}. CI is set, so this test must run, not skip`);
  t.skip(why);
}
