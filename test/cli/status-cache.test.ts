import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, renameSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { until } from '../support/wait.js';
import { runDirOf } from '../support/registry.js';
import { makeBox } from '../support/box.js';
import { gate, open, startShell, untilStatus, waitTerminal } from '../support/shell.js';
import { status } from '../../lib/index.js';
import { doctorView as doctor } from '../support/status-cache.js';

/**
 * The cache of done runs behind the listing (lib/registry/done-cache.ts) must never change what status
 * says: whatever happens to a run after it was cached, the next listing tells the truth, and a damaged
 * or deleted cache changes nothing. A run is cached only once its record files are 2 s old, so the
 * tests wait for that once, after the runs ended.
 */
const b = makeBox('status-cache');
const cachePath = join(b.registry, 'status-cache');
const SETTLE_MS = 2300;
/** Waits until the records of every run of `names` are SETTLE_MS old: old enough to be cached. */
async function settled(names: string[]): Promise<void> {
  const records = names.map((n) => join(runDirOf(b.registry, n), 'record.json'));
  await until(`the records of ${names.join(', ')} settled`, () => records.every((r) => Date.now() - statSync(r).ctimeMs > SETTLE_MS), 10_000, 100);
}

function list(args: string[] = []): string {
  const r = b.run('status', args);
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assert.equal(r.json.ok, true, r.stdout);
  return r.stdout;
}

/** The listing as it is without a cache (which this writes again). */
function fresh(args: string[] = []): string {
  rmSync(cachePath, { force: true });
  return list(args);
}

/**
 * A listing as the cache must reproduce it: a running run is read fresh each time, and its supervisor may
 * record a new sign of work (updatedAt, lastWorkAt) between two listings — on a loaded machine the gated
 * shell's own CPU time is one — so those two fields of running runs are left out of the comparison.
 */
function steady(out: string): string {
  const j = JSON.parse(out);
  for (const a of j.agents) if (a.status === 'running') Object.assign(a, { updatedAt: null, lastWorkAt: null });
  return JSON.stringify(j);
}

function agent(out: string, name: string): any {
  return JSON.parse(out).agents.find((a: any) => a.name === name);
}

function doctorView(name: string, edit: (view: string) => string): void {
  doctor(b.registry, name, edit);
}

/** The listing with the plain paths (`SUBAGENT_FAST_PATHS=0`, or only those named kept): every record read, no cache. */
function plain(args: string[] = [], paths = '0'): string {
  const r = b.run('status', args, { env: { SUBAGENT_FAST_PATHS: paths } });
  assert.equal(r.code, 0, r.stdout + r.stderr);
  return r.stdout;
}

