// The contract suite (test/e2e/contract/): every agent CLI of the table, start → wait → result with a tool
// call, then a resume that continues the same session, and search over both runs; and, for the CLIs that
// choose their own session id, status showing it while the run still runs (then cancelled) — the real
// pinned CLIs against the fake model servers on 127.0.0.1, each row's own checks in its hooks.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { items, requestsWith, uniq } from '../fakes/world.js';
import { pidsWithCmdline, pidsWithEnv } from '../support/procs.js';
import { readJson, runDirPath, stderrTail } from '../support/registry.js';
import { assertOk } from '../support/run.js';
import { until, untilInRun } from '../support/wait.js';
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

for (const row of ROWS) {
  const spec = row.busy;
  if (!spec) continue;
  test(spec.title, async (t) => {
    const c = await row.open(t, 'busy', spec.fake);
    if (!c) return;
    const { b } = c;
    const marker = spec.marker();
    const started = await c.start('busy', `TOOL:${spec.tool}:sleep 300; echo ${marker}`);
    assert.equal(started.sessionId, null, spec.choosesWhy);
    const dir = runDirPath(b.registry, 'busy');
    // In its tool (so the cancel below does not race the CLI spawning it).
    await untilInRun(spec.running, dir, () => pidsWithCmdline(marker).length > 0);
    // Polled on the record (status is spawned, and a spawnSync would starve the fake in this process);
    // then status itself must show it.
    await untilInRun(spec.recorded, dir, () => readJson(join(dir, 'record.json')).sessionId);
    const running = assertOk(await b.runAsync('status', ['--name', 'busy']), 'status').agents[0];
    assert.equal(running.status, 'running', JSON.stringify(running));
    const reported = readFileSync(join(dir, 'events.log'), 'utf8').match(spec.reported)?.[1];
    assert.match(reported ?? '', spec.shape);
    assert.equal(running.sessionId, reported, spec.reportedWhy);

    assertOk(await b.runAsync('cancel', ['--name', 'busy']), 'cancel');
    const a = await c.wait('busy');
    assert.equal(a.outcome, 'cancelled');
    assert.equal(a.sessionId, reported);
    const runMarker = `SUBAGENT_RUN_ID=${readJson(join(dir, 'record.json')).runId}`;
    await until('no process of the run', () => pidsWithEnv(runMarker).length === 0 && pidsWithCmdline(marker).length === 0);
  });
}
