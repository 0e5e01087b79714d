import { runVerb } from '../cli/main.js';
import { bool, list, parseFlags, str } from '../cli/flags.js';
import type { FlagSpec } from '../cli/flags.js';
import { readPrompt } from '../commands/prompt.js';
import { SubagentError } from '../base/errors.js';
import { validateName } from '../registry/names.js';
import { parseLimit } from '../commands/settings.js';
import { watchFlags } from '../cli/watch-flags.js';
import { start } from '../commands/start.js';
import { batch } from '../commands/batch.js';
import { CAP_FLAGS, parseCapFlags } from '../commands/caps.js';

const USAGE = `usage: start-subagent --name NAME (--prompt TEXT | --prompt-file PATH | --prompt -) [options] [-- AGENT-ARGS…]
       start-subagent --batch FILE|- [--cli C] [--cwd DIR] [--model M] [--variant V] [--agent A] [--max-concurrent N] [--executor E]
                      [--stall-after SEC] [--stall-action A] [--on-end CMD] [--keep-children] [--max-cost USD]
                      [--max-tokens N] [--max-turns N] [--max-time SEC]

Start a new named agent run in the background and return at once with one JSON line.

  --name NAME          the run's name: segments of [A-Za-z0-9._-] joined by "/" (required)
  --prompt TEXT        the prompt; "-" reads it from stdin (byte-exact)
  --prompt-file PATH   read the prompt from a file (byte-exact)
  --cli CLI            opencode (default) | claude | codex | copilot | gemini | qwen | shell [SUBAGENT_CLI]
  --cwd DIR            the agent's working directory (default: here)
  --model M            model for the agent CLI                         [SUBAGENT_MODEL]
  --variant V          model variant / reasoning effort               [SUBAGENT_VARIANT]
  --agent A            the agent CLI's own agent / profile
  --file PATH          attach a file (repeatable; where the CLI supports it)
  --worktree           run in a new git worktree on branch subagents/NAME (under the registry)
  --base REF           the worktree's starting point (default HEAD)
  --max-concurrent N   at most N runs of this registry run at once; the rest wait as scheduled,
                       queued, and start in order (0 removes the limit)  [SUBAGENT_MAX_CONCURRENT]
  --executor E         where the run's supervisor runs: local (default) | slurm (a batch job;
                       the registry must be on a filesystem the nodes share)  [SUBAGENT_EXECUTOR]
  --slurm-arg ARG      one sbatch option for the run's job, whole (a partition, a time limit…;
                       repeatable; kept for resumes)
  --stall-after SEC    report the run stalled after SEC seconds without a sign of work (output or
                       CPU time; docs/stalls.md); default 600, 0 or off: never  [SUBAGENT_STALL_SEC]
  --stall-action A     none (default: only report it) | cancel (cancel a stalled run)
  --on-end CMD         run CMD (/bin/sh -c) once when the run ends, the run's status entry on stdin
                       (docs/hooks.md)
  --keep-children      keep the processes the agent leaves running when it exits (default: stopped
                       2 s after it exits, before the run is done); cancel still reaches them.
                       Resumes keep it
  --max-cost USD       spend caps: past one, the run is stopped and ends failed with the cap
  --max-tokens N         as its reason (max-cost, max-tokens, max-turns); held by the CLI's own limit
  --max-turns N          or by the supervisor, per CLI (docs/agents/); E_ARG_UNSUPPORTED where the
                         CLI reports nothing to hold it to. Resumes keep them ("none" drops one)
  --max-time SEC       stop the run once its agent has run SEC seconds (wall clock; every CLI):
                       it ends failed with reason max-time. Resumes keep it ("none" drops it)
  --batch FILE|-       start many: one JSON object per line with the fields name, prompt | promptFile,
                       cli, cwd, model, variant, agent, files, args, worktree, base, executor,
                       slurmArgs, stallAfter, stallAction, onEnd, keepChildren, maxCost, maxTokens,
                       maxTurns, maxTime; the flags above are defaults for every line.
                       Output: {"ok","started":[…],"failed":[{line,code,error}]}
  --registry DIR       the registry (default: SUBAGENT_DIR, else the nearest .subagents/ above, else ./.subagents)
  -- ARGS…             passed verbatim to the agent CLI, and again on every resume
  -h, --help           this text
  --version            the version, as one JSON line: {"ok":true,"version","node"}

Output: {"ok":true,"registry","name","pid","executor","jobId","status","sessionId","cli","model","mode":"new","run":1,"startedAt"}
Errors: {"ok":false,"code":"E_…","error","details":{"hint"}}; exit 1. See docs/contract.md.
`;

const SPEC: FlagSpec = {
  string: [
    'name',
    'prompt',
    'prompt-file',
    'cli',
    'cwd',
    'model',
    'variant',
    'agent',
    'file',
    'registry',
    'max-concurrent',
    'batch',
    'base',
    'executor',
    'slurm-arg',
    'stall-after',
    'stall-action',
    'on-end',
    ...CAP_FLAGS,
  ],
  boolean: ['worktree', 'keep-children'],
  repeatable: ['file', 'slurm-arg'],
  passthrough: true,
};

export function main(): Promise<void> {
  return runVerb(USAGE, SPEC, async (argv) => {
    const { values, passthrough } = parseFlags(argv, SPEC);
    const limitFlag = str(values, 'max-concurrent');
    const limit = limitFlag === undefined ? undefined : parseLimit(limitFlag, '--max-concurrent');
    const common = {
      cli: str(values, 'cli'),
      cwdDir: str(values, 'cwd'),
      model: str(values, 'model'),
      variant: str(values, 'variant'),
      agent: str(values, 'agent'),
      maxConcurrent: limit,
      worktree: bool(values, 'worktree'),
      base: str(values, 'base'),
      ...parseCapFlags((flag) => str(values, flag)),
      executor: str(values, 'executor'),
      executorArgs: values['slurm-arg'] === undefined ? undefined : list(values, 'slurm-arg'),
      ...watchFlags(values),
    };
    const source = str(values, 'batch');
    if (source !== undefined) {
      const clash = ['name', 'prompt', 'prompt-file', 'file'].filter((k) => values[k] !== undefined);
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
    validateName(str(values, 'name'));
    const prompt = readPrompt(str(values, 'prompt'), str(values, 'prompt-file'));
    return {
      json: await start({
        ...common,
        name: str(values, 'name'),
        prompt,
        files: list(values, 'file'),
        extraArgs: passthrough ?? [],
        registry: str(values, 'registry'),
      }),
    };
  });
}
