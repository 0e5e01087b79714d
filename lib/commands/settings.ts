import { SubagentError } from '../base/errors.js';
import { DEFAULT_CANCEL_GRACE_MS, DEFAULT_HOOK_TIMEOUT_SEC } from '../registry/record.js';

/**
 * The environment variables a command reads where its options leave a setting open (docs/contract.md,
 * "Environment"), each with its older OPENCODE_PSA_* name where it has one: the first set and non-empty
 * wins. The only place a command reads SUBAGENT_* (the registry's location is lib/registry/locate.ts's;
 * the test knobs, lib/base/checkpoint.ts's).
 */
const VARIABLES = {
  cli: ['SUBAGENT_CLI'],
  model: ['SUBAGENT_MODEL', 'OPENCODE_PSA_MODEL'],
  variant: ['SUBAGENT_VARIANT', 'OPENCODE_PSA_VARIANT'],
  waitTimeoutSec: ['SUBAGENT_WAIT_TIMEOUT_SEC', 'OPENCODE_PSA_WAIT_TIMEOUT_SEC'],
  cancelGraceMs: ['SUBAGENT_CANCEL_GRACE_MS'],
  maxConcurrent: ['SUBAGENT_MAX_CONCURRENT'],
  maxDepth: ['SUBAGENT_MAX_DEPTH'],
  parent: ['SUBAGENT_PARENT'],
  depth: ['SUBAGENT_DEPTH'],
  dir: ['SUBAGENT_DIR'],
  executor: ['SUBAGENT_EXECUTOR'],
  stallSec: ['SUBAGENT_STALL_SEC'],
  hookTimeoutSec: ['SUBAGENT_HOOK_TIMEOUT_SEC'],
  searchTimeoutSec: ['SUBAGENT_SEARCH_TIMEOUT_SEC'],
} as const;

export type Setting = keyof typeof VARIABLES;

/** The environment's value of a setting, or undefined when none of its variables is set (or all are empty). */
export function fromEnv(env: NodeJS.ProcessEnv, setting: Setting): string | undefined {
  for (const k of VARIABLES[setting]) {
    const v = env[k];
    if (v !== undefined && v !== '') return v;
  }
  return undefined;
}

export const DEFAULT_CLI = 'opencode';
export const DEFAULT_WAIT_TIMEOUT_SEC = 100;
export const DEFAULT_MAX_DEPTH = 3;
/** Ten minutes: longer than one model turn that writes a long answer and prints nothing until it ends (docs/stalls.md). */
export const DEFAULT_STALL_SEC = 600;

/** Seconds as the verbs take them (--timeout, SUBAGENT_WAIT_TIMEOUT_SEC): a number ≥ 0; 0 means forever. */
export function parseSeconds(raw: string): number {
  const sec = Number(raw);
  if (raw.trim() === '' || !Number.isFinite(sec) || sec < 0) throw badTimeout(raw);
  return sec;
}

/** How long a wait may take in ms (null: forever): the option, else the environment's, else 100 s. */
export function waitTimeoutMs(timeoutSec: number | undefined, env: NodeJS.ProcessEnv): number | null {
  if (timeoutSec !== undefined) return timeoutMs(timeoutSec);
  const raw = fromEnv(env, 'waitTimeoutSec');
  return timeoutMs(raw === undefined ? DEFAULT_WAIT_TIMEOUT_SEC : parseSeconds(raw));
}

/** Seconds given as a number, checked, in ms; 0 is null (forever). */
export function timeoutMs(sec: number): number | null {
  if (!Number.isFinite(sec) || sec < 0) throw badTimeout(String(sec));
  return sec === 0 ? null : sec * 1000;
}

function badTimeout(raw: string): SubagentError {
  return new SubagentError('E_ARG_INVALID', `the wait timeout "${raw}" is not a number of seconds`, {
    value: raw,
    hint: 'give seconds as a number (0 waits forever), via --timeout or SUBAGENT_WAIT_TIMEOUT_SEC',
  });
}

/**
 * What is wrong with a whole number given as text, said plainly: not a whole number at all, or one
 * above the largest taken (then the sentence says that largest); null when it is fine.
 */
function wholeNumberFault(text: string, max: number, what = 'a whole number'): string | null {
  if (!/^[0-9]+$/.test(text)) return `is not ${what}`;
  return Number(text) > max ? `is too large: at most ${max}` : null;
}

/** The most runs a concurrency limit can allow. */
export const MAX_LIMIT = 999_999;

/** A concurrency limit as the verbs take it (--max-concurrent, SUBAGENT_MAX_CONCURRENT): a whole number; 0 removes the limit. */
export function parseLimit(raw: string, source: string): number {
  const fault = wholeNumberFault(raw.trim(), MAX_LIMIT);
  if (fault) {
    throw new SubagentError('E_ARG_INVALID', `${source} "${raw}" ${fault}`, {
      value: raw,
      hint: `give the most runs that may run at once, from 1 to ${MAX_LIMIT}, e.g. 4 (0 removes the limit)`,
    });
  }
  return Number(raw.trim());
}

