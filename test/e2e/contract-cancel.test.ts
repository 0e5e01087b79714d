// test-order: first — among the longest files (every agent CLI's cancel, one after another): started before all others (scripts/test.sh).
// The contract suite (test/e2e/contract/): every agent CLI of the table cancelled in the middle of a long
// shell tool — its graceful signal, no process of the run left, cancelled recorded — and, for the CLIs
// that choose their own session id, status showing it while the run still runs. The real pinned CLIs
// against the fake model servers on 127.0.0.1.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { uniq } from '../fakes/world.js';
import { pidsWithCmdline, pidsWithEnv } from '../support/procs.js';
import { readJson, recordOf, runDirPath } from '../support/registry.js';
import { assertOk } from '../support/run.js';
import { until, untilInRun } from '../support/wait.js';
import { ROWS } from './contract/rows.js';
import type { CancelRun } from './contract/row.js';

for (const row of ROWS) {
  const spec = row.cancel;
  test(spec.title, async (t) => {
    const c = await row.open(t, 'cancel', spec.fake);
    if (!c) return;
    const { b } = c;
    const name = spec.name ?? 'long';
    const marker = uniq(spec.marker);
    const started = await c.start(name, `TOOL:${spec.tool ?? 'Bash'}:${spec.command?.(marker) ?? `sleep 300; echo ${marker}`}`);
    // The tool runs: its shell carries the marker on its command line.
    await untilInRun(spec.running, runDirPath(b.registry, name), () => pidsWithCmdline(marker).length > 0);
    const x: CancelRun = { c, marker, started, runMarker: `SUBAGENT_RUN_ID=${recordOf(b.registry, name).runId}` };
    const running = assertOk(await b.runAsync('status', ['--name', name]), 'status').agents[0];
    assert.equal(running.status, 'running');
    spec.during?.(x, running);
    const n = pidsWithEnv(x.runMarker).length;
    assert.ok(n >= spec.procs, spec.procsWhy(n));

    const t0 = Date.now();
    const cancelled = assertOk(await b.runAsync('cancel', ['--name', name]), 'cancel');
    t.diagnostic(`cancel returned after ${Date.now() - t0} ms, ${cancelled.processesSignalled} processes signalled`);
    assert.equal(cancelled.signalSent, spec.signal, spec.signalWhy);
    assert.equal(cancelled.previousStatus, 'running');
    assert.deepEqual(cancelled.survivors, []);
    const a = await c.wait(name);
    x.a = a;
    assert.equal(a.outcome, 'cancelled');
    if (spec.goneAtOnce) {
      assert.equal(pidsWithCmdline(marker).length, 0, spec.goneAtOnce.tool);
      if (spec.goneAtOnce.marker) assert.equal(pidsWithEnv(x.runMarker).length, 0, spec.goneAtOnce.marker);
    }
    spec.cancelled?.(x);
    await until('no process of the run', () => pidsWithEnv(x.runMarker).length === 0 && pidsWithCmdline(marker).length === 0);
    await spec.end?.(x);
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
