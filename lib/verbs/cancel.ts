import { runVerb } from '../cli/main.js';
import { bool, parseFlags, str } from '../cli/flags.js';
import type { FlagSpec } from '../cli/flags.js';
import { validateName } from '../registry/names.js';
import { cancel, parseSignal } from '../commands/cancel.js';
import { cancelQueued } from '../commands/follow-ups.js';
import { SubagentError } from '../base/errors.js';

const USAGE = `usage: subagent-cancel --name NAME [--signal TERM|INT|KILL] [--recursive] [--registry DIR]
       subagent-cancel --name NAME --queued [--position N] [--registry DIR]

Stop a run and its whole process tree, and record it as cancelled. Works on scheduled runs too.

  --name NAME        the run (required)
  --signal SIG       the first signal: TERM, INT or KILL (default: the CLI's graceful one —
                     INT for claude and codex, TERM otherwise). After a grace period
                     (SUBAGENT_CANCEL_GRACE_MS, default 3000) what remains gets TERM, then KILL.
  --recursive        also cancel every run started from inside this one (its "parent"), at any depth;
                     adds "descendants":[{name,previousStatus,status,outcome,survivors}]
  --queued           drop the name's queued follow-ups (prompts queued to a busy run) instead, all of them
                     or the one at --position N (1: the next); its runs are not touched.
                     Output: {"ok":true,"registry","name","dropped":[…],"queuedPrompts":[…]}
  --registry DIR     the registry (see start-subagent --help)
  -h, --help         this text
  --version          the version, as one JSON line: {"ok":true,"version","node"}

Output: {"ok":true,"registry","name","run","pid","agentPid","signalSent","previousStatus","status","outcome",
         "processesSignalled","survivors":[…]}
Errors: E_NOT_RUNNING for a run that already ended.
`;

const SPEC: FlagSpec = { string: ['name', 'signal', 'registry', 'position'], boolean: ['recursive', 'queued'] };

export function main(): Promise<void> {
  return runVerb(USAGE, SPEC, async (argv) => {
    const { values } = parseFlags(argv, SPEC);
    validateName(str(values, 'name'));
    const position = str(values, 'position');
    if (bool(values, 'queued')) {
      for (const flag of ['signal', 'recursive'])
        if (values[flag] !== undefined && values[flag] !== false)
          throw new SubagentError('E_ARG_INVALID', `--${flag} stops a run: it cannot be given with --queued`, {
            flag: `--${flag}`,
            hint: 'drop it, or --queued',
          });
      if (position !== undefined && !/^[1-9][0-9]{0,8}$/.test(position))
        throw new SubagentError('E_ARG_INVALID', `--position "${position}" is not a position in the queue`, {
          flag: '--position',
          value: position,
          hint: 'positions count from 1 (the next prompt); subagent-status shows queuedPrompts',
        });
      const positions = position === undefined ? undefined : [Number(position)];
      return { json: await cancelQueued({ name: str(values, 'name'), positions, registry: str(values, 'registry') }) };
    }
    if (position !== undefined) throw new SubagentError('E_ARG_INVALID', '--position needs --queued', { flag: '--position', hint: 'add --queued' });
    parseSignal(str(values, 'signal'));
    return {
      json: await cancel({ name: str(values, 'name'), signal: str(values, 'signal'), recursive: bool(values, 'recursive'), registry: str(values, 'registry') }),
    };
  });
}
