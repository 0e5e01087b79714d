import { SubagentError } from '../base/errors.js';
import { SIZE_FORM, parseSize } from '../base/size.js';
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
  minFreeMemory: ['SUBAGENT_MIN_FREE_MEMORY'],
  maxDepth: ['SUBAGENT_MAX_DEPTH'],
  parent: ['SUBAGENT_PARENT'],
  depth: ['SUBAGENT_DEPTH'],
  dir: ['SUBAGENT_DIR'],
  executor: ['SUBAGENT_EXECUTOR'],
  stallSec: ['SUBAGENT_STALL_SEC'],
  hookTimeoutSec: ['SUBAGENT_HOOK_TIMEOUT_SEC'],
  searchTimeoutSec: ['SUBAGENT_SEARCH_TIMEOUT_SEC'],
  onLimit: ['SUBAGENT_ON_LIMIT'],
  acpCommand: ['SUBAGENT_ACP_COMMAND'],
} as const;

export type Setting = keyof typeof VARIABLES;

/** The environment's value of a setting, or undefined when none of its variables is set (or all are empty). */
export function fromEnv(env: NodeJS.ProcessEnv, setting: Setting): string | undefined {
  return lookup(env, setting)?.raw;
}

/** The variables of a setting, the one that wins first. */
export function variablesOf(setting: Setting): readonly string[] {
  return VARIABLES[setting];
}

function lookup(env: NodeJS.ProcessEnv, setting: Setting): { variable: string; raw: string } | undefined {
  for (const variable of VARIABLES[setting]) {
    const raw = env[variable];
    if (raw !== undefined && raw !== '') return { variable, raw };
  }
  return undefined;
}

/**
 * A setting the environment gives as text, read by `parse` (which is told the variable, for its
 * message); undefined when it is not set. The one rule for a bad value: E_ARG_INVALID that names the
 * variable (`details.variable`) with the parser's hint, before anything is written — never a silent
 * default. Only the winning variable is read: one a flag or an earlier variable overrides is not.
 */
export function envSetting<T>(env: NodeJS.ProcessEnv, setting: Setting, parse: (raw: string, source: string) => T): T | undefined {
  const found = lookup(env, setting);
  if (found === undefined) return undefined;
  try {
    return parse(found.raw, found.variable);
  } catch (err) {
    if (err instanceof SubagentError && err.code === 'E_ARG_INVALID') {
      throw new SubagentError(err.code, err.message, { variable: found.variable, ...err.details });
    }
    throw err;
  }
}

export const DEFAULT_CLI = 'opencode';
export const DEFAULT_WAIT_TIMEOUT_SEC = 100;
export const DEFAULT_MAX_DEPTH = 3;
/** Ten minutes: longer than one model turn that writes a long answer and prints nothing until it ends (docs/stalls.md). */
export const DEFAULT_STALL_SEC = 600;

/** Seconds as the verbs take them (--timeout, SUBAGENT_WAIT_TIMEOUT_SEC): a number ≥ 0; 0 means forever. */
export function parseSeconds(raw: string, source = 'the wait timeout'): number {
  return decimal(raw, source, (sec) => sec >= 0, 'a number of seconds', TIMEOUT_HINT);
}

/** How long a wait may take in ms (null: forever): the option, else the environment's, else 100 s. */
export function waitTimeoutMs(timeoutSec: number | undefined, env: NodeJS.ProcessEnv): number | null {
  if (timeoutSec !== undefined) return timeoutMs(timeoutSec);
  return timeoutMs(envSetting(env, 'waitTimeoutSec', parseSeconds) ?? DEFAULT_WAIT_TIMEOUT_SEC);
}

/** Seconds given as a number, checked, in ms; 0 is null (forever). */
export function timeoutMs(sec: number): number | null {
  if (!Number.isFinite(sec) || sec < 0) throw badTimeout(String(sec));
  return sec === 0 ? null : sec * 1000;
}

const TIMEOUT_HINT = 'give seconds as a number (0 waits forever), via --timeout or SUBAGENT_WAIT_TIMEOUT_SEC';

function badTimeout(raw: string): SubagentError {
  return new SubagentError('E_ARG_INVALID', `the wait timeout "${raw}" is not a number of seconds`, { value: raw, hint: TIMEOUT_HINT });
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
  if (fault) throw badLimit(raw, source, fault);
  return Number(raw.trim());
}

/** The same rule for a number given to the library. */
export function checkLimit(limit: number): number {
  const fault = !Number.isInteger(limit) || limit < 0 ? 'is not a whole number' : limit > MAX_LIMIT ? `is too large: at most ${MAX_LIMIT}` : null;
  if (fault) throw badLimit(String(limit), '--max-concurrent', fault);
  return limit;
}

function badLimit(raw: string, source: string, fault: string): SubagentError {
  return new SubagentError('E_ARG_INVALID', `${source} "${raw}" ${fault}`, {
    value: raw,
    hint: `give the most runs that may run at once, from 1 to ${MAX_LIMIT}, e.g. 4 (0 removes the limit)`,
  });
}

