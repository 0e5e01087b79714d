import { runVerb } from '../cli/main.js';
import { bool, list, parseFlags, str } from '../cli/flags.js';
import type { FlagSpec, ParsedFlags } from '../cli/flags.js';
import { checkStatusOptions, plainListing, status, type StatusOptions } from '../commands/status.js';
import { history } from '../commands/history.js';
import { itemsOf, type Rows } from '../commands/listing.js';
import { parseSeconds } from '../commands/settings.js';
import { treeText } from '../views/tree.js';
import { SubagentError } from '../base/errors.js';
import { writeStdout } from '../cli/output.js';
import { escapeSeparators } from '../base/json-line.js';
import { tableSummary, tableText, watchStatus } from '../views/watch.js';
import { treeBytes } from '../registry/prune.js';
import { agentsDir } from '../registry/store.js';

/** The longest pause between redraws of --watch: a day (a timer takes at most 2^31 - 1 ms). */
const MAX_WATCH_SEC = 86_400;

const USAGE = `usage: subagent-status [--name NAME… | --prefix P | --all] [--wait | --wait-terminal] [--timeout SEC]
                       [--require-success] [--junit FILE] [--announce] [--runs] [--tree] [--format json|table] [--watch [SEC]]
                       [--brief | --fields F,F…] [--registry DIR]

List runs (the latest run of each name, sorted by name), or wait for them.

  --name NAME        only these names (repeatable); a name that does not exist is simply not listed
  --prefix P         every name under P/ (e.g. --prefix review for review/api, review/ui)
  --all              every name (the default when listing; needed to wait for everything)
  --wait             return at the first change of any selected run (adds "changed"); with no
                     --name/--prefix/--all, of any run of the registry, a new one included
  --wait-terminal    return when every selected run is done or unknown (a missing name: E_NAME_NOT_FOUND)
  --timeout SEC      how long to wait (default SUBAGENT_WAIT_TIMEOUT_SEC, else 100; 0 = forever);
                     on time-out: E_WAIT_TIMEOUT with the last known "agents", exit 124
  --require-success  exit 1 with E_RUN_FAILED when any selected run did not succeed (all still listed)
  --junit FILE       also write a JUnit XML report: one test case per run, the answer as system-out
  --announce         fire the end hooks of the selected runs found unknown (their supervisor died),
                     once, in a trusted registry, and start a queued follow-up their supervisor could
                     not; without it status never starts a process (docs/hooks.md, docs/contract.md)
  --runs             with one --name: every run of it (run, prompt head, cli, times, outcome)
  --format table     an aligned table for people (colour on a terminal unless NO_COLOR), then a line that
                     counts the runs by state and says the registry's size; default json
  --watch [SEC]      redraw the table in place at every change (and every SEC s, default 2) until every
                     listed run is terminal, with a summary line (running / queued / succeeded / failed);
                     with nothing listed yet it says what it waits for. SEC at most 86400
  --tree             an indented text view of the runs by parent (for people), not JSON
  --brief            each entry of "agents" with only what an orchestrator acts on: name, status, outcome,
                     reason, run, exitCode, finishedAt, stalled (and resetsAt where a run has it)
  --fields F,F…      each entry of "agents" with only these fields, in this order (the JSON views)
  --registry DIR     the registry (see start-subagent --help)
  -h, --help         this text
  --version          the version, as one JSON line: {"ok":true,"version","node"}

Output: {"ok":true,"registry","agents":[{name,status,outcome,cli,model,sessionId,cwd,pid,exitCode,signal,
        startedAt,updatedAt,finishedAt,run,resumeCount,error,usage,children,parent,queued,…}],"queue"?}
Statuses: scheduled, running, done (outcome succeeded|failed|cancelled), unknown (supervisor died).
`;

const SPEC: FlagSpec = {
  string: ['name', 'registry', 'timeout', 'prefix', 'junit', 'format', 'watch', 'fields'],
  optionalValue: { watch: /^[0-9]+(\.[0-9]+)?$/ },
  boolean: ['wait', 'wait-terminal', 'all', 'require-success', 'runs', 'tree', 'announce', 'brief'],
  repeatable: ['name'],
};

/** What the table views need of the terminal. Only they ask: creating process.stdout costs milliseconds. */
function screen() {
  return { write: writeStdout, isTTY: process.stdout.isTTY === true, columns: process.stdout.columns, rows: process.stdout.rows, env: process.env };
}

/**
 * The JSON line of a plain listing, composed around its rows' bytes (the status cache's stretches as the
 * cache holds them: lib/registry/done-cache.ts, spliceViews), written with writev. Byte for byte what
 * jsonLine would print for the same listing (test/cli/status-cache.test.ts holds the two together).
 */
