import mri from 'mri';
import { SubagentError } from '../base/errors.js';

/** What a verb accepts. Every key is declared; anything else is E_ARG_UNKNOWN. */
export interface FlagSpec {
  /** Flags that take a value. The next argument is taken verbatim, even when it starts with `-`. */
  string: readonly string[];
  boolean: readonly string[];
  /** String flags that may be given more than once (collected into arrays). */
  repeatable?: readonly string[];
  /** String flags whose value is optional: taken only when the next argument matches. */
  optionalValue?: Readonly<Record<string, RegExp>>;
  /** Accept `-- ARGS…` (passed verbatim to the agent CLI). */
  passthrough?: boolean;
}

export interface ParsedFlags {
  values: Record<string, string | string[] | boolean | undefined>;
  passthrough: string[] | null;
}

const HELP = ['--help', '-h'];
const VERSION = ['--version'];

/** `--help`/`-h` as a flag of its own — not as the value of a flag (`--prompt --help` is a prompt). */
export function wantsHelp(argv: readonly string[], spec: FlagSpec): boolean {
  return hasOwnFlag(argv, spec, HELP);
}

/** `--version` as a flag of its own, the same way. */
export function wantsVersion(argv: readonly string[], spec: FlagSpec): boolean {
  return hasOwnFlag(argv, spec, VERSION);
}

function hasOwnFlag(argv: readonly string[], spec: FlagSpec, flags: string[]): boolean {
  const strings = new Set(spec.string);
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--') return false;
    if (flags.includes(arg)) return true;
    if (arg.startsWith('--') && !arg.includes('=') && strings.has(arg.slice(2))) {
      const optional = spec.optionalValue?.[arg.slice(2)];
      const next = argv[i + 1];
      if (!optional || (next !== undefined && optional.test(next))) i++;
    }
  }
  return false;
}

/**
 * Strict parsing in two steps: a pre-pass that knows which flags take values (so `--prompt -x` is the
 * prompt "-x" and `--name 007` stays the string "007"), then mri on `--flag=value` pairs.
 */
export function parseFlags(argv: readonly string[], spec: FlagSpec): ParsedFlags {
  const dashdash = argv.indexOf('--');
  const own = dashdash === -1 ? argv.slice() : argv.slice(0, dashdash);
  const passthrough = dashdash === -1 ? null : argv.slice(dashdash + 1);
  if (passthrough !== null && !spec.passthrough) {
    throw new SubagentError('E_ARG_UNKNOWN', 'this command does not take arguments after "--"', {
      argument: '--',
      hint: 'only start-subagent and resume-subagent pass "-- ARGS…" to the agent CLI',
    });
  }
  const strings = new Set(spec.string);
  const booleans = new Set(spec.boolean);
  const normalised: string[] = [];
  for (let i = 0; i < own.length; i++) {
    const arg = own[i]!;
    if (!arg.startsWith('-') || arg === '-') {
      throw new SubagentError('E_ARG_UNKNOWN', `unexpected argument "${arg}"`, {
        argument: arg,
        hint: 'values belong to flags (e.g. --prompt TEXT); arguments for the agent CLI go after "--"',
      });
    }
    if (!arg.startsWith('--')) throw unknownFlag(arg, spec);
    const eq = arg.indexOf('=');
    const key = eq === -1 ? arg.slice(2) : arg.slice(2, eq);
    if (strings.has(key)) {
      if (eq !== -1) {
        normalised.push(arg);
        continue;
      }
      const optional = spec.optionalValue?.[key];
      const next = own[i + 1];
      if (optional) {
        if (next !== undefined && optional.test(next)) {
          normalised.push(`--${key}=${next}`);
          i++;
        } else normalised.push(`--${key}=`);
        continue;
      }
      if (next === undefined) {
        throw new SubagentError('E_ARG_INVALID', `--${key} needs a value`, { flag: `--${key}`, hint: `write --${key} VALUE` });
      }
      normalised.push(`--${key}=${next}`);
      i++;
    } else if (booleans.has(key)) {
      if (eq !== -1) {
        throw new SubagentError('E_ARG_INVALID', `--${key} is a switch and takes no value`, { flag: `--${key}`, hint: `write --${key} alone` });
      }
      normalised.push(arg);
    } else {
      throw unknownFlag(arg, spec);
    }
  }
  const parsed = mri(normalised, { string: [...spec.string], boolean: [...spec.boolean] }) as Record<string, unknown>;
  const values: ParsedFlags['values'] = {};
  const repeatable = new Set(spec.repeatable ?? []);
  for (const key of spec.string) {
    const v = parsed[key];
    if (v === undefined) continue;
    const list = (Array.isArray(v) ? v : [v]).map(String);
    if (repeatable.has(key)) values[key] = list;
    else if (list.length > 1) {
      throw new SubagentError('E_ARG_INVALID', `--${key} was given ${list.length} times`, { flag: `--${key}`, hint: `give --${key} once` });
    } else values[key] = list[0];
  }
  for (const key of spec.boolean) if (parsed[key] === true) values[key] = true;
  return { values, passthrough };
}

function unknownFlag(arg: string, spec: FlagSpec): SubagentError {
  const key = arg.replace(/^-+/, '').split('=')[0] ?? '';
  const known = [...spec.string, ...spec.boolean];
  const close = known.filter((k) => editDistance(k, key) <= 2).map((k) => `--${k}`);
  return new SubagentError('E_ARG_UNKNOWN', `unknown flag "${arg.split('=')[0]}"`, {
    argument: arg.split('=')[0],
    hint: close.length ? `did you mean ${close.join(' or ')}? (--help lists every flag)` : 'run with --help to list the flags',
  });
}

function editDistance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const cur = row[j]!;
      row[j] = Math.min(row[j]! + 1, row[j - 1]! + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = cur;
    }
  }
  return row[b.length]!;
}

export function str(values: ParsedFlags['values'], key: string): string | undefined {
  const v = values[key];
  return typeof v === 'string' ? v : undefined;
}

export function list(values: ParsedFlags['values'], key: string): string[] {
  const v = values[key];
  return Array.isArray(v) ? v : typeof v === 'string' ? [v] : [];
}

export function bool(values: ParsedFlags['values'], key: string): boolean {
  return values[key] === true;
}
