import { SubagentError } from '../base/errors.js';
import type { Liveness, ProcStat, ProcessIdentity } from './identity.js';
import { linux } from './linux.js';
import { ps } from './ps.js';

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

export const BACKEND_NAMES = ['linux', 'ps'] as const;
export type BackendName = (typeof BACKEND_NAMES)[number];

/** SUBAGENT_PROC_BACKEND when set (`ps` proves the portable backend on Linux), else the platform's. */
export function chooseBackend(env: NodeJS.ProcessEnv = process.env, platform: NodeJS.Platform = process.platform): BackendName {
  const asked = env.SUBAGENT_PROC_BACKEND;
  if (asked === undefined || asked === '') return platform === 'linux' ? 'linux' : 'ps';
  if ((BACKEND_NAMES as readonly string[]).includes(asked)) return asked as BackendName;
  throw new SubagentError('E_PROC_UNAVAILABLE', `SUBAGENT_PROC_BACKEND=${asked} names no process backend`, {
    variable: 'SUBAGENT_PROC_BACKEND',
    value: asked,
    hint: `set it to ${BACKEND_NAMES.join(' or ')}, or unset it to let the platform choose`,
  });
}

let chosen: ProcBackend | undefined;

/** The backend of this process, chosen on first use (the environment of the process, not a verb's options). */
export function backend(): ProcBackend {
  chosen ??= chooseBackend() === 'ps' ? ps : linux;
  return chosen;
}
