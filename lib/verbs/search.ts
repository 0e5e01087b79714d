import { runVerb } from '../cli/main.js';
import { parseFlags, str } from '../cli/flags.js';
import type { FlagSpec } from '../cli/flags.js';
import { validateName } from '../registry/names.js';
import { checkRole, compilePattern, search } from '../commands/search.js';

const USAGE = `usage: subagent-search --name NAME --pattern REGEX [--role any|user|assistant|tool] [--child ID] [--registry DIR]

Search the normalised transcript of every run of a name with a JavaScript regular expression.

  --name NAME        the run (required)
  --pattern REGEX    a JavaScript regular expression (required), e.g. "error|fail"
  --role ROLE        any (default), user (prompts), assistant (answers/output), tool (tool calls)
  --child ID         search one child sub-agent's transcript instead (ids are in status "children")
  --registry DIR     the registry (see start-subagent --help)
  -h, --help         this text
  --version          the version, as one JSON line: {"ok":true,"version","node"}

Output: {"ok":true,"registry","name","matches":[{run,index,role,snippet,line?}],"total","truncated"}
At most 1000 matches are listed; "total" counts them all. Matches do not span lines of shell output.
Matching stops after SUBAGENT_SEARCH_TIMEOUT_SEC seconds (default 10): E_PATTERN_TIMEOUT.
`;

const SPEC: FlagSpec = { string: ['name', 'pattern', 'role', 'registry', 'child'], boolean: [] };

export function main(): Promise<void> {
  return runVerb(USAGE, SPEC, async (argv) => {
    const { values } = parseFlags(argv, SPEC);
    validateName(str(values, 'name'));
    compilePattern(str(values, 'pattern'));
    checkRole(str(values, 'role'));
    return {
      json: await search({
        name: str(values, 'name'),
        pattern: str(values, 'pattern'),
        role: str(values, 'role'),
        child: str(values, 'child'),
        registry: str(values, 'registry'),
      }),
    };
  });
}
