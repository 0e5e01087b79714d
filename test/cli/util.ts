/**
 * Shared code of the CLI suite (test/cli/*.test.ts): a sandbox whose every process carries a marker in
 * its environment (so `after` can end exactly the processes this file started, by pid), and helpers
 * for the JSON-line contract.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { after } from 'node:test';
import { BIN, ROOT, isStopped, killPids, parseOneLine, pidAlive, pidsWithEnv, procPgid, procPpid, procSid, readJson, sandbox, until, type RunOut, type Sandbox, type Verb } from '../helpers.js';

export { BIN, ROOT, isStopped, killPids, pidAlive, pidsWithEnv, procPgid, procPpid, procSid, readJson, until };
export type { RunOut, Sandbox, Verb };

export const MARK_KEY = 'SUBAGENTS_CLI_TEST_BOX';
/** Generous deadlines: the suite runs several files at once on a loaded 2-core machine. */
export const LONG = 90_000;
export const WAIT_SEC = '90';

export interface Box extends Sandbox {
  /** `KEY=value` present in the environment of every process started through this box. */
  marker: string;
  /** Processes the test started itself (e.g. a `sleep`), killed in `after`. */
  own: number[];
}

/** A sandbox for one test file (or describe); `after` kills its processes by pid and removes it. */
export function makeBox(label: string): Box {
  const b = sandbox(`subagents-cli-${label}-`) as Box;
  b.env[MARK_KEY] = b.dir;
  b.marker = `${MARK_KEY}=${b.dir}`;
  b.own = [];
  after(async () => {
    await reap(b);
    b.cleanup();
  });
  return b;
}

/** Kills (SIGKILL, by pid) every live process carrying the box's marker, and those the test started. */
export async function reap(b: Box): Promise<void> {
  killPids(b.own);
  const end = Date.now() + 15_000;
  for (;;) {
    const pids = pidsWithEnv(b.marker);
    if (pids.length === 0 || Date.now() > end) break;
    killPids(pids);
    await new Promise((r) => setTimeout(r, 30));
  }
}

export function shellArgs(name: string, script: string, extra: string[] = []): string[] {
  return ['--name', name, '--cli', 'shell', '--prompt', script, ...extra];
}

/** start-subagent --cli shell, asserted ok. */
export function startShell(
  b: Sandbox,
  name: string,
  script: string,
  extra: string[] = [],
  opts: { env?: NodeJS.ProcessEnv; cwd?: string; input?: string | Buffer } = {},
  promptArgs: string[] | null = null,
): any {
  const args = promptArgs ? ['--name', name, '--cli', 'shell', ...promptArgs, ...extra] : shellArgs(name, script, extra);
  const r = b.run('start-subagent', args, opts);
  assert.equal(r.code, 0, `start ${name} failed: ${r.stdout}${r.stderr}`);
  assert.equal(r.json?.ok, true, r.stdout);
  return r.json;
}

/** status --wait-terminal on the names, asserted ok; returns the records by name. */
export function waitTerminal(b: Sandbox, names: string[], opts: { env?: NodeJS.ProcessEnv; cwd?: string } = {}): Record<string, any> {
  const r = b.run('status', ['--wait-terminal', '--timeout', WAIT_SEC, ...names.flatMap((n) => ['--name', n])], opts);
  assert.equal(r.code, 0, `wait-terminal ${names.join(',')} failed: ${r.stdout}${r.stderr}`);
  assert.equal(r.json.ok, true);
  return Object.fromEntries(r.json.agents.map((a: any) => [a.name, a]));
}

export function statusOf(b: Sandbox, name: string, opts: { env?: NodeJS.ProcessEnv; cwd?: string } = {}): any {
  const r = b.run('status', ['--name', name], opts);
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assert.equal(r.json.ok, true);
  assert.ok(r.json.agents.length <= 1);
  return r.json.agents[0];
}

export async function untilStatus(b: Sandbox, name: string, pred: (a: any) => boolean, what: string): Promise<any> {
  return until(`${name}: ${what}`, () => {
    const a = statusOf(b, name);
    return a && pred(a) ? a : undefined;
  }, LONG, 50);
}

/** A script line that blocks until `file` exists (the test creates it when it wants the run to go on). */
export function gate(file: string): string {
  return `while [ ! -e '${file}' ]; do sleep 0.05; done`;
}

export function open(file: string): void {
  writeFileSync(file, '');
}

