/**
 * Shared code of the fault-injection suite (test/fault/*.test.ts, issue 5).
 *
 * Every test makes its own box: a temp directory with its own registry and HOME, and a marker
 * (`SUBAGENTS_FAULT_BOX=<dir>`) in the environment of every process started through it — verbs,
 * supervisors, agents and whatever they spawn — so that cleanup ends exactly the processes the test
 * started, by pid (never by name). Verbs run asynchronously (the event loop stays free for tests that
 * run side by side) and are killed by pid if they outlive a generous deadline.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, readdirSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { BIN, ROOT, TEST_KNOBS, isStopped, killPids, parseOneLine, pidAlive, pidsWithEnv, procPgid, procPpid, procSid, until, type RunOut, type Verb } from '../helpers.js';
import { encodeName } from '../../lib/registry/names.js';

export { BIN, ROOT, isStopped, killPids, parseOneLine, pidAlive, pidsWithEnv, procPgid, procPpid, procSid, until };
export type { RunOut, Verb };

export const MARK_KEY = 'SUBAGENTS_FAULT_BOX';
/** Generous deadlines: the suite runs next to other test files on a loaded 2-core machine. */
export const LONG = 60_000;
export const WAIT_SEC = '60';
/** "Noticed within about a second" is asserted as "noticed within this". */
export const NOTICE_MS = 5_000;

export interface RunOpts {
  input?: string | Buffer;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  timeoutMs?: number;
}

export interface Box {
  dir: string;
  registry: string;
  env: NodeJS.ProcessEnv;
  marker: string;
  /** Pids the test started itself (e.g. an unrelated `sleep`), killed at cleanup. */
  own: number[];
  run(verb: Verb, args: string[], opts?: RunOpts): Promise<RunOut>;
  /** The synchronous variant, for the few places that must not yield. */
  runSync(verb: Verb, args: string[], opts?: RunOpts): RunOut;
  spawn(verb: Verb, args: string[], opts?: RunOpts): Spawned;
  cleanup(): Promise<void>;
}

export interface Spawned {
  child: ChildProcess;
  pid: number;
  done: Promise<RunOut>;
  settled: () => boolean;
}

function finish(code: number | null, signal: NodeJS.Signals | null, stdout: string, stderr: string): RunOut {
  let json: any;
  try {
    json = parseOneLine(stdout);
  } catch {
    json = undefined;
  }
  return { code, signal, stdout, stderr, json };
}

/** A fresh box under `base` (default: the OS temp dir; `/dev/shm` for fsync-heavy tests). */
export function makeBox(label: string, base = tmpdir()): Box {
  const dir = realpathSync(mkdtempSync(join(base, `subagents-fault-${label}-`)));
  const registry = join(dir, 'registry');
  const marker = `${MARK_KEY}=${dir}`;
  const env: NodeJS.ProcessEnv = { ...process.env, HOME: dir, SUBAGENT_DIR: registry, SUBAGENT_CANCEL_GRACE_MS: '1500', [MARK_KEY]: dir };
  for (const k of ['SUBAGENT_CLI', 'SUBAGENT_MODEL', 'SUBAGENT_VARIANT', 'SUBAGENT_WAIT_TIMEOUT_SEC', 'SUBAGENT_PARENT', 'SUBAGENT_DEPTH', 'SUBAGENT_RUN_ID', 'SUBAGENT_NAME', 'SUBAGENT_RUN', 'SUBAGENT_MAX_CONCURRENT', 'SUBAGENT_MAX_DEPTH', 'OPENCODE_PSA_DIR', 'OPENCODE_PSA_MODEL', 'OPENCODE_PSA_VARIANT', 'OPENCODE_PSA_WAIT_TIMEOUT_SEC', 'NO_COLOR', ...TEST_KNOBS]) delete env[k];
  const box: Box = {
    dir,
    registry,
    env,
    marker,
    own: [],
    spawn(verb, args, opts = {}) {
      return spawnVerb(join(BIN, verb), args, { ...opts, cwd: opts.cwd ?? dir, env: { ...env, ...opts.env } });
    },
    async run(verb, args, opts = {}) {
      const s = box.spawn(verb, args, opts);
      const limit = opts.timeoutMs ?? 120_000;
      let timer: NodeJS.Timeout | undefined;
      const timedOut = new Promise<'timeout'>((r) => (timer = setTimeout(() => r('timeout'), limit)));
      const r = await Promise.race([s.done, timedOut]);
      clearTimeout(timer);
      if (r === 'timeout') {
        killPids([s.pid]);
        throw new Error(`${verb} ${args.join(' ').slice(0, 200)} did not end within ${limit} ms (a hang)`);
      }
      return r;
    },
    runSync(verb, args, opts = {}) {
      const r = spawnSync(join(BIN, verb), args, {
        cwd: opts.cwd ?? dir,
        env: { ...env, ...opts.env },
        input: opts.input ?? '',
        encoding: 'utf8',
        maxBuffer: 256 * 1024 * 1024,
        timeout: opts.timeoutMs ?? 120_000,
      });
      if (r.error) throw r.error;
      return finish(r.status, r.signal, r.stdout, r.stderr);
    },
    async cleanup() {
      await reap(marker, box.own);
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return box;
}

/** Runs `fn` with a fresh box; always ends the box's processes (by pid) and removes it. */
export async function withBox<T>(label: string, fn: (b: Box) => Promise<T>, base?: string): Promise<T> {
  const b = makeBox(label, base);
  try {
    return await fn(b);
  } finally {
    await b.cleanup();
  }
}

/** Kills (SIGKILL, by pid) every live process carrying the marker, and the pids given. */
export async function reap(marker: string, own: number[] = []): Promise<void> {
  killPids(own);
  const end = Date.now() + 15_000;
  for (;;) {
    const pids = pidsWithEnv(marker);
    if (pids.length === 0 || Date.now() > end) break;
    killPids(pids);
    await new Promise((r) => setTimeout(r, 30));
  }
}

export function spawnVerb(path: string, args: string[], opts: RunOpts & { cwd: string; env: NodeJS.ProcessEnv; detached?: boolean }): Spawned {
  const child = spawn(path, args, { cwd: opts.cwd, env: opts.env, stdio: ['pipe', 'pipe', 'pipe'], detached: opts.detached ?? false });
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  let isSettled = false;
  child.stdout!.on('data', (d: Buffer) => out.push(d));
  child.stderr!.on('data', (d: Buffer) => err.push(d));
  child.stdin!.on('error', () => undefined);
  const done = new Promise<RunOut>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => {
      isSettled = true;
      resolve(finish(code, signal, Buffer.concat(out).toString('utf8'), Buffer.concat(err).toString('utf8')));
    });
  });
  child.stdin!.end(opts.input ?? '');
  return { child, pid: child.pid!, done, settled: () => isSettled };
}

