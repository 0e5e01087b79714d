import { runVerb } from '../cli/main.js';
import { parseFlags, str } from '../cli/flags.js';
import { givenOptions, startFlagSpec } from '../cli/start-flags.js';
import { helpLines } from '../commands/options.js';
import { readPrompt } from '../commands/prompt.js';
import { validateName } from '../registry/names.js';
import { resume } from '../commands/resume.js';

const USAGE = `usage: resume-subagent --name NAME (--prompt TEXT | --prompt-file PATH | --prompt -) [options] [-- AGENT-ARGS…]

Send a new prompt to the session of a finished run: starts its next run in the background.

${helpLines('resume')}
  --registry DIR       the registry (see start-subagent --help)
  -- ARGS…             replaces the agent-CLI arguments stored with the run (default: repeat them)
  -h, --help           this text
  --version            the version, as one JSON line: {"ok":true,"version","node"}

Output: {"ok":true,"registry","name","pid","executor","jobId","status","sessionId","cli","model","mode":"resume","run","startedAt"}
Errors: E_SESSION_NOT_FOUND (never started), E_AGENT_BUSY (still running), E_CWD_MISMATCH, … (docs/contract.md)
`;

const SPEC = startFlagSpec('resume', ['registry']);

export function main(): Promise<void> {
  return runVerb(USAGE, SPEC, async (argv) => {
    const { values, passthrough } = parseFlags(argv, SPEC);
    validateName(str(values, 'name'));
    const { name, prompt: promptText, promptFile, ...given } = givenOptions(values, 'resume');
    const prompt = readPrompt(promptText, promptFile);
    return { json: await resume({ ...given, name, prompt, extraArgs: passthrough, registry: str(values, 'registry') }) };
  });
}
