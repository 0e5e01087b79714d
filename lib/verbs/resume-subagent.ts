import { runVerb } from '../cli/main.js';
import { parseFlags, str, type FlagSpec, type ParsedFlags } from '../cli/flags.js';
import { givenOptions, startFlagSpec } from '../cli/start-flags.js';
import { helpLines } from '../commands/options.js';
import { readPrompt } from '../commands/prompt.js';
import { SubagentError } from '../base/errors.js';
import { validateName } from '../registry/names.js';
import { resume } from '../commands/resume.js';
import { revive } from '../commands/revive.js';
import { queueBatch, queueResume } from '../commands/follow-ups.js';

const USAGE = `usage: resume-subagent --name NAME (--prompt TEXT | --prompt-file PATH | --prompt -) [options] [-- AGENT-ARGS…]
       resume-subagent --revive (--name NAME | --prefix P | --all) [--prompt TEXT | --prompt-file PATH] [--registry DIR]
       resume-subagent --queue --name NAME (--prompt TEXT | --prompt-file PATH | --prompt -) [--after-any] [--registry DIR]
       resume-subagent --queue --batch FILE|- [--registry DIR]

Send a new prompt to the session of a finished run: starts its next run in the background.

${helpLines('resume')}
  --registry DIR       the registry (see start-subagent --help)
  -- ARGS…             replaces the agent-CLI arguments stored with the run (default: repeat them)
  --revive             after a reboot or a crash: resume every selected run that is unknown with
                       its agent gone, with the options it was started with — a continuation prompt
                       (or --prompt) when its agent had begun, else its own prompt (docs/revive.md).
                       Output: {"ok","revived":[…],"skipped":[{name,why}]}
  --queue              a follow-up: while the run is scheduled, running or parked (or prompts are queued
                       already), queue the prompt for the name's next run instead of refusing it
                       (E_AGENT_BUSY), and answer at once with its position; queued prompts become the
                       name's next runs in turn, in its session with its options, each after the run
                       before it succeeded (--after-any: whatever its outcome). Else a resume at once.
                       Output: {"ok":true,"registry","name","mode":"queued","position","queuedAt","after"}
  --batch FILE|-       with --queue: one follow-up per JSON line, {"name","prompt"|"promptFile","afterAny"},
                       each queued as above, in file order.
                       Output: {"ok","queued":[{line,name,mode,position,run}],"failed":[{line,code,error}]}
  --prefix P           with --revive: the runs under P/
  --all                with --revive: every run of the registry
  -h, --help           this text
  --version            the version, as one JSON line: {"ok":true,"version","node"}

Output: {"ok":true,"registry","name","pid","executor","jobId","status","sessionId","cli","model","mode":"resume","run","startedAt"}
Errors: E_SESSION_NOT_FOUND (never started), E_AGENT_BUSY (still running), E_CWD_MISMATCH, … (docs/contract.md)
`;

const BASE = startFlagSpec('resume', ['registry', 'prefix', 'batch']);
const SPEC: FlagSpec = { ...BASE, boolean: [...BASE.boolean, 'revive', 'all', 'queue'] };

export function main(): Promise<void> {
  return runVerb(USAGE, SPEC, async (argv) => {
    const { values, passthrough } = parseFlags(argv, SPEC);
    if (values.revive === true) return { json: await reviveFrom(values, passthrough) };
    if (values.queue === true) return { json: await queueFrom(values, passthrough) };
    if (values.batch !== undefined)
      throw new SubagentError('E_ARG_INVALID', '--batch queues follow-ups: it needs --queue', {
        flag: '--batch',
        hint: 'give --queue, or start many runs with start-subagent --batch',
      });
    for (const flag of ['prefix', 'all'])
      if (values[flag] !== undefined && values[flag] !== false)
        throw new SubagentError('E_ARG_INVALID', `--${flag} selects runs to revive: it needs --revive`, {
          flag: `--${flag}`,
          hint: 'give --revive, or resume one run with --name',
        });
    validateName(str(values, 'name'));
    const { name, prompt: promptText, promptFile, ...given } = givenOptions(values, 'resume');
    const prompt = readPrompt(promptText, promptFile);
    return { json: await resume({ ...given, name, prompt, extraArgs: passthrough, registry: str(values, 'registry') }) };
  });
}

/** --queue: a follow-up keeps the name's options, so it takes its prompt and --after-any only. */
function queueFrom(values: ParsedFlags['values'], passthrough: string[] | null) {
  const { name, prompt: promptText, promptFile, afterAny, ...given } = givenOptions(values, 'resume');
  const batch = str(values, 'batch');
  if (batch !== undefined) {
    const own = [
      name !== undefined && '--name',
      promptText !== undefined && '--prompt',
      promptFile !== undefined && '--prompt-file',
      afterAny && '--after-any',
    ].find(Boolean);
    if (own || Object.keys(given).length || passthrough !== null)
      throw new SubagentError('E_ARG_INVALID', `--batch takes each follow-up from its line: ${own || 'another option'} cannot be given with it`, {
        flag: '--batch',
        hint: 'put name, prompt (or promptFile) and afterAny on each line',
      });
    return queueBatch({ batch, registry: str(values, 'registry') });
  }
  const other = Object.keys(given);
  if (other.length || passthrough !== null || values.prefix !== undefined || values.all === true) {
    const flag = passthrough !== null ? '-- ARGS' : values.prefix !== undefined ? '--prefix' : values.all === true ? '--all' : `--${other[0]}`;
    throw new SubagentError('E_ARG_INVALID', `--queue keeps the name's own options: ${flag} cannot be given with it`, {
      flag,
      hint: 'give only --name, the prompt and --after-any; resume without --queue to change options',
    });
  }
  validateName(name);
  return queueResume({ name, prompt: readPrompt(promptText, promptFile), afterAny, registry: str(values, 'registry') });
}

/** --revive: the selection and an optional continuation prompt; a run's options are its own, so no other option is taken. */
function reviveFrom(values: ParsedFlags['values'], passthrough: string[] | null) {
  const { name, prompt: promptText, promptFile, ...given } = givenOptions(values, 'resume');
  const other = Object.keys(given);
  if (other.length || passthrough !== null) {
    throw new SubagentError(
      'E_ARG_INVALID',
      `--revive keeps each run's own options: ${passthrough !== null ? '-- ARGS' : `--${other[0]}`} cannot be given with it`,
      {
        hint: 'revive with the options the runs were started with, then resume a run to change them',
      },
    );
  }
  const prompt = promptText !== undefined || promptFile !== undefined ? readPrompt(promptText, promptFile) : undefined;
  return revive({
    names: name !== undefined ? [name] : undefined,
    prefix: str(values, 'prefix'),
    all: values.all === true,
    prompt,
    registry: str(values, 'registry'),
  });
}
