import { closeSync, openSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { FILES } from '../registry/store.js';
import { spawnDetached } from '../proc/spawn.js';

/** Bundled builds (scripts/bundle.mjs) define the bundled supervisor's path: next to the verb. */
declare const __SUPERVISOR_ENTRY__: string | undefined;

function supervisorEntry(): string {
  return typeof __SUPERVISOR_ENTRY__ === 'string' ? __SUPERVISOR_ENTRY__ : fileURLToPath(new URL('./main.js', import.meta.url));
}

/**
 * Every running run has a supervisor, so it runs lean (docs/design.md, "The supervisor"): a 1 MB young
 * generation keeps a burst of events from leaving it MBs larger, and no JIT — it parses a few events a
 * second, the interpreter keeps up, and V8 maps no code space (2.7 MB less RSS on Node 24). Both are
 * options of Node's own documentation, not V8 internals. Node 22's V8 turns WebAssembly off under
 * --jitless and says so on stderr (into supervisor.log, every run); it gains there only 0.4 MB, so
 * Node 22 runs without it.
 */
export const NODE_FLAGS = Number(process.versions.node.split('.')[0]) >= 24 ? ['--jitless', '--max-semi-space-size=1'] : ['--max-semi-space-size=1'];

/** Variables that describe the caller's own run; a new run must not inherit them as its own. */
const RUN_SCOPED = ['SUBAGENT_RUN_ID', 'SUBAGENT_TEST_CRASH_AT_AGENT'];

/**
 * Starts the supervisor detached: its own session (setsid), stdin from /dev/null, stdout and stderr
 * into the run's supervisor.log — nothing tied to the caller's terminal, so the caller's exit, Ctrl-C
 * and SIGHUP do not reach it. Returns its pid.
 */
export async function spawnSupervisor(registry: string, dir: string, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const log = openSync(join(dir, FILES.supervisorLog), 'a', 0o644);
  try {
    const childEnv: NodeJS.ProcessEnv = { ...env };
    for (const key of RUN_SCOPED) delete childEnv[key];
    return await spawnDetached(process.execPath, [...NODE_FLAGS, supervisorEntry(), registry, dir], { cwd: '/', env: childEnv, stdio: ['ignore', log, log] });
  } finally {
    closeSync(log);
  }
}