describe('status: the cache of done runs', () => {
  const gates = { ends: join(b.dir, 'gate-ends'), cancelled: join(b.dir, 'gate-cancelled') };

  test('set-up: done runs, a resumable one, two that keep running; all settled', async () => {
    const done = ['done/a', 'done/b', 'corrupt/same-size', 'replaced', 'resumed', 'removed'];
    for (const n of done) startShell(b, n, `echo ${n}`);
    startShell(b, 'live/ends', `${gate(gates.ends)}; echo ended`);
    startShell(b, 'live/cancelled', `${gate(gates.cancelled)}; echo never`);
    waitTerminal(b, done);
    await untilStatus(b, 'live/ends', (a) => a.status === 'running', 'running');
    await untilStatus(b, 'live/cancelled', (a) => a.status === 'running', 'running');
    await settled(done);
  });

  test('a cached listing is byte-identical to a fresh one, and served from the cache', () => {
    const first = fresh();
    assert.ok(existsSync(cachePath), 'the listing wrote its cache');
    assert.equal(steady(list()), steady(first), 'the same listing from the cache');
    assert.equal(agent(first, 'live/ends').status, 'running');
    // Proof that a hit does not read the record: a doctored cache line shows through (a cache
    // nobody doctors is only ever written from the records themselves).
    doctorView('done/a', (v) => v.replace('"exitCode":0', '"exitCode":7'));
    assert.equal(agent(list(), 'done/a').exitCode, 7);
    assert.equal(agent(fresh(), 'done/a').exitCode, 0);
    // --prefix and --all list through it too.
    assert.equal(steady(list(['--all'])), steady(first));
    assert.equal(list(['--prefix', 'done']), fresh(['--prefix', 'done']));
    assert.equal(steady(list()), steady(first), 'a --prefix listing kept the other names cached');
  });

  // A change made by hand, outside subagents, is not in the registry's journal: the cache does not see
  // it (docs/design.md, "The status cache", what it trusts). The plain listing reads the record, and so
  // does any listing once the cache is gone.
  test('a record corrupted in place, same size, mtime put back: E_REGISTRY_CORRUPT in problems', () => {
    list();
    const path = join(runDirOf(b.registry, 'corrupt/same-size'), 'record.json');
    const before = statSync(path);
    writeFileSync(path, Buffer.alloc(before.size, 0));
    utimesSync(path, before.atime, before.mtime);
    for (const out of [plain(), fresh()]) {
      const j = JSON.parse(out);
      assert.equal(agent(out, 'corrupt/same-size'), undefined);
      const p = j.problems?.find((x: any) => x.name === 'corrupt/same-size');
      assert.equal(p?.code, 'E_REGISTRY_CORRUPT', JSON.stringify(j.problems));
      assert.equal(p.path, path);
    }
  });

  test('a record replaced by rename, same size and mtime: the new content', () => {
    list();
    const path = join(runDirOf(b.registry, 'replaced'), 'record.json');
    const before = statSync(path);
    const text = readFileSync(path, 'utf8');
    const changed = text.replace('"exitCode": 0', '"exitCode": 7');
    assert.equal(changed.length, text.length);
    writeFileSync(path + '.new', changed);
    utimesSync(path + '.new', before.atime, before.mtime);
    renameSync(path + '.new', path);
    assert.equal(agent(plain(), 'replaced').exitCode, 7);
    assert.equal(agent(fresh(), 'replaced').exitCode, 7);
  });

  test('a resumed run: the new run, never the cached one', () => {
    assert.equal(agent(list(), 'resumed').run, 1);
    const r = b.run('resume-subagent', ['--name', 'resumed', '--prompt', 'echo again']);
    assert.equal(r.code, 0, r.stdout);
    const now = agent(list(), 'resumed');
    assert.equal(now.run, 2);
    assert.equal(now.resumeCount, 1);
    const done = waitTerminal(b, ['resumed']).resumed;
    assert.equal(done.run, 2);
    assert.equal(agent(list(), 'resumed').outcome, 'succeeded');
  });

  test('runs that end or are cancelled after listings: their end, at once', async () => {
    assert.equal(agent(list(), 'live/ends').status, 'running');
    open(gates.ends);
    waitTerminal(b, ['live/ends']);
    const ended = agent(list(), 'live/ends');
    assert.equal(ended.status, 'done');
    assert.equal(ended.outcome, 'succeeded');

    assert.equal(agent(list(), 'live/cancelled').status, 'running');
    const c = b.run('cancel', ['--name', 'live/cancelled']);
    assert.equal(c.code, 0, c.stdout);
    waitTerminal(b, ['live/cancelled']);
    assert.equal(agent(list(), 'live/cancelled').outcome, 'cancelled');
  });

  test('a removed name is no longer listed', () => {
    assert.ok(agent(list(), 'removed'));
    rmSync(join(b.registry, 'agents', 'removed'), { recursive: true });
    assert.equal(agent(list(), 'removed'), undefined);
    assert.equal(list(), fresh());
  });

  test('a damaged cache is no cache: the same listing, and the cache is written again', () => {
    const truth = fresh();
    const good = readFileSync(cachePath);
    const damaged: Array<[string, Buffer]> = [
      ['truncated', good.subarray(0, Math.floor(good.length / 2))],
      ['one byte changed', Buffer.concat([good.subarray(0, good.length - 10), Buffer.from('X'), good.subarray(good.length - 9)])],
      ['zeroed', Buffer.alloc(good.length, 0)],
      ['empty', Buffer.alloc(0)],
      ['garbage', Buffer.from('{"not":"a cache"}\n')],
    ];
    for (const [what, bytes] of damaged) {
      writeFileSync(cachePath, bytes);
      assert.equal(list(), truth, what);
      assert.equal(list(), truth, `${what}: from the cache written again`);
    }
  });

  test('concurrent listings each print the whole truth', async () => {
    const truth = fresh();
    rmSync(cachePath, { force: true });
    const outs = (await Promise.all(Array.from({ length: 6 }, () => b.runAsync('status', [])))).map((r) => r.stdout);
    for (const out of outs) assert.equal(out, truth);
    assert.equal(list(), truth);
  });

  test('without the status cache (SUBAGENT_FAST_PATHS) a listing reads every record and prints the same bytes; the library serves the cache as objects', async () => {
    // Run 2 of "resumed" ended a few tests ago; the cache takes it once its record has settled.
    const resumed = join(runDirOf(b.registry, 'resumed', 2), 'record.json');
    await until('the resumed run settled', () => Date.now() - statSync(resumed).ctimeMs > SETTLE_MS, 10_000, 100);
    const truth = fresh();
    assert.ok(existsSync(cachePath), 'the listing wrote the cache');
    assert.equal(plain(), truth, 'every record read: the same bytes');
    assert.equal(plain(['--prefix', 'done']), list(['--prefix', 'done']), 'a prefix too');
    assert.equal(plain([], 'compile-cache'), truth, 'only the status cache off');
    // Doctored views show through where the cache is served, and only there.
    doctorView('done/b', (v) => v.replace('"exitCode":0', '"exitCode":5'));
    assert.equal(agent(list(), 'done/b').exitCode, 5, 'served by the verb');
    assert.equal(agent(plain(), 'done/b').exitCode, 0, 'not without the fast path');
    assert.equal(agent(plain([], 'compile-cache'), 'done/b').exitCode, 0, 'nor with only the others');
    // The library serves the same cache, parsed: the same objects as the verb's line.
    const lib = await status({ registry: b.registry, env: { ...b.env } });
    assert.deepEqual(JSON.parse(JSON.stringify(lib)), JSON.parse(list()));
    assert.equal((lib.agents as any[]).find((a) => a.name === 'done/b').exitCode, 5, 'the library served the cache');
    // Without the fast path the cache is not written either.
    rmSync(cachePath);
    assert.equal(plain(), truth);
    assert.equal(existsSync(cachePath), false, 'no cache written');
  });
});
