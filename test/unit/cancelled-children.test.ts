import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cancelledChildren, type ChildAgent } from '../../lib/registry/record.js';

const child = (id: string, status: ChildAgent['status'], finishedAt: string | null = null): ChildAgent => ({
  id,
  cli: 'claude',
  description: null,
  status,
  statusSource: 'stream',
  startedAt: '2026-01-01T00:00:00.000Z',
  finishedAt,
});

const AT = '2026-01-01T00:01:00.000Z';

test("a cancelled run's children: the running ones are cancelled (inferred), the ended ones keep their end", () => {
  const kids = [child('a', 'running'), child('b', 'done', '2026-01-01T00:00:30.000Z'), child('c', 'failed', '2026-01-01T00:00:40.000Z')];
  assert.deepEqual(
    cancelledChildren(kids, AT).map((c) => [c.id, c.status, c.statusSource, c.finishedAt]),
    [
      ['a', 'cancelled', 'inferred', AT],
      ['b', 'done', 'stream', '2026-01-01T00:00:30.000Z'],
      ['c', 'failed', 'stream', '2026-01-01T00:00:40.000Z'],
    ],
  );
});

test("given the ids the stream left open, those are cancelled even after the verdict settled them (the supervisor's case)", () => {
  // The verdict settled the open child `a` from the run's end (done, inferred) before the supervisor saw the cancel.
  const settled = [{ ...child('a', 'done', '2026-01-01T00:00:59.000Z'), statusSource: 'inferred' as const }, child('b', 'done', '2026-01-01T00:00:30.000Z')];
  assert.deepEqual(
    cancelledChildren(settled, AT, { open: new Set(['a']) }).map((c) => [c.id, c.status, c.statusSource, c.finishedAt]),
    [
      ['a', 'cancelled', 'inferred', '2026-01-01T00:00:59.000Z'],
      ['b', 'done', 'stream', '2026-01-01T00:00:30.000Z'],
    ],
  );
  assert.deepEqual(cancelledChildren([], AT), []);
});

test('a child the stream ended at or after the cancel was requested is cancelled: the cancel ended it (Qwen 0.24.4 may say completed)', () => {
  const requested = '2026-01-01T00:00:35.000Z';
  const kids = [
    child('before', 'done', '2026-01-01T00:00:30.000Z'),
    child('after', 'done', '2026-01-01T00:00:36.000Z'),
    child('failed-after', 'failed', requested),
    child('running', 'running'),
  ];
  assert.deepEqual(
    cancelledChildren(kids, AT, { since: requested }).map((c) => [c.id, c.status, c.statusSource, c.finishedAt]),
    [
      ['before', 'done', 'stream', '2026-01-01T00:00:30.000Z'],
      ['after', 'cancelled', 'inferred', '2026-01-01T00:00:36.000Z'],
      ['failed-after', 'cancelled', 'inferred', requested],
      ['running', 'cancelled', 'inferred', AT],
    ],
  );
});
