import { runVerb } from '../cli/main.js';
import { bool, parseFlags, str } from '../cli/flags.js';
import type { FlagSpec } from '../cli/flags.js';
import { validateName } from '../registry/names.js';
import { cancel, parseSignal } from '../commands/cancel.js';

const USAGE = `usage: subagent-cancel --name NAME [--signal TERM|INT|KILL] [--recursive] [--registry DIR]

Stop a run and its whole process tree, and record it as cancelled. Works on scheduled runs too.

  --name NAME        the run (required)
  --signal SIG       the first signal: TERM, INT or KILL (default: the CLI's graceful one —
                     INT for claude and codex, TERM otherwise). After a grace period
                     (SUBAGENT_CANCEL_GRACE_MS, default 3000) what remains gets TERM, then KILL.
  --recursive        also cancel every run started from inside this one (its "parent"), at any depth;
                     adds "descendants":[{name,previousStatus,status,outcome,survivors}]
  --registry DIR     the registry (see start-subagent --help)
  -h, --help         this text
  --version          the version, as one JSON line: {"ok":true,"version","node"}

Output: {"ok":true,"registry","name","run","pid","agentPid","signalSent","previousStatus","status","outcome",
         "processesSignalled","survivors":[…]}
Errors: E_NOT_RUNNING for a run that already ended.
`;

const SPEC: FlagSpec = { string: ['name', 'signal', 'registry'], boolean: ['recursive'] };

export function main(): Promise<void> {
  return runVerb(USAGE, SPEC, async (argv) => {
    const { values } = parseFlags(argv, SPEC);
    validateName(str(values, 'name'));
    parseSignal(str(values, 'signal'));
    return {
      json: await cancel({ name: str(values, 'name'), signal: str(values, 'signal'), recursive: bool(values, 'recursive'), registry: str(values, 'registry') }),
    };
  });
}
