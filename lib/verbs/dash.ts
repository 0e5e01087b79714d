import { runVerb } from '../cli/main.js';
import { list, parseFlags, str, type FlagSpec } from '../cli/flags.js';
import { SubagentError } from '../base/errors.js';
import { validateName } from '../registry/names.js';
import { Dash } from '../views/dash/app.js';

const USAGE = `usage: subagent-dash [--name NAME… | --prefix P] [--registry DIR]

A live dashboard of the registry's runs, for a person at a terminal: runs at work first (running,
queued, parked), then finished ones, each with the runs started from it and its own sub-agents; status
and reason, CLI and model, elapsed, tools, tokens and cost, memory, last activity. Open a run to read
its conversation as it streams; cancel or resume it from here. docs/dash.md.

  --name NAME        only this name (repeatable)
  --prefix P         only the runs under P/
  --registry DIR     the registry (see start-subagent --help)
  -h, --help         this text
  --version          the version, as one JSON line: {"ok":true,"version","node"}

Keys: ↑↓ or j/k move, PgUp/PgDn, g/G first/last, Enter opens a run (Esc back), / filters, c cancels
(after y), r resumes with a typed prompt, Tab (in a run) steps through its sub-agents, q quits.
Plain ASCII without colour when NO_COLOR is set or TERM=dumb. It prints nothing when it ends normally.
`;

const SPEC: FlagSpec = { string: ['registry', 'prefix', 'name'], boolean: [], repeatable: ['name'] };

export function main(): Promise<void> {
  return runVerb(USAGE, SPEC, async (argv) => {
    const { values } = parseFlags(argv, SPEC);
    const prefix = str(values, 'prefix');
    const names = list(values, 'name');
    if (prefix !== undefined) validateName(prefix);
    for (const n of names ?? []) validateName(n);
    if (prefix !== undefined && names?.length) throw new SubagentError('E_ARG_INVALID', '--name and --prefix are two selections', { hint: 'choose one' });
    if (!process.stdin.isTTY || !process.stdout.isTTY)
      throw new SubagentError('E_NOT_A_TERMINAL', 'subagent-dash needs a terminal: its standard input and output are not both one', {
        hint: 'run it in a terminal (tmux and SSH are fine); for a picture of the runs in a pipe use subagent-status --format table',
      });
    await new Dash({
      registry: str(values, 'registry'),
      prefix,
      names,
      env: process.env,
      cwd: process.cwd(),
      io: { input: process.stdin, output: process.stdout },
    }).run();
    return { text: '' };
  });
}
