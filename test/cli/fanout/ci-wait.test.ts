/**
 * Issue 4, fan-out at scale, through the real executables: waiting for many runs as CI does —
 * `status --wait-terminal` over a prefix, --require-success, and the --junit report (checked against
 * test/fixtures/junit.xsd and a strict parser), also on E_WAIT_TIMEOUT.
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { assertError } from '../../support/run.js';
import { LONG, until, WAIT_SEC } from '../../support/wait.js';
import { hasInotify } from '../../support/procs.js';
import { runDirOf } from '../../support/registry.js';
import { makeBox } from '../../support/box.js';
import { byName, gate, open, resultText, startShell, untilStatus, waitTerminal } from '../../support/shell.js';
import { checkJunit, findAll, validateJunit, type XmlElement } from '../../support/junit.js';

const bCi = makeBox('fan-ci');
const bJoin = makeBox('fan-join');
const bJunit = makeBox('fan-junit');

describe('waiting for many (CI)', () => {
  const OK1_OUT = `<b a="1">Tom & "Jerry" 'n' </b> ]]>`;

  test('--require-success with one failing run exits 1 with E_RUN_FAILED, lists every run, writes JUnit', async (t) => {
    const b = bCi;
    startShell(b, 'ci/ok1', `cat <<'EOF'\n${OK1_OUT}\nEOF\n`);
    startShell(b, 'ci/bad', `echo 'partial <answer> & more'; echo 'boom <x> & "y"' >&2; exit 3`);
    startShell(b, 'ci/ok2', 'echo fine');
    const report = join(b.dir, 'reports', 'ci.xml');
    const r = b.run('status', ['--wait-terminal', '--prefix', 'ci', '--require-success', '--junit', 'reports/ci.xml', '--timeout', WAIT_SEC]);
    const j = assertError(r, 'E_RUN_FAILED', 1);
    assert.deepEqual(
      j.agents.map((a: any) => a.name),
      ['ci/bad', 'ci/ok1', 'ci/ok2'],
    );
    for (const a of j.agents) assert.equal(a.status, 'done', 'the wait finished');
    assert.deepEqual(j.details.failed, ['ci/bad']);
    assert.match(j.error, /ci\/bad/);
    assert.equal(j.junit, report);
    const bad = byName(j.agents)['ci/bad'];
    assert.equal(bad.exitCode, 3);
    assert.match(bad.error, /status 3/);

    const root = checkJunit(t, report);
    // Control: the schema is strict enough to refuse what the report used to hold (a zoned timestamp).
    const zoned = join(b.dir, 'zoned.xml');
    writeFileSync(zoned, readFileSync(report, 'utf8').replace(/timestamp="([^"]+)"/, 'timestamp="$1.123Z"'));
    const refusedZoned = validateJunit(zoned);
    if (refusedZoned) assert.equal(refusedZoned.ok, false, 'the JUnit schema must refuse a timestamp with a fraction and a zone');
    assert.equal(root.attrs.tests, '3');
    assert.equal(root.attrs.failures, '1');
    assert.equal(root.attrs.errors, '0');
    const cases = findAll(root, 'testcase');
    assert.deepEqual(
      cases.map((c) => c.attrs.name),
      ['ci/bad', 'ci/ok1', 'ci/ok2'],
    );
    for (const c of cases) assert.equal(c.attrs.classname, 'subagents.ci');
    const cBad = cases[0]!;
    const fail = cBad.children.filter((c) => c.name === 'failure');
    assert.equal(fail.length, 1);
    assert.match(fail[0]!.text, /exit code 3/);
    assert.ok(fail[0]!.text.includes(bad.error), `the failure holds the error: ${fail[0]!.text}`);
    assert.ok(fail[0]!.attrs.message!.includes('boom <x> & "y"'), `message: ${fail[0]!.attrs.message}`);
    const out = (c: XmlElement) =>
      c.children
        .filter((x) => x.name === 'system-out')
        .map((x) => x.text)
        .join('');
    assert.equal(out(cBad), 'partial <answer> & more\n');
    const cOk1 = cases[1]!;
    assert.equal(cOk1.children.filter((c) => c.name === 'failure' || c.name === 'error').length, 0);
    assert.equal(out(cOk1), `${OK1_OUT}\n`, 'special characters survive escaping');
    assert.equal(out(cases[2]!), 'fine\n');
    const raw = readFileSync(report, 'utf8');
    assert.ok(!raw.includes('Tom & "Jerry"'), 'escaped, not raw');
    assert.ok(raw.includes('&lt;b a=') && raw.includes('&amp;'), 'escaped entities');

    // A plain listing fails the same way; a prefix that selects nothing cannot be waited for.
    assert.deepEqual(assertError(b.run('status', ['--prefix', 'ci', '--require-success']), 'E_RUN_FAILED').details.failed, ['ci/bad']);
    assertError(b.run('status', ['--wait-terminal', '--prefix', 'nothing', '--timeout', WAIT_SEC]), 'E_NAME_NOT_FOUND');

    // --all selects everything; with every run succeeding the same wait exits 0.
    const all = b.run('status', ['--wait-terminal', '--all', '--require-success', '--timeout', WAIT_SEC]);
    assertError(all, 'E_RUN_FAILED', 1);
    assert.equal(all.json.agents.length, 3);
    const allPlain = b.run('status', ['--wait-terminal', '--all', '--timeout', WAIT_SEC]);
    assert.equal(allPlain.code, 0, allPlain.stdout);
    assert.equal(allPlain.json.agents.length, 3);

    startShell(b, 'good/x', `printf 'x \\033[1mbold\\033[0m \\001\\013 \\302\\251\\n'`);
    startShell(b, 'good/big', `i=0; while [ $i -lt 2000 ]; do echo "line $i <&> padding padding padding padding"; i=$((i+1)); done`);
    startShell(b, 'good/y', 'echo y');
    const okr = b.run('status', ['--wait-terminal', '--prefix', 'good', '--require-success', '--junit', join(b.dir, 'good.xml'), '--timeout', WAIT_SEC]);
    assert.equal(okr.code, 0, okr.stdout + okr.stderr);
    assert.equal(okr.json.ok, true);
    assert.deepEqual(
      okr.json.agents.map((a: any) => [a.name, a.outcome]),
      [
        ['good/big', 'succeeded'],
        ['good/x', 'succeeded'],
        ['good/y', 'succeeded'],
      ],
    );
    assert.equal(okr.json.junit, join(b.dir, 'good.xml'));
    const goodRoot = checkJunit(t, join(b.dir, 'good.xml'));
    assert.equal(goodRoot.attrs.failures, '0');
    const gcases = findAll(goodRoot, 'testcase');
    assert.deepEqual(
      gcases.map((c) => c.attrs.name),
      ['good/big', 'good/x', 'good/y'],
    );
    assert.equal(findAll(goodRoot, 'failure').length + findAll(goodRoot, 'error').length, 0);
    // Control characters XML cannot hold are dropped; other text stays.
    assert.equal(out(gcases[1]!), 'x [1mbold[0m  \u00a9\n');
    // A long answer: its last 64 KiB.
    const big = out(gcases[0]!);
    const full = resultText(b, 'good/big');
    assert.ok(full.length > 64 * 1024);
    assert.ok(big.length <= 64 * 1024 && big.length > 60 * 1024, `system-out holds ${big.length} characters`);
    assert.ok(full.endsWith(big), 'the tail of the answer');
  });

  test('a name appearing under the prefix during --wait-terminal joins the wait', async () => {
    const b = bJoin;
    const g1 = join(b.dir, 'gate-1');
    const g2 = join(b.dir, 'gate-2');
    startShell(b, 'j/first', `${gate(g1)}; echo first`);
    const w = b.spawn('status', ['--wait-terminal', '--prefix', 'j', '--timeout', WAIT_SEC]);
    try {
      await until('the waiter watches', () => w.settled() || hasInotify(w.pid), LONG);
      assert.equal(w.settled(), false, 'the waiter did not return early');
      startShell(b, 'j/late', `${gate(g2)}; echo late`);
      await untilStatus(b, 'j/late', (a) => a.status === 'running', 'late running');
      open(g1);
      await untilStatus(b, 'j/first', (a) => a.status === 'done', 'first done');
      open(g2);
      const r = await w.done;
      assert.equal(r.code, 0, r.stdout + r.stderr);
      const m = byName(r.json.agents);
      assert.deepEqual(Object.keys(m).sort(), ['j/first', 'j/late']);
      assert.equal(m['j/late'].status, 'done', 'the wait lasted until the name that joined ended');
      assert.equal(m['j/late'].outcome, 'succeeded');
    } finally {
      open(g1);
      open(g2);
      if (!w.settled()) w.child.kill('SIGKILL');
    }
  });

  test('--junit is written on E_WAIT_TIMEOUT too, with <error> for the unfinished run', async (t) => {
    const b = bJunit;
    const g = join(b.dir, 'gate-t');
    startShell(b, 'to/slow', `echo 'so far & <on>'; ${gate(g)}; echo rest`);
    startShell(b, 'to/quick', 'echo quick');
    await untilStatus(b, 'to/slow', (a) => a.status === 'running', 'slow running');
    waitTerminal(b, ['to/quick']);
    await until('slow printed its first line', () => readFileSync(join(runDirOf(b.registry, 'to/slow'), 'events.log'), 'utf8').length > 0, LONG);
    const file = join(b.dir, 't.xml');
    try {
      const r = b.run('status', ['--wait-terminal', '--prefix', 'to', '--timeout', '1', '--junit', file, '--require-success']);
      const j = assertError(r, 'E_WAIT_TIMEOUT', 124);
      assert.equal(j.junit, file);
      assert.deepEqual(
        j.agents.map((a: any) => a.name),
        ['to/quick', 'to/slow'],
      );
      const root = checkJunit(t, file);
      assert.equal(root.attrs.errors, '1');
      const cases = findAll(root, 'testcase');
      assert.equal(cases.length, 2);
      const slow = cases.find((c) => c.attrs.name === 'to/slow')!;
      const err = slow.children.filter((c) => c.name === 'error');
      assert.equal(err.length, 1);
      assert.equal(err[0]!.attrs.type, 'running');
      assert.equal(
        slow.children
          .filter((c) => c.name === 'system-out')
          .map((c) => c.text)
          .join(''),
        'so far & <on>\n',
        'the answer so far',
      );
    } finally {
      open(g);
    }
    waitTerminal(b, ['to/slow']);
  });
});
