// The contract suite (test/e2e/contract/): every agent CLI of the table with a sub-agent — it shows in
// children, result --child returns its own answer, search --child reads its transcript, and ids that
// are not the run's children are refused. The real pinned CLIs against the fake model servers on 127.0.0.1, each row's own checks in its hooks.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { stderrTail } from '../support/registry.js';
import { assertError, assertOk } from '../support/run.js';
import { ROWS } from './contract/rows.js';

for (const row of ROWS) {
  const spec = row.child;
  if (!spec) continue;
  test(spec.title, async (t) => {
    const c = await row.open(t, 'child');
    if (!c) return;
    const { b } = c;
    const name = spec.name;
    const p = spec.plan();
    await c.start(name, p.prompt);
    await spec.started?.(c, p);
    const a = await c.wait(name);
    assert.equal(a.outcome, 'succeeded', `${a.error} ${stderrTail(b.registry, name)}`);
    assert.equal(a.children.length, 1, JSON.stringify(a.children));
    const child = a.children[0];
    assert.match(child.id, spec.id, spec.idWhy);
    assert.notEqual(child.id, a.sessionId);
    assert.equal(child.cli, row.cli);
    assert.equal(child.description, p.description);
    assert.equal(child.status, 'done');
    assert.equal(child.statusSource, 'stream');
    assert.ok(child.startedAt && child.finishedAt);
    if (spec.toolUses) assert.equal(a.toolUses, spec.toolUses[0], spec.toolUses[1]);
    await spec.child?.(c, p, a, child);

    const r = assertOk(b.run('result', ['--name', name, '--child', child.id, '--json']), 'result --child');
    assert.equal(r.child, child.id);
    assert.equal(r.lastAssistantText, p.answer, spec.answerWhy);
    assert.equal(r.source, 'transcript', spec.sourceWhy);
    // A session that is in the store but is not a child of this run (the run's own), and a made-up id.
    for (const foreign of [a.sessionId, spec.madeUp]) {
      for (const verb of spec.foreignVerbs ?? ['result']) {
        const e = assertError(b.run(verb, ['--name', name, '--child', foreign, ...(verb === 'result' ? ['--json'] : ['--pattern', '.'])]), 'E_CHILD_NOT_FOUND');
        assert.deepEqual(e.details.children, [child.id]);
      }
    }
    await spec.end?.(c, p, a, child);
  });
}
