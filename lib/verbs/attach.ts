import { runVerb } from '../cli/main.js';
import { parseFlags, str, type FlagSpec } from '../cli/flags.js';
import { SubagentError } from '../base/errors.js';
import { attach } from '../commands/attach.js';

const USAGE = `usage: subagent-attach --name NAME [--registry DIR]

Step into a run's own session: the run's CLI opens in its interactive mode, in this terminal, in the
run's directory, on the run's session (Claude Code, Codex, Gemini CLI, Qwen Code, Copilot CLI and OpenCode,
each resuming it). Talk to the agent as you would; leave the CLI (its own way: /exit, /quit, Ctrl-D,
Ctrl-C twice) to come back. What you did there is recorded as the name's next run — its turns in the
transcript, its usage — so that subagent-result gives it to the orchestrator, and the next
resume-subagent continues the same session with it. While you are in it, the name is held (status shows
"attached": true; a resume is E_AGENT_BUSY). docs/attach.md.

  --name NAME        the run to step into: its latest run must have ended
  --registry DIR     the registry (see start-subagent --help)
  -h, --help         this text
  --version          the version, as one JSON line: {"ok":true,"version","node"}

Output (when you leave): {"ok":true,"registry","name","run","sessionId","cli","outcome","reason",
        "exitCode","error","usage","toolUses"}
`;

const SPEC: FlagSpec = { string: ['name', 'registry'], boolean: [] };

export function main(): Promise<void> {
  return runVerb(USAGE, SPEC, async (argv) => {
    const { values } = parseFlags(argv, SPEC);
    const name = str(values, 'name');
    if (name === undefined) throw new SubagentError('E_NAME_REQUIRED', 'subagent-attach needs --name', { hint: 'give --name NAME: the run to step into' });
    // The CLI draws on the terminal: stdout, or stderr when stdout is taken (`subagent-attach … > end.json`).
    const screen = process.stdout.isTTY ? 1 : process.stderr.isTTY ? 2 : null;
    if (!process.stdin.isTTY || screen === null)
      throw new SubagentError(
        'E_NOT_A_TERMINAL',
        "subagent-attach opens the run's CLI in this terminal: its standard input, and its output or error, are not one",
        {
          hint: 'run it in a terminal (tmux and SSH are fine); an orchestrator continues a run with resume-subagent',
        },
      );
    return { json: await attach({ name, registry: str(values, 'registry'), env: process.env, cwd: process.cwd(), screen }) };
  });
}
