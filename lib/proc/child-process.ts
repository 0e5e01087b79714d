import { createRequire } from 'node:module';
import type * as ChildProcess from 'node:child_process';

let loaded: typeof ChildProcess | null = null;

/**
 * node:child_process, loaded on first use: loading it (with net, stream and dgram) costs a verb ~2 ms,
 * and most verbs never spawn. Who loads it: start and resume (the supervisor, proc/spawn.ts), the
 * supervisor (the agent), git for --worktree, and the ps process backend (proc/ps.ts). Through
 * process.getBuiltinModule (Node >= 22.3) where there is one, else a require() rooted anywhere (a
 * built-in module does not depend on where it is required from).
 */
export function childProcess(): typeof ChildProcess {
  return (loaded ??= process.getBuiltinModule?.('node:child_process') ?? (createRequire(process.execPath)('node:child_process') as typeof ChildProcess));
}
