// The environment defaults of the contract, through the real executables: SUBAGENT_CLI picks the CLI,
// SUBAGENT_MODEL / SUBAGENT_VARIANT (or the older OPENCODE_PSA_MODEL / OPENCODE_PSA_VARIANT) are the
// model and variant a start records and hands to the agent, the SUBAGENT_* name wins over the
// OPENCODE_PSA_* one and a flag wins over both. The agent is a fake `opencode` on PATH that writes its
// arguments down and exits (the run may fail: only what was recorded and passed matters). And the wait
// timeout: --timeout > SUBAGENT_WAIT_TIMEOUT_SEC > OPENCODE_PSA_WAIT_TIMEOUT_SEC. And a bad value of a setting is
// E_ARG_INVALID naming its variable, for every verb that reads it, with nothing started or written.
import { test, describe, before } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { assertError } from '../support/run.js';
import { makeBox, testBox } from '../support/box.js';
import { settledTree } from '../support/registry.js';
import { expectError, gate, open, startShell, untilStatus, waitTerminal } from '../support/shell.js';

const b = makeBox('env-defaults');
const fakeBin = join(b.dir, 'fakebin');
/** The fake agent runs in the run's cwd and leaves its arguments there, one per line. */
const FAKE_OPENCODE = `#!/bin/sh\nprintf '%s\\n' "$@" > args\nexit 0\n`;

before(() => {
  mkdirSync(fakeBin, { recursive: true });
  writeFileSync(join(fakeBin, 'opencode'), FAKE_OPENCODE);
  chmodSync(join(fakeBin, 'opencode'), 0o755);
});

interface Case {
  name: string;
  env: Record<string, string>;
  flags: string[];
  cli: string;
  model: string | null;
  variant: string | null;
}

/** Starts `c` (no --cli unless a flag says so) in a directory of its own; returns the start line, the finished record and the agent's argv. */
function startCase(c: Case): { start: any; record: any; argv: string[] | null } {
  const cwd = join(b.dir, 'cwd-' + c.name);
  mkdirSync(cwd, { recursive: true });
  const r = b.run('start-subagent', ['--name', c.name, '--prompt', 'echo hi', '--cwd', cwd, ...c.flags], {
    env: { PATH: `${fakeBin}:${b.env.PATH}`, ...c.env },
  });
  assert.equal(r.code, 0, `${c.name}: ${r.stdout}${r.stderr}`);
  const record = waitTerminal(b, [c.name])[c.name];
  let argv: string[] | null = null;
  try {
    argv = readFileSync(join(cwd, 'args'), 'utf8').split('\n').slice(0, -1);
  } catch {
    argv = null; // the shell CLI writes nothing
  }
  return { start: r.json, record, argv };
}

/** The value after `flag` in argv, or null when the flag is absent. */
function valueAfter(argv: string[], flag: string): string | null {
  const i = argv.indexOf(flag);
  return i < 0 ? null : argv[i + 1]!;
}

