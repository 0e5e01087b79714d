import { runVerb } from '../cli/main.js';
import { parseFlags, str } from '../cli/flags.js';
import { givenOptions, startFlagSpec } from '../cli/start-flags.js';
import { flagOptions, helpLines } from '../commands/options.js';
import { readPrompt } from '../commands/prompt.js';
import { SubagentError } from '../base/errors.js';
import { validateName } from '../registry/names.js';
import { start } from '../commands/start.js';
import { batch } from '../commands/batch.js';

const USAGE = `usage: start-subagent --name NAME (--prompt TEXT | --prompt-file PATH | --prompt -) [options] [-- AGENT-ARGS…]
       start-subagent --batch FILE|- [--cli C] [--acp-command CMD] [--permissions P] [--cwd DIR] [--model M] [--variant V]
                      [--agent A] [--max-concurrent N] [--executor E]
                      [--min-free-memory SIZE] [--after-any] [--stall-after SEC] [--stall-action A] [--on-end CMD] [--keep-children]
                      [--on-limit A] [--limit-prompt TEXT] [--limit-retries N] [--max-cost USD] [--max-tokens N]
                      [--max-turns N] [--max-time SEC] [--max-memory SIZE]

Start a new named agent run in the background and return at once with one JSON line.

${helpLines('start')}
  --batch FILE|-       start many: one JSON object per line with the fields name, prompt | promptFile,
                       cli, acpCommand, permissions, cwd, model, variant, agent, files, args, worktree, base,
                       after, afterAny, executor, slurmArgs, stallAfter, stallAction, onEnd, keepChildren,
                       onLimit, limitPrompt, limitRetries, maxCost, maxTokens, maxTurns, maxTime, maxMemory;
                       the flags above are defaults for every line. A line may follow ("after") the names
                       of other lines: each starts after the lines it names, whatever their place.
                       Output: {"ok","started":[…],"failed":[{line,code,error}]}
  --registry DIR       the registry (default: SUBAGENT_DIR, else the nearest .subagents/ above, else ./.subagents)
  -- ARGS…             passed verbatim to the agent CLI, and again on every resume
  -h, --help           this text
  --version            the version, as one JSON line: {"ok":true,"version","node"}

Output: {"ok":true,"registry","name","pid","executor","jobId","status","sessionId","cli","model","mode":"new","run":1,"startedAt"}
Errors: {"ok":false,"code":"E_…","error","details":{"hint"}}; exit 1. See docs/contract.md.
`;

const SPEC = startFlagSpec('start', ['registry', 'batch']);

export function main(): Promise<void> {
  return runVerb(USAGE, SPEC, async (argv) => {
    const { values, passthrough } = parseFlags(argv, SPEC);
    const { name, prompt: promptText, promptFile, files, ...common } = givenOptions(values, 'start');
    const source = str(values, 'batch');
    if (source !== undefined) {
      const clash = flagOptions('start')
        .filter((o) => !o.batchDefault && values[o.flag!] !== undefined)
        .map((o) => o.flag!);
      if (clash.length || passthrough) {
        throw new SubagentError(
          'E_ARG_INVALID',
          `--batch takes every run from its lines; ${clash.length ? clash.map((c) => '--' + c).join(', ') : '"-- ARGS"'} cannot be given with it`,
          {
            hint: 'put name, prompt, files and args in each JSON line',
          },
        );
      }
      return { json: await batch({ batch: source, defaults: common, registry: str(values, 'registry') }) };
    }
    validateName(name);
    const prompt = readPrompt(promptText, promptFile);
    return {
      json: await start({
        ...common,
        name,
        prompt,
        files,
        extraArgs: passthrough ?? [],
        registry: str(values, 'registry'),
      }),
    };
  });
}
