import { flagOptions, flagValue, type OptionValues, type Verb } from '../commands/options.js';
import type { FlagSpec, ParsedFlags } from './flags.js';

/** The FlagSpec of start-subagent or resume-subagent: the flags of its options (lib/commands/options.ts), then the verb's own. */
export function startFlagSpec(verb: Verb, own: readonly string[]): FlagSpec {
  const options = flagOptions(verb);
  const flags = (pick: (kind: string) => boolean) => options.filter((o) => pick(o.kind)).map((o) => o.flag!);
  return {
    string: [...flags((k) => k !== 'switch'), ...own],
    boolean: flags((k) => k === 'switch'),
    repeatable: flags((k) => k === 'list' || k === 'names' || k === 'files'),
    passthrough: true,
  };
}

/** The options given as flags, each read as its kind says; the first flag of a key wins (`--keep-children` over `--stop-children`). */
export function givenOptions(values: ParsedFlags['values'], verb: Verb): OptionValues {
  const out: Record<string, unknown> = {};
  for (const o of flagOptions(verb)) {
    const v = values[o.flag!];
    if (v === undefined || v === false || out[o.key] !== undefined) continue;
    out[o.key] = flagValue(o, v);
  }
  return out as OptionValues;
}