describe('start-subagent applies the environment defaults', () => {
  const M = { SUBAGENT_MODEL: 'prov/sub-model', SUBAGENT_VARIANT: 'sub-variant' };
  const P = { OPENCODE_PSA_MODEL: 'prov/psa-model', OPENCODE_PSA_VARIANT: 'psa-variant' };
  const cases: Case[] = [
    { name: 'env/subagent', env: { SUBAGENT_CLI: 'opencode', ...M }, flags: [], cli: 'opencode', model: 'prov/sub-model', variant: 'sub-variant' },
    { name: 'env/psa', env: { SUBAGENT_CLI: 'opencode', ...P }, flags: [], cli: 'opencode', model: 'prov/psa-model', variant: 'psa-variant' },
    { name: 'env/both', env: { SUBAGENT_CLI: 'opencode', ...P, ...M }, flags: [], cli: 'opencode', model: 'prov/sub-model', variant: 'sub-variant' },
    {
      name: 'env/mixed',
      env: { SUBAGENT_CLI: 'opencode', SUBAGENT_MODEL: 'prov/sub-model', OPENCODE_PSA_VARIANT: 'psa-variant' },
      flags: [],
      cli: 'opencode',
      model: 'prov/sub-model',
      variant: 'psa-variant',
    },
    {
      name: 'env/flags',
      env: { SUBAGENT_CLI: 'opencode', ...P, ...M },
      flags: ['--model', 'prov/flag-model', '--variant', 'flag-variant'],
      cli: 'opencode',
      model: 'prov/flag-model',
      variant: 'flag-variant',
    },
    { name: 'env/none', env: { SUBAGENT_CLI: 'opencode' }, flags: [], cli: 'opencode', model: null, variant: null },
    // The CLI flag beats SUBAGENT_CLI; a CLI without models ignores the model defaults (no E_ARG_UNSUPPORTED).
    { name: 'env/shell', env: { SUBAGENT_CLI: 'opencode', ...M, ...P }, flags: ['--cli', 'shell'], cli: 'shell', model: null, variant: null },
  ];
  for (const c of cases) {
    test(`${c.name}: cli ${c.cli}, model ${c.model}, variant ${c.variant}`, () => {
      const { start, record, argv } = startCase(c);
      assert.equal(start.cli, c.cli, JSON.stringify(start));
      assert.equal(start.model, c.model, 'the start line');
      assert.equal(record.cli, c.cli);
      assert.equal(record.model, c.model, 'the record');
      assert.equal(record.variant, c.variant, 'the record');
      if (c.cli === 'opencode') {
        assert.ok(argv, `the fake opencode ran (${JSON.stringify(record)})`);
        assert.equal(argv[0], 'run');
        assert.equal(valueAfter(argv, '--model'), c.model, `the agent's arguments: ${argv.join(' ')}`);
        assert.equal(valueAfter(argv, '--variant'), c.variant, `the agent's arguments: ${argv.join(' ')}`);
      } else assert.equal(argv, null, 'no opencode ran');
    });
  }
});

describe('status --wait-terminal takes its timeout from the environment', () => {
  const g = join(b.dir, 'gate-wait');
  before(async () => {
    startShell(b, 'slow', gate(g));
    await untilStatus(b, 'slow', (a) => a.status === 'running', 'running');
  });

  /** The seconds a --wait-terminal on the gated run gave up after (details.timeoutSec of its E_WAIT_TIMEOUT). */
  async function timedOutAfter(env: Record<string, string>, flags: string[] = []): Promise<number> {
    const r = await b.runAsync('status', ['--wait-terminal', '--name', 'slow', ...flags], { env });
    const j = assertError(r, 'E_WAIT_TIMEOUT', 124);
    assert.equal(j.agents[0].name, 'slow');
    return j.details.timeoutSec;
  }

  test('OPENCODE_PSA_WAIT_TIMEOUT_SEC alone; SUBAGENT_WAIT_TIMEOUT_SEC wins over it; --timeout wins over both', async () => {
    assert.equal(await timedOutAfter({ OPENCODE_PSA_WAIT_TIMEOUT_SEC: '0.7' }), 0.7);
    assert.equal(await timedOutAfter({ SUBAGENT_WAIT_TIMEOUT_SEC: '0.5', OPENCODE_PSA_WAIT_TIMEOUT_SEC: '0.7' }), 0.5);
    // The losing variable is not even read: a bad value there is no error.
    assert.equal(await timedOutAfter({ SUBAGENT_WAIT_TIMEOUT_SEC: '0.5', OPENCODE_PSA_WAIT_TIMEOUT_SEC: 'soon' }), 0.5);
    assert.equal(await timedOutAfter({ SUBAGENT_WAIT_TIMEOUT_SEC: 'soon', OPENCODE_PSA_WAIT_TIMEOUT_SEC: 'soon' }, ['--timeout', '0.6']), 0.6);
    // The run is still going: none of these waits touched it.
    open(g);
    assert.equal(waitTerminal(b, ['slow']).slow.outcome, 'succeeded');
  });
});

