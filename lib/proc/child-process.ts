import { builtin } from '../base/builtin.js';
import type * as ChildProcess from 'node:child_process';

let loaded: typeof ChildProcess | null = null;

/**
 * node:child_process, loaded on first use: loading it (with net, stream and dgram) costs a verb ~2 ms,
 * and most verbs never spawn. Who loads it: start and resume (the supervisor, proc/spawn.ts), the
 * supervisor (the agent), git for --worktree, the ps process backend (proc/ps.ts), and the opencode
 * adapter (`opencode export` for --child, `opencode db path` before a first run). Through
 * lib/base/builtin.ts.
 */
export function childProcess(): typeof ChildProcess {
  loaded ??= builtin<typeof ChildProcess>('node:child_process');
  return loaded;
}