/** Starts a process the test owns (in its own process group), carrying the box's marker. */
export function own(b: Box, cmd: string, args: string[], extraEnv: NodeJS.ProcessEnv = {}): number {
  const child = spawn(cmd, args, { stdio: 'ignore', detached: true, env: { ...b.env, ...extraEnv } });
  child.on('error', () => undefined);
  child.unref();
  b.own.push(child.pid!);
  return child.pid!;
}

export function shellArgs(name: string, script: string, extra: string[] = []): string[] {
  return ['--name', name, '--cli', 'shell', '--prompt', script, ...extra];
}

/** start-subagent --cli shell, asserted ok. */
export async function startShell(b: Box, name: string, script: string, opts: RunOpts = {}, extra: string[] = []): Promise<any> {
  const r = await b.run('start-subagent', shellArgs(name, script, extra), opts);
  assert.equal(r.code, 0, `start ${name} failed: ${r.stdout}${r.stderr}`);
  assert.equal(r.json?.ok, true, r.stdout);
  return r.json;
}

/** status --name, asserted to be one ok line; the agent (or undefined). */
export async function statusOf(b: Box, name: string, opts: RunOpts = {}): Promise<any> {
  const r = await b.run('status', ['--name', name], opts);
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assert.equal(r.json?.ok, true, r.stdout);
  assert.ok(r.json.agents.length <= 1);
  return r.json.agents[0];
}

export async function untilStatus(b: Box, name: string, pred: (a: any) => boolean, what: string, timeoutMs = LONG): Promise<any> {
  const end = Date.now() + timeoutMs;
  let last: any;
  for (;;) {
    last = await statusOf(b, name);
    if (last && pred(last)) return last;
    if (Date.now() > end) throw new Error(`timed out after ${timeoutMs} ms waiting for ${name}: ${what}; last: ${JSON.stringify(last)}`);
    await new Promise((r) => setTimeout(r, 40));
  }
}

/**
 * Waits until no process of the box runs any more, except those the test started itself (`own`). A
 * run's supervisor outlives the record saying "done" by a moment: it still removes its record.lock and
 * leaves the queue. A snapshot of the files (listTree, strays, bytes) is only stable after this.
 */
export async function quiet(b: Box, timeoutMs = LONG): Promise<void> {
  await until('every process of the box has exited', () => pidsWithEnv(b.marker).every((p) => b.own.includes(p)), timeoutMs, 25).catch(() => {
    throw new Error(`processes of the box still run: ${pidsWithEnv(b.marker).filter((p) => !b.own.includes(p)).join(' ')}`);
  });
}

