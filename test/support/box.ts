/**
 * Boxes: a temp directory that is the HOME and holds the registry of everything a test runs through
 * it, and a marker (`SUBAGENTS_TEST_BOX=<dir>`) in the environment of every process started through it —
 * verbs, supervisors, agents and whatever they spawn — so that the end of a box ends exactly the
 * processes its test started, by pid (never by name).
 *
 * How long a box lives: `makeBox` for a test file (ended in the file's `after`), `withBox` for one
 * test (ended when its function returns), `testBox` for one test given its context (ended in `t.after`).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after } from 'node:test';
import { TEST_KNOBS } from '../../lib/base/checkpoint.js';
import { BIN, ROOT } from './paths.js';
import { killPids, pidsWithEnv } from './procs.js';
import { runProgram, runProgramAsync, spawnProgram, type RunOpts, type RunOut, type Spawned, type Verb } from './run.js';
import { LONG, until } from './wait.js';

/** Where the verbs run by the tests keep their compile cache. */
export const TEST_CACHE = join(ROOT, 'dist', 'test-cache');

/** The key of every box's marker. */
export const MARK_KEY = 'SUBAGENTS_TEST_BOX';

/**
 * Variables of the caller's environment a box does not pass on: the defaults a user may have set, the
 * variables a run exports to its agent (a test run inside a subagent must not count as nested), and
 * the test-only knobs of lib/base/checkpoint.ts (a test sets them per call).
 */
const NOT_PASSED_ON = [
  'SUBAGENT_CLI',
  'SUBAGENT_MODEL',
  'SUBAGENT_VARIANT',
  'SUBAGENT_WAIT_TIMEOUT_SEC',
  'SUBAGENT_MAX_CONCURRENT',
  'SUBAGENT_MAX_DEPTH',
  'SUBAGENT_STALL_SEC',
  'SUBAGENT_HOOK_TIMEOUT_SEC',
  'SUBAGENT_PARENT',
  'SUBAGENT_DEPTH',
  'SUBAGENT_RUN_ID',
  'SUBAGENT_NAME',
  'SUBAGENT_RUN',
  'OPENCODE_PSA_DIR',
  'OPENCODE_PSA_MODEL',
  'OPENCODE_PSA_VARIANT',
  'OPENCODE_PSA_WAIT_TIMEOUT_SEC',
  'NO_COLOR',
  ...TEST_KNOBS,
];

export interface Box {
  dir: string;
  registry: string;
  /** The environment of every verb run through the box (HOME, SUBAGENT_DIR, the marker); a test may change it. */
  env: NodeJS.ProcessEnv;
  /** `KEY=value` present in the environment of every process started through this box. */
  marker: string;
  /** Pids the test started itself (e.g. an unrelated `sleep`), killed when the box ends. */
  own: number[];
  /** A verb, synchronously. */
  run(verb: Verb, args: string[], opts?: RunOpts): RunOut;
  /** A verb, without blocking the event loop (killed and failed when it outlives opts.timeoutMs). */
  runAsync(verb: Verb, args: string[], opts?: RunOpts): Promise<RunOut>;
  /** A verb in the background. */
  spawn(verb: Verb, args: string[], opts?: RunOpts): Spawned;
  /** Ends the box's processes (by pid) and removes its directory. */
  cleanup(): Promise<void>;
}

/** A fresh box under `base` (default: the OS temp dir; `/dev/shm` for fsync-heavy tests). */
export function createBox(label: string, base = tmpdir()): Box {
  const dir = realpathSync(mkdtempSync(join(base, `subagents-${label}-`)));
  const registry = join(dir, 'registry');
  // The verbs' compile cache (bin/compile-cache.js) is the checkout's, shared by every box: not in the
  // box (a box's files are what its test looks at), not in the shared temp directory.
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    HOME: dir,
    XDG_CACHE_HOME: TEST_CACHE,
    SUBAGENT_DIR: registry,
    SUBAGENT_CANCEL_GRACE_MS: '1500',
    [MARK_KEY]: dir,
  };
  for (const k of NOT_PASSED_ON) delete env[k];
  const where = (opts: RunOpts) => ({ ...opts, cwd: opts.cwd ?? dir, env: { ...box.env, ...opts.env } });
  const box: Box = {
    dir,
    registry,
    env,
    marker: `${MARK_KEY}=${dir}`,
    own: [],
    run: (verb, args, opts = {}) => runProgram(join(BIN, verb), args, where(opts)),
    runAsync: (verb, args, opts = {}) => runProgramAsync(join(BIN, verb), args, where(opts)),
    spawn: (verb, args, opts = {}) => spawnProgram(join(BIN, verb), args, where(opts)),
    async cleanup() {
      await reap(box);
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return box;
}

/** A box for a whole test file (or describe): ended in the file's `after`. */
export function makeBox(label: string): Box {
  const b = createBox(label);
  after(() => b.cleanup());
  return b;
}

/** Runs `fn` with a fresh box; always ends the box's processes (by pid) and removes it. */
export async function withBox<T>(label: string, fn: (b: Box) => Promise<T>, base?: string): Promise<T> {
  const b = createBox(label, base);
  try {
    return await fn(b);
  } finally {
    await b.cleanup();
  }
}

/** A box for one test: ended when the test ends (`t.after`). */
export function testBox(t: { after(fn: () => void | Promise<void>): void }, label: string): Box {
  const b = createBox(label);
  t.after(() => b.cleanup());
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

/**
 * Waits until no process of the box runs any more, except those the test started itself (`own`). A
 * run's supervisor outlives the record saying "done" by a moment: it still removes its record.lock and
 * leaves the queue. A snapshot of the files (listTree, strays, bytes) is only stable after this.
 */
export async function quiet(b: Box, timeoutMs = LONG): Promise<void> {
  await until('every process of the box has exited', () => pidsWithEnv(b.marker).every((p) => b.own.includes(p)), timeoutMs, 25).catch(() => {
    throw new Error(
      `processes of the box still run: ${pidsWithEnv(b.marker)
        .filter((p) => !b.own.includes(p))
        .join(' ')}`,
    );
  });
}

/** Starts a process the test owns (in its own process group), carrying the box's marker; it ends with the box. */
export function own(b: Box, cmd: string, args: string[], extraEnv: NodeJS.ProcessEnv = {}): number {
  const child = spawn(cmd, args, { stdio: 'ignore', detached: true, env: { ...b.env, ...extraEnv } });
  child.on('error', () => undefined);
  child.unref();
  b.own.push(child.pid!);
  return child.pid!;
}