/** The contract of every failure: one JSON line, ok:false, the code, a sentence, details.hint, the exit code. */
export function assertError(r: RunOut, code: string, exitCode = code === 'E_WAIT_TIMEOUT' ? 124 : 1): any {
  const ctx = `stdout=${r.stdout.slice(0, 800)} stderr=${r.stderr.slice(0, 800)}`;
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

/** Every path under `dir` (relative), ignoring transient lock and temp files of live writers. */
export function tree(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    let entries: string[];
    try {
      entries = readdirSync(d);
    } catch {
      return;
    }
    for (const e of entries) {
      if (/\.tmp-|\.lock$|\.break$/.test(e)) continue;
      const p = join(d, e);
      out.push(relative(dir, p));
      try {
        if (statSync(p).isDirectory()) walk(p);
      } catch {
        /* gone */
      }
    }
  };
  walk(dir);
  return out.sort();
}

/** Runs a verb expecting an error; asserts the contract and that the registry (and the sandbox) did not change. */
export function expectError(b: Sandbox, verb: Verb, args: string[], code: string, opts: { input?: string | Buffer; env?: NodeJS.ProcessEnv; cwd?: string; timeoutMs?: number } = {}): any {
  const before = tree(b.dir);
  const r = b.run(verb, args, opts);
  const json = assertError(r, code);
  assert.deepEqual(tree(b.dir), before, `${verb} ${code} changed the sandbox`);
  return json;
}

export const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

export { NEEDS_ENVIRON, PS_BACKEND, laterStartTime, pastThisSecond, procStartTime, startTimeForm } from '../helpers.js';

export function bootId(): string {
  return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
}

/** Every run directory of the registry (those holding a record.json), with its parsed record. */
export function runDirs(registry: string): Array<{ dir: string; record: any }> {
  const out: Array<{ dir: string; record: any }> = [];
  const walk = (d: string) => {
    let entries: string[];
    try {
      entries = readdirSync(d);
    } catch {
      return;
    }
    if (entries.includes('record.json')) {
      let record: any = null;
      try {
        record = readJson(join(d, 'record.json'));
      } catch {
        record = null;
      }
      out.push({ dir: d, record });
    }
    for (const e of entries) {
      const p = join(d, e);
      try {
        if (statSync(p).isDirectory()) walk(p);
      } catch {
        /* gone */
      }
    }
  };
  walk(registry);
  return out;
}

/** The run directory of run `run` of `name` (found by its record, not by the on-disk encoding of names). */
export function runDirOf(registry: string, name: string, run = 1): string {
  const hit = runDirs(registry).filter((r) => r.record?.name === name && r.record?.run === run);
  assert.equal(hit.length, 1, `expected one run dir for ${name} run ${run}, found ${hit.length}`);
  return hit[0]!.dir;
}

/** A verb started in the background, with its pid (to watch it) and its outcome. */
export interface Spawned {
  child: ChildProcess;
  pid: number;
  done: Promise<RunOut>;
  settled: () => boolean;
}

export function spawnVerb(b: Sandbox, verb: Verb, args: string[], opts: { env?: NodeJS.ProcessEnv; cwd?: string; input?: string } = {}): Spawned {
  const child = spawn(join(BIN, verb), args, { cwd: opts.cwd ?? b.dir, env: { ...b.env, ...opts.env }, stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  let isSettled = false;
  child.stdout!.setEncoding('utf8').on('data', (d) => (stdout += d));
  child.stderr!.setEncoding('utf8').on('data', (d) => (stderr += d));
  const done = new Promise<RunOut>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => {
      isSettled = true;
      let json: any;
      try {
        json = parseOneLine(stdout);
      } catch {
        json = undefined;
      }
      resolve({ code, signal, stdout, stderr, json });
    });
  });
  child.stdin!.end(opts.input ?? '');
  return { child, pid: child.pid!, done, settled: () => isSettled };
}

export { hasInotify } from '../helpers.js';

export function exists(p: string): boolean {
  return existsSync(p);
}

export const FAKE_AGENT = join(ROOT, 'test', 'fixtures', 'fake-agent.mjs');

/** `result --name N` in plain mode, asserted ok (exit 0, nothing on stderr); returns the text. */
export function resultText(b: Sandbox, name: string, opts: { env?: NodeJS.ProcessEnv; cwd?: string } = {}): string {
  const r = b.run('result', ['--name', name], opts);
  assert.equal(r.code, 0, `result ${name}: code ${r.code} stdout=${r.stdout.slice(0, 500)} stderr=${r.stderr.slice(0, 1000)}`);
  return r.stdout;
}

/** `result --name N --json`, asserted to be one ok JSON line. */
export function resultJson(b: Sandbox, name: string): any {
  const r = b.run('result', ['--name', name, '--json']);
  assert.equal(r.code, 0, `result --json ${name}: code ${r.code} stdout=${r.stdout.slice(0, 500)} stderr=${r.stderr.slice(0, 1000)}`);
  assert.equal(r.json?.ok, true, r.stdout.slice(0, 500));
  return r.json;
}
