import { SubagentError } from '../base/errors.js';
import type { BackendName, ProcBackend } from './types.js';
import { linux } from './linux.js';
import { ps } from './ps.js';

export type { BackendName, ProcBackend, ProcCpu, ProcMemory } from './types.js';

export const BACKEND_NAMES: readonly BackendName[] = ['linux', 'ps'];

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
