import { errorObject, jsonLine, stdoutFlushed, writeStdout } from './output.js';
import { wantsHelp, type FlagSpec } from './flags.js';
import { resolvedRegistry } from '../commands/common.js';
import { checkpoint } from '../base/checkpoint.js';

/** What a verb prints: one JSON line, text, or a JSON line it composed itself as bytes (status's listing). */
export type VerbResult = { json: Record<string, unknown> } | { text: string; exitCode?: number } | { line: Buffer[] };

/**
 * The shared main of every verb: --help, then the verb, then exactly one line on stdout and an exit
 * code (0 ok, 1 error, 124 wait timeout). Everything is caught, so even a crash prints one JSON line.
 */
export async function runVerb(usage: string, spec: FlagSpec, verb: (argv: string[]) => Promise<VerbResult>): Promise<void> {
  const argv = process.argv.slice(2);
  try {
    if (wantsHelp(argv, spec)) {
      writeStdout(usage.endsWith('\n') ? usage : usage + '\n');
      process.exitCode = 0;
      return;
    }
    const out = await verb(argv);
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
    const { body, exitCode } = errorObject(err, resolvedRegistry());
    writeStdout(jsonLine(body));
    process.exitCode = exitCode;
  }
  // The answer is out and nothing of the verb is pending: leave now rather than let Node tear down its
  // environment piece by piece (~4-6 ms of a start's wall time, measured: docs/design.md, "Starting a run").
  // A stdout that fell back to a queueing stream is left to drain the normal way.
  if (stdoutFlushed()) process.exit();
}

