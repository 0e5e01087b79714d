// The contract suite (test/e2e/contract/): every agent CLI of the table, start → wait → result with a tool
// call, then a resume that continues the same session, and search over both runs — the real pinned CLIs
// against the fake model servers on 127.0.0.1, each row's own checks in its hooks.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { items, requestsWith, uniq } from '../fakes/world.js';
import { stderrTail } from '../support/registry.js';
import { assertOk } from '../support/run.js';
import { ROWS } from './contract/rows.js';
import type { SessionRun, SessionSpec } from './contract/row.js';

for (const row of ROWS) {
  const spec: SessionSpec | undefined = row.session;
  if (!spec) continue;
  test(spec.title, async (t) => {
    const c = await row.open(t, 'resume');
    if (!c) return;
    const { b, srv: s } = c;
    const name = spec.name;
    const x: SessionRun = { c, one: uniq('alpha'), two: uniq('beta'), started: null, a1: null };
    const { one, two } = x;

    const started = await c.start(name, `TOOL:${spec.tool}:echo ${one}`, spec.start?.(c));
    x.started = started;
    assert.equal(started.cli, row.cli);
    assert.equal(started.mode, 'new');
    spec.started?.(started);
    const a1 = await c.wait(name);
    x.a1 = a1;
    assert.equal(a1.outcome, 'succeeded', `${a1.error} ${stderrTail(b.registry, name)}`);
    assert.equal(a1.exitCode, 0);
    assert.equal(a1.error, null);
    if (spec.chosen) assert.equal(a1.sessionId, started.sessionId);
    const session = a1.sessionId;
    assert.equal(a1.toolUses, 1);
    assert.deepEqual(a1.children, []);

    const r1 = assertOk(b.run('result', ['--name', name, '--json']), 'result 1');
    assert.equal(r1.lastAssistantText, `done: ${one}`, 'the fake answers "done: <first line of the tool output>"');
    assert.equal(r1.sessionId, session);
    const plain = b.run('result', ['--name', name]);
    assert.equal(plain.code, 0);
    assert.equal(plain.stdout.trim(), `done: ${one}`);
    x.first = requestsWith(s, one, { main: spec.main })[0];
    assert.ok(x.first, 'the fake received the first prompt');

    const tools = assertOk(b.run('search', ['--name', name, '--pattern', one, '--role', 'tool']), 'search tool');
    if (spec.oneItem) assert.deepEqual(items(tools), ['1:1'], JSON.stringify(tools));
    else assert.ok(tools.matches.length >= 1, JSON.stringify(tools));
    assert.match(tools.matches[0].snippet, new RegExp(`${spec.headline}: echo ${one}`));
    await spec.run1?.(x);

    const resumed = assertOk(b.run('resume-subagent', ['--name', name, ...(spec.resume ?? []), '--prompt', `REPLY:${two}`]), 'resume');
    assert.equal(resumed.mode, 'resume');
    assert.equal(resumed.run, 2);
    assert.equal(resumed.sessionId, session);
    const a2 = await c.wait(name);
    x.a2 = a2;
    assert.equal(a2.outcome, 'succeeded', `${a2.error} ${stderrTail(b.registry, name, 2)}`);
    assert.equal(a2.run, 2);
    assert.equal(a2.sessionId, session, spec.sameSession);
    assert.equal(assertOk(b.run('result', ['--name', name, '--json']), 'result 2').lastAssistantText, two);
    assert.equal(assertOk(b.run('result', ['--name', name, '--run', '1', '--json']), 'result run 1').lastAssistantText, `done: ${one}`);
    x.second = requestsWith(s, two, { main: spec.main })[0];
    assert.ok(x.second, 'the fake received the resume prompt');
    await spec.run2?.(x);

    const both = assertOk(b.run('search', ['--name', name, '--pattern', `${one}|${two}`]), 'search both');
    assert.deepEqual([...new Set(both.matches.map((m: any) => m.run))].sort(), [1, 2], JSON.stringify(both.matches));
    spec.end?.(x, both);
  });
}
