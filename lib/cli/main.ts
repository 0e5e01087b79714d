import { errorObject, stdoutFlushed, writeStdout } from './output.js';
import { jsonLine } from '../base/json-line.js';
import { wantsHelp, wantsVersion, type FlagSpec } from './flags.js';
import { packageVersion } from './version.js';
import { checkpoint } from '../base/checkpoint.js';

/**
 * What a verb prints: one JSON line (a command's result: `ok` false makes the exit code 1), text, or a
 * JSON line it composed itself as bytes (status's listing, with the registry it lists).
 */
export type VerbResult =
  | { json: { ok: boolean; registry?: string } }
  | { text: string; exitCode?: number; registry?: string }
  | { line: Buffer[]; registry: string };

/**
 * The shared main of every verb: --help, --version, then the verb, then exactly one line on stdout and an exit
 * code (0 ok, 1 error, 124 wait timeout). Everything is caught, so even a crash prints one JSON line.
 */
export async function runVerb(usage: string, spec: FlagSpec, verb: (argv: string[]) => Promise<VerbResult>): Promise<void> {
  const argv = process.argv.slice(2);
  let out: VerbResult | null = null;
  try {
    if (wantsHelp(argv, spec)) {
      writeStdout(usage.endsWith('\n') ? usage : usage + '\n');
      process.exitCode = 0;
      return;
    }
    // One JSON line like every other answer (docs/contract.md): programs read it as they read the rest.
    if (wantsVersion(argv, spec)) out = { json: { ok: true, version: packageVersion(), node: process.version } as { ok: boolean } };
    else out = await verb(argv);
    // A verb that did its work and then met an unexpected exception (test-only: E_INTERNAL's line).
    checkpoint('before-output');
    if ('json' in out) {
      writeStdout(jsonLine(out.json));
      process.exitCode = out.json.ok === false ? 1 : 0;
    } else if ('line' in out) {
      writeStdout(out.line);
      process.exitCode = 0;
    } else {
      writeStdout(out.text);
      process.exitCode = out.exitCode ?? 0;
    }
  } catch (err) {
    // A command names its registry in its own errors; one that failed after it answered, in its answer.
    const registry = out === null ? null : 'json' in out ? (out.json.registry ?? null) : 'line' in out ? out.registry : (out.registry ?? null);
    const { body, exitCode } = errorObject(err, registry);
    writeStdout(jsonLine(body));
    process.exitCode = exitCode;
  }
  // The answer is out and nothing of the verb is pending: leave now rather than let Node tear down its
  // environment piece by piece, which a start would wait for (docs/benchmarks.md, "Measured by hand").
  // A stdout that fell back to a queueing stream is left to drain the normal way.
  if (stdoutFlushed()) process.exit();
}
