import { closeSync, openSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { FILES } from '../registry/store.js';
import { spawnUnwaited, type UnwaitedProcess } from '../proc/unwaited-spawn.js';
import { holdForAgent } from './held-env.js';

/** Bundled builds (scripts/bundle.mjs) define the bundled supervisor's path: next to the verb. */
declare const __SUPERVISOR_ENTRY__: string | undefined;

function supervisorEntry(): string {
  return typeof __SUPERVISOR_ENTRY__ === 'string' ? __SUPERVISOR_ENTRY__ : fileURLToPath(new URL('./main.js', import.meta.url));
}

/**
 * Every running run has a supervisor, so it runs lean (docs/design.md, "The supervisor"): no JIT — it
 * parses a few events a second, the interpreter keeps up, and V8 then maps no code space and no second
 * copy of its builtins; --no-expose-wasm says what --jitless would otherwise warn about in
 * supervisor.log. A 1 MB young generation keeps a burst of events from leaving it MBs larger.
 */
export const NODE_FLAGS = ['--jitless', '--no-expose-wasm', '--max-semi-space-size=1'];

/** Variables that describe the caller's own run; a new run must not inherit them as its own. */
const RUN_SCOPED = ['SUBAGENT_RUN_ID', 'SUBAGENT_TEST_CRASH_AT_AGENT'];

let gateUntilExit = false;

/**
 * For a command that starts one run and exits (start-subagent, resume-subagent): the supervisors it
 * starts from now on boot only once it has exited, instead of once their run is durable. On 2 cores a
 * supervisor booting (~60 ms of CPU: Node's own start-up) slowed the start's last steps — recording
 * the supervisor, its output, its exit — by ~5-12 ms (docs/design.md, "Starting a run"). Not for a process that
 * lives on (the library, a batch): its supervisors would wait for it.
 */
export function gateSupervisorsUntilExit(): void {
  gateUntilExit = true;
}

/** Whether a supervisor is to boot only when this process exits (gateSupervisorsUntilExit). */
export function supervisorsGatedUntilExit(): boolean {
  return gateUntilExit;
}

/**
 * Starts the supervisor detached: its own session (setsid), stdin from /dev/null, stdout and stderr
 * into the run's supervisor.log — nothing tied to the caller's terminal, so the caller's exit, Ctrl-C
 * and SIGHUP do not reach it. It boots at once, or — gated (spawnUnwaited), where the posix_spawn
 * addon is built — when the caller calls release(), or exits.
 */
export function spawnSupervisor(registry: string, dir: string, env: NodeJS.ProcessEnv = process.env): UnwaitedProcess {
  const log = openSync(join(dir, FILES.supervisorLog), 'a', 0o644);
  try {
    const childEnv: NodeJS.ProcessEnv = { ...env };
    for (const key of RUN_SCOPED) delete childEnv[key];
    holdForAgent(childEnv);
    return spawnUnwaited(process.execPath, [...NODE_FLAGS, supervisorEntry(), registry, dir], { cwd: '/', env: childEnv, stdio: ['ignore', log, log], detached: true, gated: true });
  } finally {
    closeSync(log);
  }
}
