import { runVerb } from '../cli/main.js';
import { bool, parseFlags, str } from '../cli/flags.js';
import type { FlagSpec } from '../cli/flags.js';
import { validateName } from '../registry/names.js';
import { SubagentError } from '../base/errors.js';
import { follow } from '../commands/follow.js';
import { parseRunNumber, parseSeconds } from '../commands/settings.js';
import { writeStdout } from '../cli/output.js';
import { result } from '../commands/result.js';

const USAGE = `usage: subagent-result --name NAME [--json] [--run K | --since K | --child ID | --follow [--timeout SEC]] [--registry DIR]

Print the last assistant answer of a run — at once, also while it is still running (what exists so far).

  --name NAME      the run (required)
  --json           one JSON line: {"ok":true,"registry","name","run","sessionId","status","outcome",
                   "exitCode","lastAssistantText","truncated","bytes"}
  --run K          run K of the name instead of the latest
  --since K        the answers of every run after run K (0: all), oldest first: {"runs":[{run,status,
                   outcome,exitCode,lastAssistantText,…}]}; plain text puts a "[subagents: run N, …]" line
                   before each
  --follow         stream the latest run's transcript as it grows (assistant text; one "[tool] …" line
                   per tool call), from any status, until the run ends; the last line is the --json
                   result. With --json every line is JSON: {"type":"message",run,index,role,text,tool?}
                   then the result. --timeout SEC stops following (E_WAIT_TIMEOUT, exit 124).
  --child ID       the answer of one child sub-agent of the run (ids are in status "children");
                   read from the agent CLI's own transcript store where the stream lacks it
  --registry DIR   the registry (see start-subagent --help)
  -h, --help       this text
  --version        the version, as one JSON line: {"ok":true,"version","node"}

Without --json the answer is printed as plain text (errors are still one JSON line, exit 1).
For the shell CLI the answer is the script's stdout; past 1 MiB only its tail is kept, with a note.
`;

const SPEC: FlagSpec = { string: ['name', 'registry', 'run', 'child', 'since', 'timeout'], boolean: ['json', 'follow'] };

export function main(): Promise<void> {
  return runVerb(USAGE, SPEC, async (argv) => {
    const { values } = parseFlags(argv, SPEC);
    const picks = ['run', 'child', 'since', 'follow'].filter((k) => values[k] !== undefined);
    if (picks.length > 1)
      throw new SubagentError('E_ARG_INVALID', `${picks.map((p) => '--' + p).join(' and ')} cannot be combined`, {
        hint: 'choose one run, one child, or the runs since K',
      });
    validateName(str(values, 'name'));
    if (bool(values, 'follow')) {
      const raw = str(values, 'timeout');
      return {
        json: await follow({
          name: str(values, 'name'),
          json: bool(values, 'json'),
          timeoutSec: raw === undefined ? undefined : parseSeconds(raw),
          write: writeStdout,
          registry: str(values, 'registry'),
        }),
      };
    }
    if (values.timeout !== undefined) throw new SubagentError('E_ARG_INVALID', '--timeout goes with --follow', { hint: 'add --follow, or drop --timeout' });
    const run = str(values, 'run');
    const since = str(values, 'since');
    const r = await result({
      name: str(values, 'name'),
      run: run === undefined ? undefined : parseRunNumber(run, '--run'),
      child: str(values, 'child'),
      since: since === undefined ? undefined : parseRunNumber(since, '--since', true),
      registry: str(values, 'registry'),
      // The plain answer is the agent's bytes as they are (a shell's output that is not UTF-8 stays so).
      raw: !bool(values, 'json'),
    });
    if (bool(values, 'json')) return { json: r };
    if ('runs' in r) {
      const parts = r.runs.flatMap((x) => [
        Buffer.from(`[subagents: run ${x.run}, ${x.status}${x.outcome ? ' ' + x.outcome : ''}]\n`),
        ...answerBytes(x.lastAssistantBytes),
      ]);
      return { line: parts, registry: r.registry };
    }
    // No answer (yet): nothing is printed, and that is no error.
    if (!('lastAssistantBytes' in r)) return { text: answerText(r.lastAssistantText), registry: r.registry };
    const note = r.truncated ? `[subagents: output truncated to its last ${r.lastAssistantBytes?.length ?? 0} of ${r.bytes} bytes]\n` : '';
    return { line: [Buffer.from(note), ...answerBytes(r.lastAssistantBytes)], registry: r.registry };
  });
}

/** An answer's bytes as printed: ended by a newline when it has none (nothing for no answer). */
function answerBytes(raw: Buffer | null | undefined): Buffer[] {
  if (!raw?.length) return [];
  return raw[raw.length - 1] === 10 ? [raw] : [raw, Buffer.from('\n')];
}

/** The same for a child's answer, which is text. */
function answerText(text: string | null): string {
  const t = text ?? '';
  return t + (t === '' || t.endsWith('\n') ? '' : '\n');
}
