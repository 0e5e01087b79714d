import { createRequire } from 'node:module';
import type * as ChildProcess from 'node:child_process';

let loaded: typeof ChildProcess | null = null;

/**
 * node:child_process, loaded on first use: loading it (with net, stream and dgram) costs a verb 2.5-5 ms,
 * and most verbs never spawn; start and resume spawn the supervisor without it (proc/unwaited-spawn.ts).
 * What still loads it: git for --worktree, and the ps process backend (proc/ps.ts). Through
 * process.getBuiltinModule (Node >= 20.16) where there is one, else a require() rooted anywhere (a
 * built-in module does not depend on where it is required from; the supervisor's bundle has no
 * import.meta.url).
 */
export function childProcess(): typeof ChildProcess {
  return (loaded ??= process.getBuiltinModule?.('node:child_process') ?? (createRequire(process.execPath)('node:child_process') as typeof ChildProcess));
}