describe('a bad value in the environment is E_ARG_INVALID naming the variable, and nothing is started or written', () => {
  // The one rule of docs/contract.md, "Environment": never a silent default.
  const START = ['--name', 'bad/env', '--cli', 'shell', '--prompt', 'true'];
  const starts: Array<[variable: string, value: string]> = [
    ['SUBAGENT_MAX_DEPTH', 'three'],
    ['SUBAGENT_MAX_DEPTH', '-1'],
    ['SUBAGENT_STALL_SEC', 'ten'],
    ['SUBAGENT_MAX_CONCURRENT', 'many'],
    ['SUBAGENT_CANCEL_GRACE_MS', 'soon'],
    ['SUBAGENT_CANCEL_GRACE_MS', '-5'],
    ['SUBAGENT_HOOK_TIMEOUT_SEC', '0'],
    ['SUBAGENT_EXECUTOR', 'cloud'],
    ['SUBAGENT_ON_LIMIT', 'later'],
  ];

  /** The error line of `verb` run with `variable=value`: one line, E_ARG_INVALID, exit 1, the sandbox unchanged, details naming the variable. */
  function refused(box: typeof b, verb: Parameters<typeof expectError>[1], args: string[], variable: string, value: string): void {
    const r = box.run(verb, args, { env: { [variable]: value } });
    assert.equal(r.stdout.split('\n').filter((l) => l !== '').length, 1, `one line: ${r.stdout}`);
    assert.equal(r.stderr, '');
    const j = expectError(box, verb, args, 'E_ARG_INVALID', { env: { [variable]: value } });
    assert.equal(j.details.variable, variable, JSON.stringify(j));
    assert.equal(j.details.value, value, JSON.stringify(j));
    assert.ok(j.error.startsWith(`${variable} "${value}" `), j.error);
  }

  test('start-subagent: each setting it reads, into a registry that does not exist yet (it is not created)', (t) => {
    const fresh = testBox(t, 'env-bad-start');
    for (const [variable, value] of starts) refused(fresh, 'start-subagent', START, variable, value);
    assert.deepEqual(settledTree(fresh.dir), []);
  });

  test('resume-subagent, subagent-cancel, subagent-status --wait-terminal, subagent-search: the settings each reads', (t) => {
    const box = testBox(t, 'env-bad-others');
    startShell(box, 'done', 'echo hi');
    waitTerminal(box, ['done']);
    const resume = ['--name', 'done', '--prompt', 'true'];
    for (const [variable, value] of starts.filter(([v]) => v !== 'SUBAGENT_MAX_DEPTH' && v !== 'SUBAGENT_EXECUTOR')) {
      // A resume keeps the run's stall time and --on-limit: SUBAGENT_STALL_SEC and SUBAGENT_ON_LIMIT are a new run's defaults only.
      if (variable !== 'SUBAGENT_STALL_SEC' && variable !== 'SUBAGENT_ON_LIMIT') refused(box, 'resume-subagent', resume, variable, value);
    }
    refused(box, 'cancel', ['--name', 'done'], 'SUBAGENT_CANCEL_GRACE_MS', 'soon');
    refused(box, 'status', ['--wait-terminal', '--name', 'done'], 'SUBAGENT_WAIT_TIMEOUT_SEC', 'soon');
    refused(box, 'search', ['--name', 'done', '--pattern', 'hi'], 'SUBAGENT_SEARCH_TIMEOUT_SEC', 'soon');
  });

  test('a flag that overrides the setting leaves the variable unread', () => {
    const box = makeBox('env-bad-override');
    const s = startShell(box, 'over', 'true', ['--stall-after', '30', '--max-concurrent', '0'], {
      env: { SUBAGENT_STALL_SEC: 'ten', SUBAGENT_MAX_CONCURRENT: 'many' },
    });
    assert.equal(s.ok, true);
    assert.equal(waitTerminal(box, ['over']).over.stallAfterSec, 30);
  });
});
