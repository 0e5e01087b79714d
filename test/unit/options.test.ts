// The options of a start, declared once (lib/commands/options.ts): the contract's table, the verbs'
// flags and --help, the batch line's fields and the environment's rule are all made from, or held to,
// that one table. Through the real executables: test/cli/help-and-flags.test.ts, env-defaults.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from '../support/paths.js';
import { SubagentError } from '../../lib/base/errors.js';
import { BATCH_FIELDS, START_OPTIONS, flagOptions, helpLines, optionsTable, type Verb } from '../../lib/commands/options.js';
import { lineOptions, parseLine } from '../../lib/commands/batch-line.js';
import {
  cancelGraceMs,
  defaultStallSec,
  envSetting,
  hookTimeoutSec,
  maxDepth,
  requestedLimit,
  searchTimeoutMs,
  waitTimeoutMs,
} from '../../lib/commands/settings.js';
import { givenOptions, startFlagSpec } from '../../lib/cli/start-flags.js';
import { parseFlags } from '../../lib/cli/flags.js';

test("docs/contract.md's table of start's options is the one made from the options", () => {
  const contract = readFileSync(join(ROOT, 'docs', 'contract.md'), 'utf8');
  const table = optionsTable();
  assert.ok(contract.includes(`\n${table}\n`), `docs/contract.md, "start-subagent", must hold this table as it is:\n\n${table}\n`);
});

test("start-subagent --help's --batch line names every field of a line (it is written by hand)", () => {
  const usage = readFileSync(join(ROOT, 'lib', 'verbs', 'start-subagent.ts'), 'utf8');
  const batch = usage.slice(usage.indexOf('  --batch FILE|-'), usage.indexOf('  --registry DIR'));
  // `file` is the one-file spelling of `files`.
  for (const field of BATCH_FIELDS.filter((f) => f !== 'file')) assert.match(batch, new RegExp(`(^|[^\\w])${field}($|[^\\w])`), field);
});

test('every option has a flag or a field, and a key is one field of a line at most', () => {
  for (const o of START_OPTIONS) assert.ok(o.flag !== null || o.fields.length > 0, o.key);
  assert.equal(new Set(BATCH_FIELDS).size, BATCH_FIELDS.length);
  assert.deepEqual(BATCH_FIELDS, [
    'name',
    'prompt',
    'promptFile',
    'cli',
    'acpCommand',
    'permissions',
    'cwd',
    'model',
    'variant',
    'agent',
    'file',
    'files',
    'args',
    'worktree',
    'base',
    'after',
    'afterAny',
    'executor',
    'slurmArgs',
    'stallAfter',
    'stallAction',
    'onEnd',
    'keepChildren',
    'onLimit',
    'limitPrompt',
    'limitRetries',
    'maxCost',
    'maxTokens',
    'maxTurns',
    'maxTime',
    'maxMemory',
  ]);
});

test("each verb's --help has a line for each of its flags, at the column, and its FlagSpec declares exactly them", () => {
  for (const verb of ['start', 'resume'] as const) {
    const help = helpLines(verb);
    for (const o of flagOptions(verb)) assert.match(help, new RegExp(`^  --${o.flag}(?= |$)`, 'm'), `${verb}: --${o.flag}`);
    for (const line of help.split('\n')) assert.ok(line.startsWith('  --') || line.startsWith(' '.repeat(23)), `${verb}: ${line}`);
    const spec = startFlagSpec(verb, ['registry']);
    assert.deepEqual([...spec.string, ...spec.boolean].sort(), [...flagOptions(verb).map((o) => o.flag!), 'registry'].sort());
  }
});

test('flags are read as their kind says; --keep-children wins over --stop-children', () => {
  const spec = startFlagSpec('resume', ['registry']);
  const argv = [
    '--name',
    'a',
    '--max-concurrent',
    '4',
    '--stall-after',
    'off',
    '--max-cost',
    'none',
    '--max-turns',
    '3',
    '--slurm-arg',
    'x',
    '--stop-children',
  ];
  assert.deepEqual(givenOptions(parseFlags(argv, spec).values, 'resume'), {
    name: 'a',
    maxConcurrent: 4,
    stallAfterSec: 0,
    maxCostUsd: null,
    maxTurns: 3,
    executorArgs: ['x'],
    keepChildren: false,
  });
  assert.equal(givenOptions(parseFlags(['--keep-children', '--stop-children'], spec).values, 'resume').keepChildren, true);
});

