import { createRequire } from 'node:module';
import type * as ChildProcess from 'node:child_process';

let loaded: typeof ChildProcess | null = null;

/**
 * node:child_process, loaded on first use: loading it (with net, stream and dgram) costs a verb 2.5-5 ms,
 * and most verbs never spawn; start and resume spawn the supervisor without it (proc/unwaited-spawn.ts).
 * What still loads it: git for --worktree.
 */
export function childProcess(): typeof ChildProcess {
  return (loaded ??= createRequire(import.meta.url)('node:child_process') as typeof ChildProcess);
}
