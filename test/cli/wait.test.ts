import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { assertError, ISO_UTC } from '../support/run.js';
import { LONG, until, WAIT_SEC } from '../support/wait.js';
import { hasInotify } from '../support/procs.js';
import { makeBox } from '../support/box.js';
import { expectError, gate, open, startShell, statusOf, untilStatus, waitTerminal } from '../support/shell.js';

const b = makeBox('wait');

describe('status --wait-terminal', () => {
  test('returns ok with the run done, for a run that ends after the waiter started watching', async () => {
    const g = join(b.dir, 'gate-wt');
    startShell(b, 'wt', `${gate(g)}; echo over`);
    await untilStatus(b, 'wt', (a) => a.status === 'running', 'running');
    const w = b.spawn('status', ['--wait-terminal', '--name', 'wt', '--timeout', WAIT_SEC]);
    await until('the waiter watches', () => hasInotify(w.pid) || w.settled(), LONG);
    assert.equal(w.settled(), false, 'the waiter must not return while the run is going');
    open(g);
    const r = await w.done;
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.equal(r.json.ok, true);
    assert.equal(r.json.agents.length, 1);
    assert.equal(r.json.agents[0].name, 'wt');
    assert.equal(r.json.agents[0].status, 'done');
    assert.equal(r.json.agents[0].outcome, 'succeeded');
    assert.equal(r.json.agents[0].exitCode, 0);
  });

  test('waits for every named run: not back while one still runs, back when both ended', async () => {
    const g1 = join(b.dir, 'gate-m1');
    const g2 = join(b.dir, 'gate-m2');
    startShell(b, 'm/one', `${gate(g1)}; exit 0`);
    startShell(b, 'm/two', `${gate(g2)}; exit 5`);
    await untilStatus(b, 'm/two', (a) => a.status === 'running', 'running');
    const w = b.spawn('status', ['--wait-terminal', '--name', 'm/one', '--name', 'm/two', '--timeout', WAIT_SEC]);
    await until('the waiter watches', () => hasInotify(w.pid) || w.settled(), LONG);
    open(g1);
    await untilStatus(b, 'm/one', (a) => a.status === 'done', 'm/one done');
    assert.equal(w.settled(), false, 'm/two still runs: the waiter must still wait');
    open(g2);
    const r = await w.done;
    assert.equal(r.code, 0, r.stdout);
    const by = Object.fromEntries(r.json.agents.map((a: any) => [a.name, a]));
    assert.equal(by['m/one'].outcome, 'succeeded');
    assert.equal(by['m/two'].outcome, 'failed');
    assert.equal(by['m/two'].exitCode, 5);
  });

  test('a supervisor that dies while waited for ends the wait with status unknown', async () => {
    startShell(b, 'dies', 'while :; do sleep 0.05; done');
    const a = await untilStatus(b, 'dies', (x) => x.status === 'running' && x.agentPid, 'running');
    const w = b.spawn('status', ['--wait-terminal', '--name', 'dies', '--timeout', WAIT_SEC]);
    await until('the waiter watches', () => hasInotify(w.pid) || w.settled(), LONG);
    process.kill(a.pid, 'SIGKILL');
    const r = await w.done;
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.equal(r.json.agents[0].status, 'unknown');
    assert.equal(r.json.agents[0].agentAlive, true);
    const c = b.run('cancel', ['--name', 'dies']);
    assert.equal(c.code, 0, c.stdout);
    assert.equal(statusOf(b, 'dies').outcome, 'cancelled');
  });

  test('returns at once for runs that are already done', () => {
    startShell(b, 'quick', 'true');
    waitTerminal(b, ['quick']);
    const r = b.run('status', ['--wait-terminal', '--name', 'quick', '--timeout', '0'], { timeoutMs: 60_000 });
    assert.equal(r.code, 0, r.stdout);
    assert.equal(r.json.agents[0].status, 'done');
  });

  test('a missing name fails fast with E_NAME_NOT_FOUND (even with --timeout 0 = forever)', () => {
    startShell(b, 'present', 'true');
    waitTerminal(b, ['present']);
    const j = expectError(b, 'status', ['--wait-terminal', '--name', 'present', '--name', 'absent', '--timeout', '0'], 'E_NAME_NOT_FOUND', {
      timeoutMs: 60_000,
    });
    assert.match(j.error, /absent/);
    expectError(b, 'status', ['--wait', '--name', 'absent', '--timeout', '0'], 'E_NAME_NOT_FOUND', { timeoutMs: 60_000 });
  });

  test('its timeout is E_WAIT_TIMEOUT, exit 124, with the last known agents', async () => {
    const g = join(b.dir, 'gate-to');
    startShell(b, 'slow', `${gate(g)}`);
    await untilStatus(b, 'slow', (a) => a.status === 'running', 'running');
    const r = b.run('status', ['--wait-terminal', '--name', 'slow', '--timeout', '0.5']);
    const j = assertError(r, 'E_WAIT_TIMEOUT', 124);
    assert.ok(Array.isArray(j.agents), 'the timeout carries the last known agents');
    assert.equal(j.agents.length, 1);
    assert.equal(j.agents[0].name, 'slow');
    assert.equal(j.agents[0].status, 'running');
    // The environment variables set the timeout too.
    for (const env of [{ SUBAGENT_WAIT_TIMEOUT_SEC: '0.5' }, { OPENCODE_PSA_WAIT_TIMEOUT_SEC: '0.5' }]) {
      const r2 = b.run('status', ['--wait-terminal', '--name', 'slow'], { env, timeoutMs: 60_000 });
      const j2 = assertError(r2, 'E_WAIT_TIMEOUT', 124);
      assert.equal(j2.agents[0].status, 'running', JSON.stringify(env));
    }
    // --wait times out the same way.
    const r3 = b.run('status', ['--wait', '--name', 'slow', '--timeout', '0.5']);
    assertError(r3, 'E_WAIT_TIMEOUT', 124);
    open(g);
    waitTerminal(b, ['slow']);
  });

  test('E_WAIT_NAME_REQUIRED: --wait-terminal without --name, --prefix or --all', () => {
    expectError(b, 'status', ['--wait-terminal'], 'E_WAIT_NAME_REQUIRED');
  });

  test('E_ARG_INVALID for a timeout that is not a number (flag or environment)', () => {
    startShell(b, 'tt', 'true');
    waitTerminal(b, ['tt']);
    expectError(b, 'status', ['--wait-terminal', '--name', 'tt', '--timeout', 'soon'], 'E_ARG_INVALID');
    expectError(b, 'status', ['--wait-terminal', '--name', 'tt', '--timeout', '-1'], 'E_ARG_INVALID');
    expectError(b, 'status', ['--wait-terminal', '--name', 'tt'], 'E_ARG_INVALID', { env: { SUBAGENT_WAIT_TIMEOUT_SEC: 'abc' } });
  });
});

