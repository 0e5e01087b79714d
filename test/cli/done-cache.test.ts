// DoneCache (lib/registry/done-cache.ts) through the library: a listing looks names up in order, but
// the cache answers lookups in any order, for names it holds and names it does not, per entry (a
// partial listing) or all at once (a full one). The cache file is the one `status` wrote.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { DoneCache, type CachedView } from '../../lib/registry/done-cache.js';
import { until } from '../support/wait.js';
import { runDirOf } from '../support/registry.js';
import { makeBox } from '../support/box.js';
import { startShell, waitTerminal } from '../support/shell.js';

const b = makeBox('done-cache');

test('lookups in any order find each held name, and only those', async () => {
  const names = ['a', 'b/x', 'b/y', 'c'];
  for (const n of names) startShell(b, n, `echo ${n}`);
  waitTerminal(b, names);
  const records = names.map((n) => join(runDirOf(b.registry, n), 'record.json'));
  await until('the records settled', () => records.every((r) => Date.now() - statSync(r).ctimeMs > 2300), 15_000, 100);
  const listing = b.run('status', []);
  assert.equal(listing.code, 0, listing.stdout);
  const views = new Map<string, string>(listing.json.agents.map((a: any) => [a.name, JSON.stringify(a)]));
  const text = (v: CachedView | null) => (v === null ? null : v.views.toString('utf8', v.start, v.end));
  for (const all of [false, true]) {
    const cache = new DoneCache(b.registry, all);
    for (const n of ['c', 'a', 'zz', 'b/y', 'b', 'a', 'b/x', '0', 'c']) {
      assert.equal(text(cache.lookup(n)), views.get(n) ?? null, `${n} (${all ? 'all at once' : 'one by one'})`);
    }
  }
  // Consecutive names in order join into one stretch of the views: the listing's whole array.
  const cache = new DoneCache(b.registry, true);
  let row: CachedView | undefined;
  for (const n of names) {
    const hit = cache.lookup(n, row);
    assert.ok(hit && (row === undefined || hit === row), n);
    row = hit;
  }
  assert.equal(`[${text(row!)}]`, JSON.stringify(listing.json.agents));
});
