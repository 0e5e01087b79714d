import { runVerb } from '../cli/main.js';
import { bool, list, parseFlags, str } from '../cli/flags.js';
import type { FlagSpec } from '../cli/flags.js';
import { parseDuration, parseKeepLast, parseMaxSize, prune } from '../commands/prune.js';

const USAGE = `usage: subagent-prune [--older-than DURATION] [--keep-last N] [--max-size SIZE] [--name NAME]… [--prefix P]
                      [--whole-names] [--worktrees] [--dry-run] [--registry DIR]

Remove whole finished runs (record, prompt, event log, transcript copies) to keep the registry small.
A name loses only its oldest runs, each atomically; a run that is not done (scheduled, running, parked,
waiting) stays, and so does every later run of its name. The latest run of a name always stays, unless
--whole-names. At least one of the selectors below is required.

  --older-than DURATION  only runs that finished at least this long ago: a number with s, m, h, d or w
                         (seconds when none), e.g. 7d
  --keep-last N          keep the last N runs of each name
  --max-size SIZE        of the runs selected, remove the oldest first until the registry's runs take at most
                         SIZE (K, M, G or T, powers of 1024, or bytes)
  --name NAME            only this name (repeatable)
  --prefix P             only the names under P/
  --whole-names          the latest run may go too, and with it the name, when it is done and selected
  --worktrees            with --whole-names: a name's worktree goes with it, when git agrees nothing is lost
                         (git worktree remove, not forced; the branch stays)
  --dry-run              say what would go; remove nothing
  --registry DIR         the registry (see start-subagent --help)
  -h, --help             this text
  --version              the version, as one JSON line: {"ok":true,"version","node"}

Output: {"ok":true,"registry","dryRun","removed":[{"name","run","bytes"}],"freedBytes","kept"[,"worktrees":[…]]}
Errors: E_ARG_INVALID (no selector, a bad value), E_REGISTRY_UNTRUSTED (a registry not made here).
`;

const SPEC: FlagSpec = {
  string: ['older-than', 'keep-last', 'max-size', 'name', 'prefix', 'registry'],
  boolean: ['whole-names', 'worktrees', 'dry-run'],
  repeatable: ['name'],
};

export function main(): Promise<void> {
  return runVerb(USAGE, SPEC, async (argv) => {
    const { values } = parseFlags(argv, SPEC);
    const olderThan = str(values, 'older-than');
    const keepLast = str(values, 'keep-last');
    const maxSize = str(values, 'max-size');
    return {
      json: await prune({
        olderThanMs: olderThan === undefined ? undefined : parseDuration(olderThan),
        keepLast: keepLast === undefined ? undefined : parseKeepLast(keepLast),
        maxSizeBytes: maxSize === undefined ? undefined : parseMaxSize(maxSize),
        names: list(values, 'name'),
        prefix: str(values, 'prefix'),
        wholeNames: bool(values, 'whole-names'),
        worktrees: bool(values, 'worktrees'),
        dryRun: bool(values, 'dry-run'),
        registry: str(values, 'registry'),
      }),
    };
  });
}
