import { closeSync, openSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { FILES } from '../registry/store.js';
import { PRIVATE_FILE } from '../registry/private.js';
import { spawnDetached } from '../proc/spawn.js';

/** Bundled builds (scripts/bundle.mjs) define the bundled supervisor's path: next to the verb. */
declare const __SUPERVISOR_ENTRY__: string | undefined;

function supervisorEntry(): string {
  return typeof __SUPERVISOR_ENTRY__ === 'string' ? __SUPERVISOR_ENTRY__ : fileURLToPath(new URL('./main.js', import.meta.url));
}

/**
 * Every running run has a supervisor, so it runs lean (docs/design.md, "The supervisor"): a 1 MB young
 * generation keeps a burst of events from leaving it MBs larger, and no JIT — it parses a few events a
 * second, the interpreter keeps up, and V8 maps no code space. Both are options of Node's own
 * documentation, not V8 internals. Node 22's V8 turns WebAssembly off under --jitless and says so on
 * stderr (into supervisor.log, every run), for little gain, so Node 22 runs without it. The figures:
 * docs/benchmarks.md, "Measured by hand".
 */
export const NODE_FLAGS = Number(process.versions.node.split('.')[0]) >= 24 ? ['--jitless', '--max-semi-space-size=1'] : ['--max-semi-space-size=1'];

/** Variables that describe the caller's own run; a new run must not inherit them as its own. */
const RUN_SCOPED = ['SUBAGENT_RUN_ID', 'SUBAGENT_TEST_CRASH_AT_AGENT'];

/** The supervisor's command line, wherever it is placed: this Node, its flags, the bundle, the run. */
export function supervisorCommand(registry: string, dir: string): string[] {
  return [process.execPath, ...NODE_FLAGS, supervisorEntry(), registry, dir];
}

/** The environment a run's supervisor gets: the caller's, without what describes the caller's own run. */
export function supervisorEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const childEnv: NodeJS.ProcessEnv = { ...env };
  for (const key of RUN_SCOPED) delete childEnv[key];
  return childEnv;
}

/** The run's supervisor.log, created private (its supervisor, or a job engine, appends to it). */
export function openSupervisorLog(dir: string): { path: string; fd: number } {
  const path = join(dir, FILES.supervisorLog);
  return { path, fd: openSync(path, 'a', PRIVATE_FILE) };
}

/**
 * Starts the supervisor detached: its own session (setsid), stdin from /dev/null, stdout and stderr
 * into the run's supervisor.log — nothing tied to the caller's terminal, so the caller's exit, Ctrl-C
 * and SIGHUP do not reach it. Returns its pid.
 */
export async function spawnSupervisor(registry: string, dir: string, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const log = openSupervisorLog(dir).fd;
  try {
    const [program, ...args] = supervisorCommand(registry, dir);
    return await spawnDetached(program!, args, { cwd: '/', env: supervisorEnv(env), stdio: ['ignore', log, log] });
  } finally {
    closeSync(log);
  }
}