function lineOf(l: Rows & { registry: string; fields: readonly string[] | null }): Buffer[] {
  const head = `${JSON.stringify({ ok: true, registry: l.registry }).slice(0, -1)},"agents":[`;
  const tail = JSON.stringify(l.tail);
  const end = tail === '{}' ? ']}\n' : `],${tail.slice(1)}\n`;
  return [Buffer.from(escapeSeparators(head)), ...itemsOf(l.rows, l.fields), Buffer.from(escapeSeparators(end))];
}

/** --fields a,b,c as its names (blanks around a name ignored); undefined when not given. */
function fieldList(value: string | undefined): string[] | undefined {
  return value === undefined
    ? undefined
    : value
        .split(',')
        .map((f) => f.trim())
        .filter(Boolean);
}

/** The view asked for (--runs, --format, --tree), checked against the JSON fields asked for and each other. */
function viewOf(values: ParsedFlags['values'], options: StatusOptions): { runs: boolean; format: string } {
  const runs = bool(values, 'runs');
  if (
    (options.fields !== undefined || options.brief) &&
    (runs || bool(values, 'tree') || str(values, 'format') === 'table' || str(values, 'watch') !== undefined)
  )
    throw new SubagentError('E_ARG_INVALID', '--brief and --fields choose the fields of the JSON entries of "agents"', {
      hint: 'drop --runs / --tree / --format table / --watch, or drop --brief / --fields',
    });
  if (runs && ((options.names ?? []).length !== 1 || options.wait || options.waitTerminal)) {
    throw new SubagentError('E_ARG_INVALID', '--runs lists the history of one name', { hint: 'give exactly one --name, without --wait' });
  }
  const format = str(values, 'format') ?? 'json';
  if (format !== 'json' && format !== 'table')
    throw new SubagentError('E_ARG_INVALID', `--format ${format} is not json or table`, {
      hint: 'use --format table for people, json (the default) for programs',
    });
  if (bool(values, 'tree') && format === 'table')
    throw new SubagentError('E_ARG_INVALID', '--tree and --format table are two different views', { hint: 'choose one' });
  if (runs && (bool(values, 'tree') || format === 'table'))
    throw new SubagentError('E_ARG_INVALID', '--runs has only the JSON view', { hint: 'drop --tree / --format table' });
  return { runs, format };
}

export function main(): Promise<void> {
  return runVerb(USAGE, SPEC, async (argv) => {
    const { values } = parseFlags(argv, SPEC);
    const options: StatusOptions = {
      names: list(values, 'name'),
      prefix: str(values, 'prefix'),
      all: bool(values, 'all'),
      wait: bool(values, 'wait'),
      waitTerminal: bool(values, 'wait-terminal'),
      requireSuccess: bool(values, 'require-success'),
      junit: str(values, 'junit'),
      announce: bool(values, 'announce'),
      fields: fieldList(str(values, 'fields')),
      brief: bool(values, 'brief'),
      registry: str(values, 'registry'),
    };
    checkStatusOptions(options);
    // Read only by a wait, as SUBAGENT_WAIT_TIMEOUT_SEC is.
    const timeout = str(values, 'timeout');
    if (timeout !== undefined && (options.wait || options.waitTerminal)) options.timeoutSec = parseSeconds(timeout);
    const { runs, format } = viewOf(values, options);
    const watch = str(values, 'watch');
    if (watch !== undefined) {
      const every = watch === '' ? 2 : Number(watch);
      if (!(every > 0) || every > MAX_WATCH_SEC)
        throw new SubagentError('E_ARG_INVALID', `--watch ${watch} is not a number of seconds above 0 and at most ${MAX_WATCH_SEC}`, {
          flag: '--watch',
          value: watch,
          hint: 'e.g. --watch 2 (the table is redrawn at every change anyway; SEC is only the longest pause)',
        });
      if (
        options.wait ||
        options.waitTerminal ||
        runs ||
        bool(values, 'tree') ||
        options.requireSuccess ||
        options.junit !== undefined ||
        timeout !== undefined
      ) {
        throw new SubagentError(
          'E_ARG_INVALID',
          '--watch cannot be combined with --wait, --wait-terminal, --timeout, --require-success, --junit, --runs or --tree',
          { hint: '--watch shows the table until every listed run is terminal; wait with --wait-terminal for the rest' },
        );
      }
      await watchStatus(options, every, screen());
      return { text: '' };
    }
    if (runs) return { json: await history({ name: options.names![0], registry: options.registry }) };
    if (format === 'json' && !bool(values, 'tree')) {
      const listing = plainListing(options);
      if (listing) return { line: lineOf(listing), registry: listing.registry };
    }
    const body = await status(options);
    if (bool(values, 'tree')) return { text: treeText(body.agents), registry: body.registry };
    if (format === 'table') {
      const out = screen();
      const bytes = treeBytes(agentsDir(body.registry));
      return { text: tableText(body.agents, out) + tableSummary(body.agents, bytes, out), registry: body.registry };
    }
    return { json: body };
  });
}