/** The concurrency limit asked for: the option, else SUBAGENT_MAX_CONCURRENT, else none (the registry's stays). */
export function requestedLimit(maxConcurrent: number | undefined, env: NodeJS.ProcessEnv): number | undefined {
  if (maxConcurrent !== undefined) return parseLimit(String(maxConcurrent), '--max-concurrent');
  const raw = fromEnv(env, 'maxConcurrent');
  return raw === undefined ? undefined : parseLimit(raw, 'SUBAGENT_MAX_CONCURRENT');
}

/** How long cancel waits after its first signal before it escalates; a bad value counts as the default. */
export function cancelGraceMs(env: NodeJS.ProcessEnv): number {
  const v = Number(fromEnv(env, 'cancelGraceMs') ?? DEFAULT_CANCEL_GRACE_MS);
  return Number.isFinite(v) && v >= 0 ? v : DEFAULT_CANCEL_GRACE_MS;
}

/** A stall time as the verbs take it (--stall-after, SUBAGENT_STALL_SEC): seconds ≥ 0, or `off`; 0 and `off` turn stall watching off. */
export function parseStallSec(raw: string, source: string): number {
  if (raw.trim() === 'off') return 0;
  const sec = Number(raw);
  if (raw.trim() === '' || !Number.isFinite(sec) || sec < 0) throw badStallSec(raw, source);
  return sec;
}

export function badStallSec(raw: string, source: string): SubagentError {
  return new SubagentError('E_ARG_INVALID', `${source} "${raw}" is not a number of seconds`, {
    value: raw,
    hint: 'give the seconds without a sign of work after which a run counts as stalled, e.g. 600 (0 or off: never)',
  });
}

/** The stall time of a new run when none was given: SUBAGENT_STALL_SEC, else 600 s. */
export function defaultStallSec(env: NodeJS.ProcessEnv): number {
  const raw = fromEnv(env, 'stallSec');
  return raw === undefined ? DEFAULT_STALL_SEC : parseStallSec(raw, 'SUBAGENT_STALL_SEC');
}

/** How long a search's pattern may take to match, in seconds: an orchestrator's shell must never hang on one. */
export const DEFAULT_SEARCH_TIMEOUT_SEC = 10;

/** The bound on a search's matching in ms: SUBAGENT_SEARCH_TIMEOUT_SEC (seconds > 0), else 10 s. */
export function searchTimeoutMs(env: NodeJS.ProcessEnv): number {
  const raw = fromEnv(env, 'searchTimeoutSec');
  if (raw === undefined) return DEFAULT_SEARCH_TIMEOUT_SEC * 1000;
  const sec = Number(raw);
  if (raw.trim() === '' || !Number.isFinite(sec) || sec <= 0 || sec > 86_400)
    throw new SubagentError('E_ARG_INVALID', `SUBAGENT_SEARCH_TIMEOUT_SEC "${raw}" is not a number of seconds above 0 and at most 86400`, {
      value: raw,
      hint: `give the seconds a search's pattern may take to match, e.g. ${DEFAULT_SEARCH_TIMEOUT_SEC}, or unset it`,
    });
  return sec * 1000;
}

/** How long an end hook may run (SUBAGENT_HOOK_TIMEOUT_SEC, seconds > 0), else 60 s. */
export function hookTimeoutSec(env: NodeJS.ProcessEnv): number {
  const raw = fromEnv(env, 'hookTimeoutSec');
  if (raw === undefined) return DEFAULT_HOOK_TIMEOUT_SEC;
  const sec = Number(raw);
  if (raw.trim() === '' || !Number.isFinite(sec) || sec <= 0) {
    throw new SubagentError('E_ARG_INVALID', `SUBAGENT_HOOK_TIMEOUT_SEC "${raw}" is not a number of seconds above 0`, {
      value: raw,
      hint: 'give how long an end hook may run before it is killed, e.g. 60, or unset it',
    });
  }
  return sec;
}

/** How deep runs may nest: SUBAGENT_MAX_DEPTH when it is a whole number, else 3. */
export function maxDepth(env: NodeJS.ProcessEnv): number {
  const raw = fromEnv(env, 'maxDepth');
  return raw !== undefined && /^[0-9]+$/.test(raw) ? Number(raw) : DEFAULT_MAX_DEPTH;
}

/** A run number as the verbs take it (--run, --since): 1, 2, 3…; `zero` also allows 0 (--since 0: all). */
export function parseRunNumber(value: string, flag: string, zero = false): number {
  if (zero && value === '0') return 0;
  if (!/^[1-9][0-9]*$/.test(value) || Number(value) > MAX_RUN) throw badRunNumber(value, flag);
  return Number(value);
}

/** The same rule for a number given to the library. */
export function checkRunNumber(value: number, flag: string, zero = false): number {
  if (!Number.isInteger(value) || value < (zero ? 0 : 1) || value > MAX_RUN) throw badRunNumber(String(value), flag);
  return value;
}

/** The largest run number taken. */
const MAX_RUN = 999_999_999;

function badRunNumber(value: string, flag: string): SubagentError {
  const tooLarge = /^[0-9]+$/.test(value) && Number(value) > MAX_RUN;
  return new SubagentError('E_ARG_INVALID', `${flag} "${value}" ${tooLarge ? `is too large: runs are numbered up to ${MAX_RUN}` : 'is not a run number'}`, {
    flag,
    value,
    hint: 'runs are numbered 1, 2, 3…; subagent-status lists the latest',
  });
}
