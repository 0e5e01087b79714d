import { runVerb } from '../cli/main.js';
import { list, parseFlags, str } from '../cli/flags.js';
import { readPrompt } from '../cli/prompt.js';
import { validateName } from '../registry/names.js';
import { parseLimit } from '../queue.js';
import { start } from '../commands/start.js';

const USAGE = `usage: start-subagent --name NAME (--prompt TEXT | --prompt-file PATH | --prompt -) [options] [-- AGENT-ARGS…]

Start a new named agent run in the background and return at once with one JSON line.

  --name NAME          the run's name: segments of [A-Za-z0-9._-] joined by "/" (required)
  --prompt TEXT        the prompt; "-" reads it from stdin (byte-exact)
  --prompt-file PATH   read the prompt from a file (byte-exact)
  --cli CLI            opencode (default) | claude | codex | shell      [SUBAGENT_CLI]
  --cwd DIR            the agent's working directory (default: here)
  --model M            model for the agent CLI                         [SUBAGENT_MODEL]
  --variant V          model variant / reasoning effort               [SUBAGENT_VARIANT]
  --agent A            the agent CLI's own agent / profile
  --file PATH          attach a file (repeatable; where the CLI supports it)
  --max-concurrent N   at most N runs of this registry run at once; the rest wait as scheduled,
                       queued, and start in order (0 removes the limit)  [SUBAGENT_MAX_CONCURRENT]
  --registry DIR       the registry (default: SUBAGENT_DIR, else the nearest .subagents/ above, else ./.subagents)
  -- ARGS…             passed verbatim to the agent CLI, and again on every resume
  -h, --help           this text

Output: {"ok":true,"registry","name","pid","status","sessionId","cli","model","mode":"new","run":1,"startedAt"}
Errors: {"ok":false,"code":"E_…","error","details":{"hint"}}; exit 1. See docs/contract.md.
`;

export function main(): Promise<void> {
  return runVerb(USAGE, async (argv) => {
    const { values, passthrough } = parseFlags(argv, {
      string: ['name', 'prompt', 'prompt-file', 'cli', 'cwd', 'model', 'variant', 'agent', 'file', 'registry', 'max-concurrent'],
      boolean: [],
      repeatable: ['file'],
      passthrough: true,
    });
    validateName(str(values, 'name'));
    const limit = str(values, 'max-concurrent');
    if (limit !== undefined) parseLimit(limit, '--max-concurrent');
    const prompt = readPrompt(str(values, 'prompt'), str(values, 'prompt-file'));
    return {
      json: await start({
        name: str(values, 'name'),
        prompt,
        cli: str(values, 'cli'),
        cwdDir: str(values, 'cwd'),
        model: str(values, 'model'),
        variant: str(values, 'variant'),
        agent: str(values, 'agent'),
        files: list(values, 'file'),
        extraArgs: passthrough ?? [],
        registry: str(values, 'registry'),
        maxConcurrent: str(values, 'max-concurrent'),
      }),
    };
  });
}
