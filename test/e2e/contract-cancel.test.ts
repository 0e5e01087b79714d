// test-order: first — among the longest files (every agent CLI's cancel, one after another): started before all others (scripts/test.sh).
// The contract suite (test/e2e/contract/): every agent CLI of the table cancelled in the middle of a long
// shell tool — its graceful signal, no process of the run left, cancelled recorded. The real pinned CLIs
// against the fake model servers on 127.0.0.1, each row's own checks in its hooks.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { uniq } from '../fakes/world.js';
import { pidsWithCmdline, pidsWithEnv } from '../support/procs.js';
import { recordOf, runDirPath } from '../support/registry.js';
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