test('a batch line: its fields by kind, the defaults for what it leaves out, stallAfter off drops the default action', () => {
  const line = parseLine(JSON.stringify({ prompt: 'p', file: 'a', files: ['b'], stallAfter: 'off', maxCost: null, maxTurns: '5' }));
  const o = lineOptions(line, '/', { cli: 'shell', stallAction: 'cancel', maxCostUsd: 2, maxTokens: 9, maxConcurrent: 3 });
  assert.equal(o.prompt.toString(), 'p');
  assert.deepEqual(o.files, ['a', 'b']);
  assert.equal(o.cli, 'shell');
  assert.equal(o.stallAfterSec, 0);
  assert.equal(o.stallAction, undefined);
  assert.equal(o.maxCostUsd, null, 'null: no cap, not the default');
  assert.equal(o.maxTokens, 9);
  assert.equal(o.maxTurns, 5);
  assert.equal(o.maxConcurrent, 3);
  assert.equal('promptFile' in o, false);
  for (const [bad, field] of [
    [{ prompt: 'p', worktree: 'yes' }, 'worktree'],
    [{ prompt: 'p', slurmArgs: 'x' }, 'slurmArgs'],
    [{ prompt: 'p', cli: 1 }, 'cli'],
    [{ prompt: 'p', maxTime: true }, 'maxTime'],
  ] as const) {
    assert.throws(
      () => lineOptions(parseLine(JSON.stringify(bad)), '/', {}),
      (e: unknown) => e instanceof SubagentError && e.code === 'E_ARG_INVALID' && e.details.field === field,
    );
  }
  assert.throws(
    () => parseLine('{"colour":1}'),
    (e: unknown) => e instanceof SubagentError && e.code === 'E_ARG_UNKNOWN',
  );
});

test('the environment: a bad value is E_ARG_INVALID naming its variable; unset is the default', () => {
  const bad: Array<[string, (env: NodeJS.ProcessEnv) => unknown]> = [
    ['SUBAGENT_MAX_DEPTH', maxDepth],
    ['SUBAGENT_CANCEL_GRACE_MS', cancelGraceMs],
    ['SUBAGENT_STALL_SEC', defaultStallSec],
    ['SUBAGENT_HOOK_TIMEOUT_SEC', hookTimeoutSec],
    ['SUBAGENT_SEARCH_TIMEOUT_SEC', searchTimeoutMs],
    ['SUBAGENT_MAX_CONCURRENT', (env) => requestedLimit(undefined, env)],
    ['SUBAGENT_WAIT_TIMEOUT_SEC', (env) => waitTimeoutMs(undefined, env)],
    ['OPENCODE_PSA_WAIT_TIMEOUT_SEC', (env) => waitTimeoutMs(undefined, env)],
  ];
  for (const [variable, read] of bad) {
    assert.throws(
      () => read({ [variable]: 'x1' }),
      (e: unknown) =>
        e instanceof SubagentError &&
        e.code === 'E_ARG_INVALID' &&
        e.details.variable === variable &&
        e.message.startsWith(`${variable} "x1" `) &&
        !!e.details.hint,
      variable,
    );
  }
  assert.equal(maxDepth({}), 3);
  assert.equal(maxDepth({ SUBAGENT_MAX_DEPTH: '5' }), 5);
  assert.equal(cancelGraceMs({ SUBAGENT_CANCEL_GRACE_MS: '0' }), 0);
  assert.equal(
    envSetting({ SUBAGENT_MAX_DEPTH: '' }, 'maxDepth', () => 1),
    undefined,
    'empty is unset',
  );
  // An error that is not about the value passes through as it is.
  assert.throws(
    () =>
      envSetting({ SUBAGENT_MAX_DEPTH: '1' }, 'maxDepth', () => {
        throw new SubagentError('E_INTERNAL', 'x');
      }),
    (e: unknown) => e instanceof SubagentError && e.code === 'E_INTERNAL' && e.details.variable === undefined,
  );
});

/** The flags named in the first cell of each row of a verb page's OPTIONS table. */
function pageFlags(page: string): Set<string> {
  const text = readFileSync(join(ROOT, 'docs', 'verbs', page), 'utf8');
  const section = text.slice(text.indexOf('## OPTIONS'), text.indexOf('\n## ', text.indexOf('## OPTIONS') + 1));
  const flags = new Set<string>();
  for (const row of section.split('\n').filter((l) => l.startsWith('| `'))) {
    const first = row.split(' | ')[0]!;
    for (const m of first.matchAll(/`--([a-z][a-z-]*)/g)) flags.add(m[1]!);
  }
  return flags;
}

test("the verb pages' OPTIONS tables (written by hand) name exactly the options of the table, and the verb's own flags", () => {
  const own: Record<Verb, string[]> = {
    start: ['batch', 'registry', 'help', 'version'],
    resume: ['registry', 'revive', 'prefix', 'all', 'queue', 'batch', 'help', 'version'],
  };
  for (const [verb, page] of [
    ['start', 'start-subagent.md'],
    ['resume', 'resume-subagent.md'],
  ] as const) {
    const want = new Set([...flagOptions(verb).map((o) => o.flag!), ...own[verb]]);
    assert.deepEqual([...pageFlags(page)].sort(), [...want].sort(), `docs/verbs/${page}`);
  }
});
