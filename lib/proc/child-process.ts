import { createRequire } from 'node:module';
import type * as ChildProcess from 'node:child_process';

let loaded: typeof ChildProcess | null = null;

/**
 * node:child_process, loaded on first use: loading it (with net, stream and dgram) costs a verb ~2.5 ms,
 * and most verbs never spawn. start/resume call it while their publishing fsync runs on the thread pool,
 * so the load overlaps the wait instead of adding to it.
 */
export function childProcess(): typeof ChildProcess {
  return (loaded ??= createRequire(import.meta.url)('node:child_process') as typeof ChildProcess);
}
