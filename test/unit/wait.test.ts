import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Throttle, Watch, waitFor } from '../../lib/base/wait.js';
import { monotonicMs } from '../../lib/base/time.js';
import { until } from '../support/wait.js';

test('Throttle: schedules while one is pending join it, and the next run keeps the interval since the last', async () => {
  const runs: number[] = [];
  const t = new Throttle(200, () => runs.push(monotonicMs()));
  try {
    for (let i = 0; i < 5; i++) t.schedule();
    await until('the first run', () => runs.length === 1);
    t.schedule();
    t.schedule();
    await until('the second run', () => runs.length === 2);
    assert.ok(runs[1]! - runs[0]! >= 190, `the second run came ${runs[1]! - runs[0]!} ms after the first`);
    t.every();
    await until('two runs on the interval', () => runs.length >= 4);
  } finally {
    t.stop();
  }
});

test('Watch: a change it keeps calls back, one it filters out does not; a path that cannot be watched is said so', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'subagents-watch-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const seen: Array<string | null> = [];
  let changes = 0;
  const w = new Watch(
    () => changes++,
    (file) => {
      seen.push(file);
      return file === 'wanted';
    },
  );
  try {
    assert.equal(w.add(join(dir, 'missing')), false);
    assert.equal(w.whole, false);
    const other = mkdtempSync(join(tmpdir(), 'subagents-watch-'));
    t.after(() => rmSync(other, { recursive: true, force: true }));
    const w2 = new Watch(() => undefined);
    assert.equal(w2.add(other), true);
    assert.equal(w2.whole, true);
    w2.close();
    assert.equal(w.add(dir), true);
    writeFileSync(join(dir, 'skipped'), 'x');
    writeFileSync(join(dir, 'wanted'), 'x');
    await until('the wanted file seen', () => changes > 0);
    assert.ok(seen.includes('skipped'), `the filter saw ${JSON.stringify(seen)}`);
    assert.equal(changes, seen.filter((f) => f === 'wanted').length);
  } finally {
    w.close();
  }
});

test('waitFor: a path it cannot watch is checked every unwatchedMs, not at the backstop; the deadline ends it timed out', async () => {
  let ready = false;
  setTimeout(() => {
    ready = true;
  }, 50);
  const t0 = monotonicMs();
  const r = await waitFor({
    dirs: () => [join(tmpdir(), 'subagents-wait-no-such-dir', String(process.pid))],
    check: () => ({ done: ready, value: 'ready' }),
    timeoutMs: null,
    backstopMs: 60_000,
    unwatchedMs: 20,
  });
  assert.deepEqual(r, { value: 'ready', timedOut: false });
  assert.ok(monotonicMs() - t0 < 10_000, `took ${monotonicMs() - t0} ms`);
  const late = await waitFor({ dirs: () => [], check: () => ({ done: false, value: 1 }), timeoutMs: 50 });
  assert.deepEqual(late, { value: 1, timedOut: true });
});
