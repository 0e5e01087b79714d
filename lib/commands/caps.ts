import type { AgentAdapter, CapSupport } from '../agents/types.js';
import { SubagentError } from '../base/errors.js';
import { MIB, SIZE_FORM, parseSize } from '../base/size.js';
import { NO_CAPS, type Caps } from '../registry/record.js';

/**
 * The caps of start and resume (`--max-cost USD`, `--max-tokens N`, `--max-turns N`, `--max-time SEC`,
 * `--max-memory SIZE`; docs/contract.md, "Spend caps"): checked, then refused where the CLI cannot be held
 * to them — all before anything is recorded. How each CLI honours each spend cap is its adapter's
 * (`AgentAdapter.caps`), never decided here; the time and memory caps are the supervisor's, for every CLI.
 */

/** Caps as the library takes them: a number, or null to drop a cap a resume would inherit; undefined: not given. */
export interface CapOptions {
  /** `--max-cost`: US dollars, > 0. */
  maxCostUsd?: number | null | undefined;
  /** `--max-tokens`: a whole number ≥ 1, held to the run's `usage.totalTokens`. */
  maxTokens?: number | null | undefined;
  /** `--max-turns`: a whole number ≥ 1 (a turn is the CLI's, docs/agents/<cli>.md). */
  maxTurns?: number | null | undefined;
  /** `--max-time`: seconds above 0 of the agent's running, wall clock; held by the supervisor for every CLI. */
  maxTimeSec?: number | null | undefined;
  /** `--max-memory`: bytes (a whole number ≥ 1 MiB) of the agent's process tree's RSS; held by the supervisor for every CLI. */
  maxMemoryBytes?: number | null | undefined;
}

export type CapKey = keyof Caps;

interface CapSpec {
  flag: string;
  /** What of the adapter's `caps` says whether the CLI can be held to it; null: every CLI can. */
  support: keyof CapSupport | null;
  /** How its text reads: a whole number, a plain decimal, or a size (lib/base/size.ts). */
  form: 'whole' | 'decimal' | 'size';
  /** What a value must be, for the error. */
  what: string;
  example: string;
}

const CAPS: Record<CapKey, CapSpec> = {
  maxCostUsd: {
    flag: '--max-cost',
    support: 'cost',
    form: 'decimal',
    what: 'an amount of US dollars above 0',
    example: '--max-cost 2.50 (dollars, a plain decimal number)',
  },
  maxTokens: { flag: '--max-tokens', support: 'tokens', form: 'whole', what: 'a whole number of at least 1', example: '--max-tokens 200000' },
  maxTurns: { flag: '--max-turns', support: 'turns', form: 'whole', what: 'a whole number of at least 1', example: '--max-turns 20' },
  maxTimeSec: {
    flag: '--max-time',
    support: null,
    form: 'decimal',
    what: 'a number of seconds above 0',
    example: '--max-time 3600 (seconds, a plain decimal number)',
  },
  maxMemoryBytes: {
    flag: '--max-memory',
    support: null,
    form: 'size',
    what: `a size of at least 1M`,
    example: `--max-memory 2G (${SIZE_FORM})`,
  },
};

const CAP_KEYS = Object.keys(CAPS) as CapKey[];

/** The flag of a cap (`--max-cost`…), for messages. */
export function capFlag(key: CapKey): string {
  return CAPS[key].flag;
}

/** The largest whole cap, and the most digits before the point of a decimal one, taken from text. */
const MAX_WHOLE_CAP = 999_999_999_999_999;
const MAX_DECIMAL_CAP = 999_999_999_999;

function badCap(key: CapKey, value: string): SubagentError {
  const c = CAPS[key];
  const max = c.form === 'decimal' ? MAX_DECIMAL_CAP : MAX_WHOLE_CAP;
  const tooLarge = c.form !== 'size' && /^[0-9]+(\.[0-9]*)?$/.test(value.trim()) && Number(value.trim()) > max;
  return new SubagentError('E_ARG_INVALID', `${c.flag} "${value}" ${tooLarge ? `is too large: at most ${max}` : `is not ${c.what}`}`, {
    flag: c.flag,
    value,
    hint: `e.g. ${c.example}; "none" drops a cap the resumed run would keep`,
  });
}

/** A cap as the verbs take it: a plain decimal above 0, a whole number ≥ 1, or a size ≥ 1M; `none` is null (no cap). */
export function parseCap(key: CapKey, raw: string): number | null {
  const text = raw.trim();
  if (text === 'none') return null;
  const { form } = CAPS[key];
  if (form === 'size') {
    const bytes = parseSize(text);
    if (bytes === null || !capOk(key, bytes)) throw badCap(key, raw);
    return bytes;
  }
  const ok = form === 'whole' ? /^[0-9]{1,15}$/.test(text) : /^([0-9]{1,12}(\.[0-9]*)?|\.[0-9]+)$/.test(text);
  const value = Number(text);
  if (!ok || !(value > 0)) throw badCap(key, raw);
  return value;
}

function capOk(key: CapKey, value: number): boolean {
  switch (CAPS[key].form) {
    case 'whole':
      return Number.isSafeInteger(value) && value >= 1;
    case 'size':
      return Number.isSafeInteger(value) && value >= MIB;
    default:
      return Number.isFinite(value) && value > 0;
  }
}

/** The same rules for the numbers given to the library (null: no cap; undefined: not given). */
export function checkCaps(given: CapOptions): void {
  for (const key of CAP_KEYS) {
    const value = given[key];
    if (value === undefined || value === null) continue;
    if (!capOk(key, value)) throw badCap(key, String(value));
  }
}

/**
 * The caps of a new run: each given one (checked), else the inherited one (a resume keeps the earlier
 * run's caps; a start inherits none). A cap the CLI cannot be held to is `E_ARG_UNSUPPORTED`.
 */
export function settleCaps(adapter: AgentAdapter, given: CapOptions, inherited: Caps = NO_CAPS): Required<Caps> {
  checkCaps(given);
  const caps: Required<Caps> = { ...NO_CAPS };
  for (const key of CAP_KEYS) {
    const v = given[key];
    caps[key] = v === undefined ? (inherited[key] ?? null) : v;
  }
  for (const key of CAP_KEYS) {
    const support = CAPS[key].support;
    if (caps[key] === null || support === null || adapter.caps[support] !== null) continue;
    const { flag } = CAPS[key];
    const kept = given[key] === undefined;
    throw new SubagentError('E_ARG_UNSUPPORTED', `the ${adapter.cli} CLI cannot be held to ${flag}: it does not report what to hold it to while it runs`, {
      cli: adapter.cli,
      flag,
      hint: kept
        ? `the earlier run has ${flag}: resume with ${flag} none`
        : `drop ${flag}, or choose a CLI that can (docs/agents/${adapter.cli}.md, "Spend caps")`,
    });
  }
  return caps;
}

/** The caps given as flags, parsed: `flag('max-cost')` is the flag's text, undefined when it was not given. */
export function parseCapFlags(flag: (name: string) => string | undefined): CapOptions {
  const out: CapOptions = {};
  for (const key of CAP_KEYS) {
    const raw = flag(CAPS[key].flag.slice(2));
    if (raw !== undefined) out[key] = parseCap(key, raw);
  }
  return out;
}

/** The flags of the caps, as a verb's FlagSpec declares them. */
export const CAP_FLAGS = CAP_KEYS.map((k) => CAPS[k].flag.slice(2));
