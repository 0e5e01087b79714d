import { closeSync, existsSync, mkdirSync, openSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { childProcess } from '../../proc/child-process.js';
import { sleep } from '../../base/time.js';
import { opencodeDataDir, opencodeStoreExists } from './store.js';

/**
 * Creating a run's OpenCode store before the first run in it (the adapter's `prepare`), one creator at a
 * time: OpenCode migrates a new database without a lock of its own.
 */

/** How long the first run of a store may take to create it, and after how long a lock is stale. */
export const PREPARE_TIMEOUT_MS = 120_000;
export const PREPARE_LOCK = '.subagents-init.lock';

/** Runs `opencode ARGS` quietly (stdin closed, output dropped); resolves its exit code (null: failed/timeout). */
function runQuiet(args: string[], env: NodeJS.ProcessEnv, cwd: string | undefined, timeoutMs: number): Promise<number | null> {
  return new Promise((resolve) => {
    let child: ReturnType<ReturnType<typeof childProcess>['spawn']>;
    try {
      child = childProcess().spawn('opencode', args, { cwd, env, stdio: 'ignore' });
    } catch {
      resolve(null);
      return;
    }
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', () => {
      clearTimeout(timer);
      resolve(null);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve(code);
    });
  });
}

/**
 * Creates the run's OpenCode store before the first run in it, one creator at a time. OpenCode 1.18.33
 * migrates a new database with no lock of its own: several `opencode run` started at once on a store that
 * does not exist yet race on `CREATE TABLE` and all but one exit 1 ("Failed query: CREATE TABLE
 * `workspace` …"; measured: 1 to 2 of 4 concurrent first runs). So the first caller takes a lock file in the
 * data dir and runs `opencode db path` (which creates and migrates the database, ~1–2 s), and the others wait
 * for it. Once the store exists this costs one stat. Meant for the supervisor, in the run's environment,
 * right before it starts the agent (see docs/agents/opencode.md).
 */
export async function opencodePrepare(env: NodeJS.ProcessEnv, cwd?: string): Promise<void> {
  const data = opencodeDataDir(env);
  if (data === null) return;
  const lock = join(data, PREPARE_LOCK);
  const deadline = Date.now() + PREPARE_TIMEOUT_MS;
  for (;;) {
    if (opencodeStoreExists(env) && !existsSync(lock)) return;
    let fd: number;
    try {
      mkdirSync(data, { recursive: true });
      fd = openSync(lock, 'wx');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') return; // cannot lock here: let OpenCode cope
      try {
        // A creator that died keeps its lock: after the timeout it is stale.
        if (Date.now() - statSync(lock).mtimeMs > PREPARE_TIMEOUT_MS) unlinkSync(lock);
      } catch {
        /* released meanwhile */
      }
      if (Date.now() > deadline) return;
      await sleep(100);
      continue;
    }
    try {
      writeSync(fd, `${process.pid}\n`);
      closeSync(fd);
      if (!opencodeStoreExists(env)) await runQuiet(['db', 'path'], env, cwd && existsSync(cwd) ? cwd : undefined, PREPARE_TIMEOUT_MS);
    } finally {
      try {
        unlinkSync(lock);
      } catch {
        /* gone */
      }
    }
    return;
  }
}