describe('status --wait', () => {
  test('with no --name: any run of the registry wakes it — a run of another name — and changed names only that one', async () => {
    const reg = join(b.dir, 'bare-wait');
    const at = ['--registry', reg];
    startShell(b, 'old', 'echo old', at);
    waitTerminal(b, ['old'], { env: { SUBAGENT_DIR: reg } });
    const w = b.spawn('status', ['--wait', '--timeout', WAIT_SEC, ...at]);
    await until('the waiter watches', () => hasInotify(w.pid) || w.settled(), LONG);
    assert.equal(w.settled(), false, 'nothing changed yet');
    startShell(b, 'other/new', 'echo new', at);
    const r = await w.done;
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.equal(r.json.ok, true);
    assert.deepEqual(
      r.json.changed.map((c: any) => [c.name, c.previousStatus]),
      [['other/new', null]],
      'the new run is the change; the done one is not',
    );
    const c = r.json.changed[0];
    assert.ok(['scheduled', 'running', 'done'].includes(c.status), JSON.stringify(c));
    for (const k of ['name', 'previousStatus', 'status', 'exitCode', 'finishedAt']) assert.ok(k in c, `changed has ${k}`);
    assert.deepEqual(
      r.json.agents.map((a: any) => a.name),
      ['old', 'other/new'],
      'the full list beside it',
    );
    waitTerminal(b, ['other/new'], { env: { SUBAGENT_DIR: reg } });
  });

  test('with no --name on an empty registry: the first run started is the change', async () => {
    // An empty registry: named explicitly, it must exist (a missing one is E_REGISTRY_NOT_FOUND).
    const reg = join(b.dir, 'bare-empty');
    mkdirSync(reg, { mode: 0o700 });
    const w = b.spawn('status', ['--wait', '--timeout', WAIT_SEC, '--registry', reg]);
    // Started before the waiter has looked, the run would be in its first view: no change to see.
    await until('the waiter watches', () => hasInotify(w.pid) || w.settled(), LONG);
    startShell(b, 'first', 'echo first', ['--registry', reg]);
    const r = await w.done;
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.deepEqual(
      r.json.changed.map((c: any) => c.name),
      ['first'],
    );
    waitTerminal(b, ['first'], { env: { SUBAGENT_DIR: reg } });
  });

  test('with no --name, nothing changing: E_WAIT_TIMEOUT (exit 124) with the full list', () => {
    const reg = join(b.dir, 'bare-quiet');
    startShell(b, 'quiet', 'true', ['--registry', reg]);
    waitTerminal(b, ['quiet'], { env: { SUBAGENT_DIR: reg } });
    const j = assertError(b.run('status', ['--wait', '--timeout', '0.3', '--registry', reg]), 'E_WAIT_TIMEOUT', 124);
    assert.deepEqual(
      j.agents.map((a: any) => a.name),
      ['quiet'],
    );
  });

  test('a resume of a done run is a change: previousStatus done, the new run number', async () => {
    startShell(b, 'w/resumed', 'echo one');
    waitTerminal(b, ['w/resumed']);
    const w = b.spawn('status', ['--wait', '--name', 'w/resumed', '--timeout', WAIT_SEC]);
    await until('the waiter watches', () => hasInotify(w.pid) || w.settled(), LONG);
    assert.equal(w.settled(), false);
    const r = b.run('resume-subagent', ['--name', 'w/resumed', '--prompt', 'echo two']);
    assert.equal(r.code, 0, r.stdout);
    const out = await w.done;
    assert.equal(out.code, 0, out.stdout + out.stderr);
    assert.equal(out.json.changed.length, 1);
    assert.equal(out.json.changed[0].name, 'w/resumed');
    assert.equal(out.json.changed[0].previousStatus, 'done');
    assert.equal(out.json.changed[0].run, 2);
    assert.ok(['scheduled', 'running', 'done'].includes(out.json.changed[0].status));
    waitTerminal(b, ['w/resumed']);
  });

  test('returns on the first change with changed:[{name, previousStatus, status, exitCode, finishedAt}]', async () => {
    const g = join(b.dir, 'gate-w');
    startShell(b, 'w/changing', `${gate(g)}; exit 4`);
    const g2 = join(b.dir, 'gate-w2');
    startShell(b, 'w/steady', gate(g2));
    await untilStatus(b, 'w/changing', (a) => a.status === 'running', 'running');
    await untilStatus(b, 'w/steady', (a) => a.status === 'running', 'running');
    const w = b.spawn('status', ['--wait', '--name', 'w/changing', '--name', 'w/steady', '--timeout', WAIT_SEC]);
    await until('the waiter watches', () => hasInotify(w.pid) || w.settled(), LONG);
    assert.equal(w.settled(), false, 'nothing changed yet');
    open(g);
    const r = await w.done;
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.equal(r.json.ok, true);
    assert.ok(Array.isArray(r.json.agents));
    assert.equal(r.json.agents.length, 2);
    assert.ok(Array.isArray(r.json.changed));
    assert.equal(r.json.changed.length, 1, JSON.stringify(r.json.changed));
    const c = r.json.changed[0];
    assert.equal(c.name, 'w/changing');
    assert.equal(c.previousStatus, 'running');
    assert.equal(c.status, 'done');
    assert.equal(c.exitCode, 4);
    assert.equal(c.run, 1);
    assert.match(c.finishedAt, ISO_UTC);
    assert.equal(statusOf(b, 'w/steady').status, 'running');
    open(g2);
    waitTerminal(b, ['w/steady']);
  });
});
