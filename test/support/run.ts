/**
 * Running a program (a verb, or anything else) and reading what it printed: the one JSON line of the
 * contract, and the assertions every success and every failure line must meet.
 *
 * Sync and async both exist on purpose: a synchronous run is the plain way for a test that does one
 * thing at a time; an asynchronous one keeps the event loop turning, which tests that run side by
 * side, poll in the background, or talk to a fake server living in this process need.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';

export type Verb = 'start-subagent' | 'resume-subagent' | 'status' | 'result' | 'search' | 'cancel' | 'dash';

export interface RunOut {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** The one JSON line stdout must hold (undefined when it is plain text or more than one line). */
  json: any;
}

export interface RunOpts {
  input?: string | Buffer;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** How long the program may take before it counts as a hang (killed, by pid). */
  timeoutMs?: number;
}

/** A synchronous run's bound: a hang detector, not a budget. */
const SYNC_RUN_MS = 120_000;
/** An asynchronous run's bound: longer, as an agent CLI's wait (SUBAGENT_WAIT_TIMEOUT_SEC=240 in e2e) goes through it. */
const ASYNC_RUN_MS = 300_000;

/** The one JSON line of `stdout`; throws when it is not exactly one line. */
export function parseOneLine(stdout: string): any {
  const lines = stdout.split('\n');
  if (lines.length !== 2 || lines[1] !== '') throw new Error(`expected exactly one line on stdout, got ${lines.length - 1}: ${stdout.slice(0, 500)}`);
  return JSON.parse(lines[0]!);
}

function outOf(code: number | null, signal: NodeJS.Signals | null, stdout: string, stderr: string): RunOut {
  let json: any;
  try {
    json = parseOneLine(stdout);
  } catch {
    json = undefined;
  }
  return { code, signal, stdout, stderr, json };
}

/** Runs `path` to its end, synchronously. */
export function runProgram(path: string, args: string[], opts: RunOpts & { cwd: string; env: NodeJS.ProcessEnv }): RunOut {
  const r = spawnSync(path, args, {
    cwd: opts.cwd,
    env: opts.env,
    input: opts.input ?? '',
    encoding: 'utf8',
    maxBuffer: 256 * 1024 * 1024,
    timeout: opts.timeoutMs ?? SYNC_RUN_MS,
  });
  if (r.error) throw r.error;
  return outOf(r.status, r.signal, r.stdout, r.stderr);
}

/** A program started in the background: its pid (to watch it), its output so far, and its outcome. */
export interface Spawned {
  child: ChildProcess;
  pid: number;
  /** What it has written to stdout so far. */
  stdout(): string;
  /** Its outcome, with the milliseconds from the spawn to its end. */
  done: Promise<RunOut & { ms: number }>;
  settled: () => boolean;
}

export function spawnProgram(path: string, args: string[], opts: { cwd: string; env: NodeJS.ProcessEnv; input?: string | Buffer }): Spawned {
  const t0 = Date.now();
  const child = spawn(path, args, { cwd: opts.cwd, env: opts.env, stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  let isSettled = false;
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  // A program that exits without reading its stdin must not fail the test with EPIPE.
  child.stdin!.on('error', () => undefined);
  const done = new Promise<RunOut & { ms: number }>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => {
      isSettled = true;
      resolve({ ...outOf(code, signal, stdout, stderr), ms: Date.now() - t0 });
    });
  });
  child.stdin!.end(opts.input ?? '');
  return { child, pid: child.pid!, stdout: () => stdout, done, settled: () => isSettled };
}

/** The outcome of `s` if it ends within `ms` of now; else null, and `s` is killed (SIGKILL, by its pid). */
export async function doneWithin(s: Spawned, ms: number): Promise<(RunOut & { ms: number }) | null> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((r) => (timer = setTimeout(() => r('late'), ms)));
  const r = await Promise.race([s.done, late]);
  clearTimeout(timer);
  if (r !== 'late') return r;
  try {
    process.kill(s.pid, 'SIGKILL');
  } catch {
    /* gone meanwhile */
  }
  return null;
}

/** Runs `path` to its end without blocking the event loop; a run that outlives its bound is killed (by pid) and fails. */
export async function runProgramAsync(path: string, args: string[], opts: RunOpts & { cwd: string; env: NodeJS.ProcessEnv }): Promise<RunOut> {
  const limit = opts.timeoutMs ?? ASYNC_RUN_MS;
  const r = await doneWithin(spawnProgram(path, args, opts), limit);
  if (!r) throw new Error(`${path} ${args.join(' ').slice(0, 200)} did not end within ${limit} ms (a hang)`);
  return r;
}

/** The contract of every success: one JSON line, ok:true, exit 0. Returns the line. */
export function assertOk(r: RunOut, what = ''): any {
  const ctx = `${what} stdout=${r.stdout.slice(0, 1500)} stderr=${r.stderr.slice(0, 1500)}`;
  assert.notEqual(r.json, undefined, `expected one JSON line; ${ctx}`);
  assert.equal(r.json.ok, true, ctx);
  assert.equal(r.code, 0, ctx);
  return r.json;
}

/** The contract of every failure: one JSON line, ok:false, the code, a sentence, details.hint, the exit code (124 for E_WAIT_TIMEOUT). Returns the line. */
export function assertError(r: RunOut, code: string, exitCode = code === 'E_WAIT_TIMEOUT' ? 124 : 1): any {
  const ctx = `stdout=${r.stdout.slice(0, 1500)} stderr=${r.stderr.slice(0, 800)}`;
  assert.notEqual(r.json, undefined, `expected one JSON line; ${ctx}`);
  assert.equal(r.json.ok, false, ctx);
  assert.equal(r.json.code, code, ctx);
  assert.equal(r.code, exitCode, ctx);
  assert.equal(typeof r.json.error, 'string', ctx);
  assert.ok(r.json.error.length > 0, ctx);
  assert.equal(typeof r.json.details, 'object', ctx);
  assert.equal(typeof r.json.details.hint, 'string', ctx);
  assert.ok(r.json.details.hint.length > 0, ctx);
  return r.json;
}

/** An ISO 8601 UTC time as the records hold them. */
export const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;
