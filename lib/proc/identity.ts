import { backend } from './backend.js';

/**
 * docs/guarantees.md, 4: a process is "the one we recorded" only if its pid exists, it is not a zombie, and its
 * start time and the boot id match. The start time is in the form of the backend that read it
 * (lib/proc/start-time.ts); the boot id is the same for both backends on one machine.
 */
export interface ProcessIdentity {
  pid: number;
  startTime: string;
  bootId: string;
}

/** One process as a backend sees it, its start time in that backend's own form. */
export interface ProcStat {
  pid: number;
  comm: string;
  state: string;
  ppid: number;
  pgid: number;
  startTime: string;
}

/**
 * What a backend can say about a recorded identity. `unchecked`: a process with that pid lives, but the
 * recorded start time is in a form this backend cannot compare (one the other backend wrote), so it
 * cannot tell whether it is the same process. Callers never signal it and never take it for dead.
 */
export type Liveness = 'alive' | 'dead' | 'unchecked';

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
