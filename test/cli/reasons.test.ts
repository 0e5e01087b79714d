/**
 * Why a run stopped (issue 16, point 3) through the real executables: every finished run that did not
 * succeed carries a stable `reason` (docs/contract.md, "Reasons"), null on success, in status (the JSON
 * entry and the table), `status --runs`, `result --json` and the JUnit report (the failure's type).
 * The agent CLIs are fakes on PATH that replay streams captured from the real ones (test/fixtures/agents/)
 * and exit as those did; the real CLIs against the fake model servers: test/e2e/reasons-caps.test.ts.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { FIXTURES } from '../support/paths.js';
import { assertError, assertOk } from '../support/run.js';
import { makeBox } from '../support/box.js';
import { byName, gate, open, startShell, statusOf, untilStatus, waitTerminal } from '../support/shell.js';
import { checkJunit, findAll } from '../support/junit.js';
import { REASONS } from '../../lib/registry/record.js';

const box = makeBox('reasons');
const fakeBin = join(box.dir, 'fakebin');
mkdirSync(fakeBin, { recursive: true });
const withFakes = { PATH: `${fakeBin}:${box.env.PATH}` };

/** Fake CLI programs, one per case: each replays its fixture and exits with the code the real run had. */
const CASES = [
  { cli: 'claude', fixture: 'api-error-401.ndjson', exit: 1, reason: 'auth', error: /Failed to authenticate\. API Error: 401/ },
  { cli: 'claude', fixture: 'api-error-429.ndjson', exit: 1, reason: 'rate-limit', error: /usage limit/ },
  { cli: 'claude', fixture: 'api-error-500.ndjson', exit: 1, reason: 'api-error', error: /API Error: 500/ },
  { cli: 'claude', fixture: 'max-turns.ndjson', exit: 1, reason: 'max-turns', error: /Reached maximum number of turns/ },
  { cli: 'claude', fixture: 'max-budget.ndjson', exit: 1, reason: 'max-cost', error: /Reached maximum budget/ },
  { cli: 'claude', fixture: 'bash-permission-denied.ndjson', exit: 0, reason: 'permission-denied', error: /refused permission for 1 tool call: Bash/ },
  { cli: 'claude', fixture: 'sigterm-early-bash.ndjson', exit: 143, reason: 'crashed', error: /exited with status 143 before reporting a result/ },
  { cli: 'codex', fixture: 'api-error-401.jsonl', exit: 1, reason: 'auth', error: /401 Unauthorized/ },
  { cli: 'codex', fixture: 'usage-limit.jsonl', exit: 1, reason: 'rate-limit', error: /hit your usage limit/ },
  { cli: 'codex', fixture: 'api-error-500.jsonl', exit: 1, reason: 'api-error', error: /high demand/ },
  { cli: 'opencode', fixture: 'error-401.jsonl', exit: 1, reason: 'auth', error: /HTTP 401/ },
  { cli: 'opencode', fixture: 'error-429-retried.jsonl', exit: 1, reason: 'rate-limit', error: /HTTP 429/ },
  { cli: 'opencode', fixture: 'error-500-retried.jsonl', exit: 1, reason: 'api-error', error: /HTTP 500/ },
  { cli: 'opencode', fixture: 'permission-rejected.jsonl', exit: 0, reason: 'permission-denied', error: /auto-rejected/ },
] as const;

/** A fake `program` on PATH that replays the fixture named by the prompt (`$(cat)`) and exits with the code after it. */
function installFakes(): void {
  for (const cli of new Set(CASES.map((c) => c.cli))) {
    const path = join(fakeBin, cli);
    const dir = join(FIXTURES, 'agents', cli);
    writeFileSync(path, `#!/bin/sh\ncase "$1" in db|export) exit 1;; esac\nset -- $(cat)\ncat '${dir}'/"$1"\nexit "$2"\n`);
    chmodSync(path, 0o755);
  }
}

const nameOf = (c: (typeof CASES)[number]) => `r/${c.cli}/${c.fixture.replace(/\.\w+$/, '')}`;

