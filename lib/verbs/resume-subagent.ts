import { runVerb } from '../cli/main.js';
import { list, parseFlags, str } from '../cli/flags.js';
import type { FlagSpec } from '../cli/flags.js';
import { readPrompt } from '../commands/prompt.js';
import { validateName } from '../registry/names.js';
import { parseLimit } from '../commands/settings.js';
import { watchFlags } from '../cli/watch-flags.js';
import { resume } from '../commands/resume.js';
import { CAP_FLAGS, parseCapFlags } from '../commands/caps.js';

const USAGE = `usage: resume-subagent --name NAME (--prompt TEXT | --prompt-file PATH | --prompt -) [options] [-- AGENT-ARGS…]

Send a new prompt to the session of a finished run: starts its next run in the background.

  --name NAME          the run to resume (required; it must be done or unknown with its agent dead)
  --prompt TEXT        the prompt; "-" reads it from stdin (byte-exact)
  --prompt-file PATH   read the prompt from a file (byte-exact)
  --cwd DIR            must be the run's own directory (a session belongs to its cwd)
  --model M            default: the run's model
  --variant V          default: the run's variant
  --max-concurrent N   at most N runs of this registry run at once; the rest wait as scheduled,
                       queued, and start in order (0 removes the limit)  [SUBAGENT_MAX_CONCURRENT]
  --executor E         local | slurm (default: the run's own executor)
  --slurm-arg ARG      an sbatch option for the job (repeatable; default: the run's own)
  --stall-after SEC    seconds without a sign of work before the run counts as stalled; 0 or off:
                       never (default: the run's)
  --stall-action A     none | cancel (default: the run's)
  --on-end CMD         the end hook (default: the run's; "" for none)
  --keep-children      keep the processes the agent leaves running (see start-subagent --help);
  --stop-children        or stop them (the default of a new run); default: the run's
  --max-cost USD       spend caps (see start-subagent --help); default: the earlier run's,
  --max-tokens N         "none" drops one
  --max-turns N
  --max-time SEC       the time cap (see start-subagent --help); default: the earlier run's
  --registry DIR       the registry (see start-subagent --help)
  -- ARGS…             replaces the agent-CLI arguments stored with the run (default: repeat them)
  -h, --help           this text
  --version            the version, as one JSON line: {"ok":true,"version","node"}

Output: {"ok":true,"registry","name","pid","executor","jobId","status","sessionId","cli","model","mode":"resume","run","startedAt"}
Errors: E_SESSION_NOT_FOUND (never started), E_AGENT_BUSY (still running), E_CWD_MISMATCH, … (docs/contract.md)
`;

const SPEC: FlagSpec = {
  string: [
    'name',
    'prompt',
    'prompt-file',
    'cwd',
    'model',
    'variant',
    'registry',
    'max-concurrent',
    'executor',
    'slurm-arg',
    'stall-after',
    'stall-action',
    'on-end',
    ...CAP_FLAGS,
  ],
  boolean: ['keep-children', 'stop-children'],
  repeatable: ['slurm-arg'],
  passthrough: true,
};

export function main(): Promise<void> {
  return runVerb(USAGE, SPEC, async (argv) => {
    const { values, passthrough } = parseFlags(argv, SPEC);
    validateName(str(values, 'name'));
    const limitFlag = str(values, 'max-concurrent');
    const limit = limitFlag === undefined ? undefined : parseLimit(limitFlag, '--max-concurrent');
    const caps = parseCapFlags((flag) => str(values, flag));
    const prompt = readPrompt(str(values, 'prompt'), str(values, 'prompt-file'));
    return {
      json: await resume({
        name: str(values, 'name'),
        prompt,
        cwdDir: str(values, 'cwd'),
        model: str(values, 'model'),
        variant: str(values, 'variant'),
        extraArgs: passthrough,
        registry: str(values, 'registry'),
        maxConcurrent: limit,
        ...caps,
        executor: str(values, 'executor'),
        executorArgs: values['slurm-arg'] === undefined ? undefined : list(values, 'slurm-arg'),
        ...watchFlags(values),
      }),
    };
  });
}
