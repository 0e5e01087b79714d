import { runVerb } from '../cli/main.js';
import { bool, parseFlags, str } from '../cli/flags.js';
import { validateName } from '../registry/names.js';
import { result } from '../commands/result.js';

const USAGE = `usage: subagent-result --name NAME [--json] [--run K | --child ID] [--registry DIR]

Print the last assistant answer of a run — at once, also while it is still running (what exists so far).

  --name NAME      the run (required)
  --json           one JSON line: {"ok":true,"registry","name","run","sessionId","status","outcome",
                   "exitCode","lastAssistantText","truncated","bytes"}
  --run K          run K of the name instead of the latest
  --child ID       the answer of one child sub-agent of the run (ids are in status "children");
                   read from the agent CLI's own transcript store where the stream lacks it
  --registry DIR   the registry (see start-subagent --help)
  -h, --help       this text

Without --json the answer is printed as plain text (errors are still one JSON line, exit 1).
For the shell CLI the answer is the script's stdout; past 1 MiB only its tail is kept, with a note.
`;

export function main(): Promise<void> {
  return runVerb(USAGE, async (argv) => {
    const { values } = parseFlags(argv, { string: ['name', 'registry', 'run', 'child'], boolean: ['json'] });
    validateName(str(values, 'name'));
    const r = await result({ name: str(values, 'name'), run: str(values, 'run'), child: str(values, 'child'), registry: str(values, 'registry') });
    if (bool(values, 'json')) return { json: r };
    const text = String(r.lastAssistantText);
    const note = r.truncated ? `[subagents: output truncated to its last ${Buffer.byteLength(text)} of ${r.bytes} bytes]\n` : '';
    return { text: note + text + (text === '' || text.endsWith('\n') ? '' : '\n') };
  });
}
