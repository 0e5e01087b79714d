/**
 * The process layer's types: what a process is to us (its identity, its stat as a backend reads it) and
 * what a backend answers. Apart from the code so that the backends (linux.ts, ps.ts), their chooser
 * (backend.ts) and identity.ts all name them without importing each other.
 */

export type BackendName = 'linux' | 'ps';

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

/**
 * Where process identity, process trees and liveness come from: `linux` reads /proc, `ps` runs the
 * `ps` found on PATH (macOS, the BSDs). Callers go through lib/proc/identity.ts, tree.ts and signal.ts.
 */
export interface ProcBackend {
  readonly name: BackendName;
  /** This boot's identity: equal for both backends on one machine. */
  bootId(): string;
  /** The identity of a live process now, from a look taken for this question (null: gone, or a zombie). */
  identityOf(pid: number): ProcessIdentity | null;
  /** Whether the recorded process (its boot already checked by the caller) is alive now. */
  liveness(id: ProcessIdentity): Liveness;
  /** Every live process (zombies left out), from a look taken for this question. */
  processes(): ProcStat[];
  /** Every live process's parent and the CPU time it has used, from one look (lib/proc/cpu.ts walks a run's tree in it). */
  cpuTimes(): ProcCpu[];
  /** Every live process's parent and resident memory, from one look (lib/proc/memory.ts sums a run's tree in it). */
  memory(): ProcMemory[];
  /**
   * The memory the machine has available for new work, in bytes (Linux: MemAvailable; macOS: free,
   * inactive, speculative and purgeable pages), from a look taken for this question; null: cannot tell.
   */
  availableMemory(): number | null;
  /** Those of `procs` whose environment holds `marker`; absent where environments cannot be read (ps). */
  marked?(procs: ProcStat[], marker: string): ProcStat[];
  /** Forget any view kept from an earlier look (lib/proc/identity.ts lookAgain). */
  forget(): void;
}

/**
 * A process's CPU time so far: user + system, in ms. Linux adds the CPU time of the children it has
 * waited for (so a tool that ran and was reaped between two looks still counts); ps cannot.
 */
export interface ProcCpu {
  pid: number;
  ppid: number;
  cpuMs: number;
}

/** A process's resident set size (RSS), in bytes. */
export interface ProcMemory {
  pid: number;
  ppid: number;
  rssBytes: number;
}
