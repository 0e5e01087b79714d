import { internalBinding } from '../internal-binding.js';

/**
 * For a verb that does a bounded piece of work and exits: V8's optimising compiler (TurboFan) is off from
 * here on; the interpreter and the baseline compiler (Sparkplug) remain. A listing of 1 000 runs makes
 * its per-name loop hot enough for TurboFan, whose background compile (~14 ms of CPU) then competes with
 * the listing on a 2-core machine and holds up its exit: without it `status` took ~7 ms less (1 000 and
 * 10 000 runs alike; docs/design.md, "The status cache"). Not for work that grows with the data (result
 * and search over big event logs keep TurboFan), and never in the library: the caller's process is not
 * ours to tune.
 *
 * `--max-opt` is read at every tiering decision, so setting it late works; it is Node's
 * v8.setFlagsFromString, taken through the binding because node:v8 loads the whole streams stack (~25
 * modules). Not while the build trains the code cache (scripts/code-cache.mjs): V8 stamps a cache with
 * a hash of the flags, and one made under this flag would be refused by every run that loads it.
 */
export function withoutTurbofan(): void {
  if (process.env.SUBAGENT_BUILD_CODE_CACHE === '1') return;
  try {
    internalBinding<{ setFlagsFromString?: (flags: string) => void }>('v8')?.setFlagsFromString?.('--max-opt=1');
  } catch {
    // Only a speed-up.
  }
}