test('each CLI verdict gives its reason: in status, the table, --runs, result --json and the JUnit report', (t) => {
  installFakes();
  for (const c of CASES)
    assertOk(box.run('start-subagent', ['--name', nameOf(c), '--cli', c.cli, '--prompt', `${c.fixture} ${c.exit}`], { env: withFakes }), `start ${nameOf(c)}`);
  const names = CASES.map(nameOf);
  const junit = join(box.dir, 'reasons.xml');
  const done = box.run('status', ['--wait-terminal', '--timeout', '90', '--junit', junit, ...names.flatMap((n) => ['--name', n])]);
  const agents = byName(assertOk(done, 'wait').agents);
  for (const c of CASES) {
    const a = agents[nameOf(c)];
    assert.equal(a.outcome, 'failed', `${nameOf(c)}: ${a.error}`);
    assert.equal(a.reason, c.reason, `${nameOf(c)}: ${a.error}`);
    assert.match(a.error, c.error, nameOf(c));
    assert.equal(a.exitCode, c.exit);
    const r = assertOk(box.run('result', ['--name', nameOf(c), '--json']), 'result');
    assert.equal(r.reason, c.reason);
    const h = assertOk(box.run('status', ['--name', nameOf(c), '--runs']), 'history');
    assert.equal(h.runs[0].reason, c.reason);
  }
  // The JUnit failure's type is the reason: what a dashboard groups failures by.
  const root = checkJunit(t, junit);
  const types = Object.fromEntries(findAll(root, 'testcase').map((tc) => [tc.attrs.name, findAll(tc, 'failure')[0]?.attrs.type]));
  for (const c of CASES) assert.equal(types[nameOf(c)], c.reason, nameOf(c));
  // The table says it briefly, beside the outcome.
  const table = box.run('status', ['--format', 'table', '--prefix', 'r'], { env: { COLUMNS: '200' } });
  assert.equal(table.code, 0, table.stderr);
  for (const c of CASES) assert.match(table.stdout, new RegExp(`${nameOf(c)}\\s.*failed \\(${c.reason}\\)`), nameOf(c));
  assert.ok(
    CASES.every((c) => (REASONS as readonly string[]).includes(c.reason)),
    'every reason is one of the contract',
  );
});

test('shell and the core: exit-code, crashed (a signal nobody here sent), cancelled (also before its start), null on success', async () => {
  startShell(box, 's/ok', 'echo fine');
  startShell(box, 's/exit', 'echo trying; exit 3');
  startShell(box, 's/killed', 'kill -KILL $$');
  const g = join(box.dir, 'gate-cancel');
  startShell(box, 's/cancel', gate(g));
  await untilStatus(box, 's/cancel', (a) => a.status === 'running', 'running');
  assertOk(box.run('cancel', ['--name', 's/cancel']), 'cancel');
  // Cancelled while queued: its agent never started.
  assertOk(box.run('start-subagent', ['--name', 's/hold', '--cli', 'shell', '--prompt', gate(`${g}-hold`), '--max-concurrent', '1']), 'hold');
  assertOk(box.run('start-subagent', ['--name', 's/queued', '--cli', 'shell', '--prompt', 'echo never']), 'queued');
  await untilStatus(box, 's/queued', (a) => a.queued === true, 'queued');
  assertOk(box.run('cancel', ['--name', 's/queued']), 'cancel queued');
  open(`${g}-hold`);
  const a = waitTerminal(box, ['s/ok', 's/exit', 's/killed', 's/cancel', 's/queued', 's/hold']);
  assert.deepEqual(Object.fromEntries(Object.entries(a).map(([n, x]) => [n, [x.outcome, x.reason]])), {
    's/cancel': ['cancelled', 'cancelled'],
    's/exit': ['failed', 'exit-code'],
    's/hold': ['succeeded', null],
    's/killed': ['failed', 'crashed'],
    's/ok': ['succeeded', null],
    's/queued': ['cancelled', 'cancelled'],
  });
  assert.equal(a['s/queued']!.endReason, 'cancelled-before-start');
  assertOk(box.run('start-subagent', ['--name', 's/limit-off', '--cli', 'shell', '--prompt', 'true', '--max-concurrent', '0']), 'limit off');
  waitTerminal(box, ['s/limit-off']);
});

test('a record written before the field existed reads as what its end implies', () => {
  startShell(box, 'old/failed', 'exit 2');
  waitTerminal(box, ['old/failed']);
  const path = join(box.registry, 'agents', 'old+failed', '1', 'record.json');
  const r = JSON.parse(readFileSync(path, 'utf8'));
  delete r.reason;
  delete r.caps;
  writeFileSync(path, JSON.stringify(r));
  const a = statusOf(box, 'old/failed');
  assert.equal(a.reason, 'unknown', 'a failure whose reason was never recorded');
  assert.deepEqual(a.caps, { maxCostUsd: null, maxTokens: null, maxTurns: null, maxTimeSec: null, maxMemoryBytes: null });
  // A reason or caps of the wrong shape is a corrupt record, as any other bad field.
  for (const bad of [{ reason: 7 }, { caps: 'lots' }, { caps: { maxCostUsd: '1', maxTokens: null, maxTurns: null } }]) {
    writeFileSync(path, JSON.stringify({ ...r, ...bad }));
    const e = assertError(box.run('status', ['--name', 'old/failed']), 'E_REGISTRY_CORRUPT');
    assert.match(e.error, new RegExp(`bad field: ${Object.keys(bad)[0]}`));
  }
});
