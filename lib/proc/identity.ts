import { backend } from './backend.js';
import type { ProcessIdentity, Liveness } from './types.js';

export type { Liveness, ProcStat, ProcessIdentity } from './types.js';

export function isIdentity(value: unknown): value is ProcessIdentity {
  const v = value as ProcessIdentity;
  return typeof v === 'object' && v !== null && Number.isInteger(v.pid) && typeof v.startTime === 'string' && typeof v.bootId === 'string';
}

export function bootId(): string {
  return backend().bootId();
}

/** The identity of a live process now (null: no such process, or a zombie). */
export function identityOf(pid: number): ProcessIdentity | null {
  return backend().identityOf(pid);
}

export function liveness(id: ProcessIdentity | null | undefined): Liveness {
  if (!id || !Number.isInteger(id.pid) || id.pid <= 0) return 'dead';
  // Another boot: whatever holds the pid now is not the recorded process.
  if (id.bootId !== bootId()) return 'dead';
  return backend().liveness(id);
}

/** Proven alive: the same pid, start time and boot id, and not a zombie. */
export function isAlive(id: ProcessIdentity | null | undefined): boolean {
  return liveness(id) === 'alive';
}

let self: ProcessIdentity | null = null;

/** This process's identity (it never changes, so it is read once). */
export function selfIdentity(): ProcessIdentity {
  if (!self) {
    self = identityOf(process.pid);
    if (!self) throw new Error(`the ${backend().name} process backend does not see this process (pid ${process.pid})`);
  }
  return self;
}

/**
 * The next question is answered from a new look at the processes. Only the ps backend keeps a view
 * (one `ps` for one synchronous pass, lib/proc/ps.ts); a synchronous loop that polls must call this
 * each round, or it would keep seeing the processes as they were.
 */
export function lookAgain(): void {
  backend().forget();
}
