import { runVerb } from '../cli/main.js';
import { bool, list, parseFlags, str } from '../cli/flags.js';
import { status } from '../commands/status.js';

const USAGE = `usage: subagent-status [--name NAME]… [--wait | --wait-terminal] [--timeout SEC] [--registry DIR]

List runs (the latest run of each name, sorted by name), or wait.

  --name NAME        only these names (repeatable); a name that does not exist is simply not listed
  --wait             return at the first change of any named run (adds "changed")
  --wait-terminal    return when every named run is done or unknown (a missing name: E_NAME_NOT_FOUND)
  --timeout SEC      how long to wait (default SUBAGENT_WAIT_TIMEOUT_SEC, else 100; 0 = forever);
                     on time-out: E_WAIT_TIMEOUT with the last known "agents", exit 124
  --registry DIR     the registry (see start-subagent --help)
  -h, --help         this text

Output: {"ok":true,"registry","agents":[{name,status,outcome,cli,model,sessionId,cwd,pid,exitCode,signal,
        startedAt,updatedAt,finishedAt,run,resumeCount,error,usage,children,…}]}
Statuses: scheduled, running, done (outcome succeeded|failed|cancelled), unknown (supervisor died).
`;

export function main(): Promise<void> {
  return runVerb(USAGE, async (argv) => {
    const { values } = parseFlags(argv, {
      string: ['name', 'registry', 'timeout'],
      boolean: ['wait', 'wait-terminal'],
      repeatable: ['name'],
    });
    return {
      json: await status({
        names: list(values, 'name'),
        wait: bool(values, 'wait'),
        waitTerminal: bool(values, 'wait-terminal'),
        timeoutSec: str(values, 'timeout'),
        registry: str(values, 'registry'),
      }),
    };
  });
}
