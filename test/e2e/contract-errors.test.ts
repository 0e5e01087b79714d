// test-order: first — among the longest files (every agent CLI's API errors, one after another; Qwen's HTTP 500 waits out its retries, ~90 s): started before all others (scripts/test.sh).
// The contract suite (test/e2e/contract/): every agent CLI of the table given the API's errors — an HTTP
// 500 (after the CLI's own retries, where it has them) and the row's others — each run failed with the
// CLI's own words and exit status; and what else the row checks of failures (a resume of a session the
// CLI lost, a flag it has no equivalent for). The real pinned CLIs against the fake model servers on
// 127.0.0.1; the failures are started together and checked in the row's order, so that a run the CLI
// retries for long is checked last.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ROWS } from './contract/rows.js';
import type { Failure } from './contract/row.js';

for (const row of ROWS) {
  const spec = row.errors;
  test(spec.title, async (t) => {
    const c = await row.open(t, 'errors');
    if (!c) return;
    const failures = spec.failures(c);
    for (const f of failures) {
      await f.before?.(c);
      await c.start(f.name, f.prompt, f.extra);
    }
    await spec.also?.(c);
    const byName = new Map(failures.map((f) => [f.name, f]));
    for (const step of spec.order ?? failures.map((f) => f.name)) {
      if (typeof step !== 'string') {
        await step(c);
        continue;
      }
      const f = byName.get(step) as Failure;
      const a = await c.wait(f.name);
      assert.equal(a.outcome, 'failed', `${f.name}: ${JSON.stringify(a)}`);
      assert.equal(a.exitCode, f.exit, f.name);
      if (typeof f.error === 'string') assert.ok(a.error.includes(f.error), a.error);
      else for (const e of [f.error].flat()) assert.match(a.error, e, a.error);
      await f.checked?.(c, a);
    }
    await spec.end?.(c);
  });
}