/** The concurrency limit asked for: the option, else SUBAGENT_MAX_CONCURRENT, else none (the registry's stays). */
export function requestedLimit(maxConcurrent: number | undefined, env: NodeJS.ProcessEnv): number | undefined {
  return maxConcurrent !== undefined ? checkLimit(maxConcurrent) : envSetting(env, 'maxConcurrent', parseLimit);
}

/**
 * A free-memory floor as the verbs take it (--min-free-memory, SUBAGENT_MIN_FREE_MEMORY): a size (`4G`);
 * 0 removes the floor.
 */
export function parseMemoryFloor(raw: string, source: string): number {
  const bytes = parseSize(raw);
  if (bytes === null) throw badFloor(raw, source);
  return bytes;
}

/** The same rule for a number of bytes given to the library. */
export function checkMemoryFloor(bytes: number): number {
  if (!Number.isSafeInteger(bytes) || bytes < 0) throw badFloor(String(bytes), '--min-free-memory');
  return bytes;
}

function badFloor(raw: string, source: string): SubagentError {
  return new SubagentError('E_ARG_INVALID', `${source} "${raw}" is not a size`, {
    value: raw,
    hint: `give the memory the machine must have available before a queued run starts, ${SIZE_FORM}, e.g. 4G (0 removes the floor)`,
  });
}

/** The free-memory floor asked for: the option, else SUBAGENT_MIN_FREE_MEMORY, else none (the registry's stays). */
export function requestedMemoryFloor(minFreeMemory: number | undefined, env: NodeJS.ProcessEnv): number | undefined {
  return minFreeMemory !== undefined ? checkMemoryFloor(minFreeMemory) : envSetting(env, 'minFreeMemory', parseMemoryFloor);
}

/** How long cancel waits after its first signal before it escalates: SUBAGENT_CANCEL_GRACE_MS (ms ≥ 0), else 3 s. */
export function cancelGraceMs(env: NodeJS.ProcessEnv): number {
  return envSetting(env, 'cancelGraceMs', parseGraceMs) ?? DEFAULT_CANCEL_GRACE_MS;
}

function parseGraceMs(raw: string, source: string): number {
  const hint = `give how long cancel waits after its first signal before it escalates, e.g. ${DEFAULT_CANCEL_GRACE_MS}, or unset it`;
  return decimal(raw, source, (ms) => ms >= 0, 'a number of milliseconds', hint);
}

/** A plain number given as text that `ok` takes; else E_ARG_INVALID saying `what` it must be. */
function decimal(raw: string, source: string, ok: (n: number) => boolean, what: string, hint: string): number {
  const n = Number(raw);
  if (raw.trim() === '' || !Number.isFinite(n) || !ok(n)) throw new SubagentError('E_ARG_INVALID', `${source} "${raw}" is not ${what}`, { value: raw, hint });
  return n;
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
  return envSetting(env, 'stallSec', parseStallSec) ?? DEFAULT_STALL_SEC;
}

/** How long a search's pattern may take to match, in seconds: an orchestrator's shell must never hang on one. */
export const DEFAULT_SEARCH_TIMEOUT_SEC = 10;

/** The bound on a search's matching in ms: SUBAGENT_SEARCH_TIMEOUT_SEC (seconds > 0), else 10 s. */
export function searchTimeoutMs(env: NodeJS.ProcessEnv): number {
  return (envSetting(env, 'searchTimeoutSec', parseSearchTimeout) ?? DEFAULT_SEARCH_TIMEOUT_SEC) * 1000;
}

function parseSearchTimeout(raw: string, source: string): number {
  const hint = `give the seconds a search's pattern may take to match, e.g. ${DEFAULT_SEARCH_TIMEOUT_SEC}, or unset it`;
  return decimal(raw, source, (sec) => sec > 0 && sec <= 86_400, 'a number of seconds above 0 and at most 86400', hint);
}

/** How long an end hook may run (SUBAGENT_HOOK_TIMEOUT_SEC, seconds > 0), else 60 s. */
export function hookTimeoutSec(env: NodeJS.ProcessEnv): number {
  return envSetting(env, 'hookTimeoutSec', parseHookTimeout) ?? DEFAULT_HOOK_TIMEOUT_SEC;
}

function parseHookTimeout(raw: string, source: string): number {
  return decimal(raw, source, (sec) => sec > 0, 'a number of seconds above 0', 'give how long an end hook may run before it is killed, e.g. 60, or unset it');
}

/** How deep runs may nest: SUBAGENT_MAX_DEPTH (a whole number), else 3. */
export function maxDepth(env: NodeJS.ProcessEnv): number {
  return envSetting(env, 'maxDepth', parseDepth) ?? DEFAULT_MAX_DEPTH;
}

function parseDepth(raw: string, source: string): number {
  const fault = wholeNumberFault(raw.trim(), MAX_LIMIT);
  if (fault) {
    throw new SubagentError('E_ARG_INVALID', `${source} "${raw}" ${fault}`, {
      value: raw,
      hint: `give how many levels deep runs may nest, e.g. ${DEFAULT_MAX_DEPTH} (1: no run starts sub-agents), or unset it`,
    });
  }
  return Number(raw.trim());
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