/** status --wait-terminal on the names, asserted ok; the agents by name. */
export async function waitTerminal(b: Box, names: string[], opts: RunOpts = {}): Promise<Record<string, any>> {
  const r = await b.run('status', ['--wait-terminal', '--timeout', WAIT_SEC, ...names.flatMap((n) => ['--name', n])], opts);
  assert.equal(r.code, 0, `wait-terminal ${names.join(',')} failed: ${r.stdout}${r.stderr}`);
  assert.equal(r.json.ok, true);
  return Object.fromEntries(r.json.agents.map((a: any) => [a.name, a]));
}

/** A script line that blocks until `file` exists. */
export function gate(file: string): string {
  return `while [ ! -e '${file}' ]; do sleep 0.05; done`;
}

export function open(file: string): void {
  writeFileSync(file, '');
}

/** The run directory of run `run` of `name`. */
export function runDirOf(registry: string, name: string, run = 1): string {
  return join(registry, 'agents', encodeName(name), String(run));
}

export function recordOf(registry: string, name: string, run = 1): any {
  return JSON.parse(readFileSync(join(runDirOf(registry, name, run), 'record.json'), 'utf8'));
}

/** Every file and directory under `root` (relative paths), sorted. */
export function listTree(root: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    let entries: string[];
    try {
      entries = readdirSync(d);
    } catch {
      return;
    }
    for (const e of entries) {
      const p = join(d, e);
      out.push(relative(root, p));
      try {
        if (statSync(p).isDirectory()) walk(p);
      } catch {
        /* gone */
      }
    }
  };
  walk(root);
  return out.sort();
}

/** Leftovers of writers: lock files, lock-break files, temp files of records, unpublished new names and runs. */
export function strays(registry: string): string[] {
  return listTree(registry).filter((p) => {
    const base = p.split('/').pop()!;
    return /\.lock$|\.break$|\.tmp-/.test(base) || /^tmp\/new-/.test(p) || /^\.new-/.test(base);
  });
}

/** Every record.json under the registry, parsed (or the parse error). */
export function allRecords(registry: string): Array<{ path: string; record: any; error: string | null }> {
  return listTree(registry)
    .filter((p) => p.endsWith('/record.json'))
    .map((p) => {
      const path = join(registry, p);
      try {
        return { path, record: JSON.parse(readFileSync(path, 'utf8')), error: null };
      } catch (err) {
        return { path, record: null, error: (err as Error).message };
      }
    });
}

export function sha256(data: Buffer | string): string {
  return createHash('sha256').update(data).digest('hex');
}

export function fileSha(path: string): string {
  return sha256(readFileSync(path));
}

export { NEEDS_ENVIRON, PS_BACKEND, laterStartTime, pastThisSecond, procStartTime, startTimeForm } from '../helpers.js';

export function bootId(): string {
  return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
}

export { hasInotify } from '../helpers.js';

/** Pids of live processes whose environment holds `needle` and whose command name is `comm`. */
export function pidsWithEnvComm(needle: string, comm: string): number[] {
  return pidsWithEnv(needle).filter((p) => {
    try {
      return readFileSync(`/proc/${p}/comm`, 'utf8').trim() === comm;
    } catch {
      return false;
    }
  });
}

/** Waits until `pid` is gone (or a zombie). */
export async function untilGone(pid: number, what: string, timeoutMs = LONG): Promise<void> {
  await until(what, () => !pidAlive(pid), timeoutMs, 25);
}

/** Asserts the contract of a failure line: one JSON line, ok:false, the code, a sentence, a hint, the exit code. */
export function assertError(r: RunOut, code: string, exitCode = code === 'E_WAIT_TIMEOUT' ? 124 : 1): any {
  const ctx = `stdout=${r.stdout.slice(0, 1500)} stderr=${r.stderr.slice(0, 800)}`;
  assert.notEqual(r.json, undefined, `expected one JSON line; ${ctx}`);
  assert.equal(r.json.ok, false, ctx);
  assert.equal(r.json.code, code, ctx);
  assert.equal(r.code, exitCode, ctx);
  assert.equal(typeof r.json.error, 'string', ctx);
  assert.equal(typeof r.json.details?.hint, 'string', ctx);
  return r.json;
}

export function assertOk(r: RunOut, what = ''): any {
  const ctx = `${what} stdout=${r.stdout.slice(0, 1500)} stderr=${r.stderr.slice(0, 800)}`;
  assert.notEqual(r.json, undefined, `expected one JSON line; ${ctx}`);
  assert.equal(r.json.ok, true, ctx);
  assert.equal(r.code, 0, ctx);
  return r.json;
}

export function exists(p: string): boolean {
  return existsSync(p);
}

/** Whether a command line works here (used to detect kernel features and tools; never throws). */
export function works(cmd: string, args: string[], timeoutMs = 20_000): boolean {
  const r = spawnSync(cmd, args, { stdio: 'ignore', timeout: timeoutMs });
  return !r.error && r.status === 0;
}

export const FIXTURES = join(ROOT, 'test', 'fixtures');
