import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, renameSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { endianness } from 'node:os';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import { until } from '../support/wait.js';
import { runDirOf } from '../support/registry.js';
import { makeBox } from '../support/box.js';
import { gate, open, startShell, untilStatus, waitTerminal } from '../support/shell.js';
import { status } from '../../lib/index.js';

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

/**
 * Rewrites the view of one name in the cache file, keeping its length, with a correct checksum: what a
 * stale cache would say. The layout (lib/registry/done-cache.ts): a header line ending in the CRC-32 of
 * the rest as 10 digits; "<entries> <probes> <name bytes> <path bytes>"; the names, one a line; zero
 * bytes up to a multiple of 8; 8 uint32 an entry (name start and end, run, ticket, first probe, paths
 * start, view start and end); 4 float64 a probe; the probes' paths; the views.
 */
function doctorView(name: string, edit: (view: string) => string): void {
  const data = Buffer.from(readFileSync(cachePath));
  const header = data.indexOf(10) + 1;
  const countsEnd = data.indexOf(10, header);
  const [entries, probes, nameBytes, pathBytes] = data.toString('latin1', header, countsEnd).split(' ').map(Number) as [number, number, number, number];
  const names = data
    .toString('latin1', countsEnd + 1, countsEnd + 1 + nameBytes)
    .split('\n')
    .slice(0, -1);
  assert.equal(names.length, entries);
  const i = names.indexOf(name);
  assert.ok(i >= 0, `${name} is in the cache`);
  const table = Math.ceil((countsEnd + 1 + nameBytes) / 8) * 8;
  const field = (k: number) => (endianness() === 'LE' ? data.readUInt32LE(table + 32 * i + 4 * k) : data.readUInt32BE(table + 32 * i + 4 * k));
  const views = table + 32 * entries + 32 * probes + pathBytes;
  const [start, end] = [views + field(6), views + field(7)];
  const view = data.toString('utf8', start, end);
  const edited = Buffer.from(edit(view));
  assert.equal(edited.length, end - start, 'the doctored view keeps its length');
  edited.copy(data, start);
  data.write(String(crc32(data.subarray(header))).padStart(10, '0'), header - 11, 'latin1');
  writeFileSync(cachePath, data);
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

  test('a record corrupted in place, same size, mtime put back: E_REGISTRY_CORRUPT in problems', () => {
    list();
    const path = join(runDirOf(b.registry, 'corrupt/same-size'), 'record.json');
    const before = statSync(path);
    writeFileSync(path, Buffer.alloc(before.size, 0));
    utimesSync(path, before.atime, before.mtime);
    const j = JSON.parse(list());
    assert.equal(agent(list(), 'corrupt/same-size'), undefined);
    const p = j.problems?.find((x: any) => x.name === 'corrupt/same-size');
    assert.equal(p?.code, 'E_REGISTRY_CORRUPT', JSON.stringify(j.problems));
    assert.equal(p.path, path);
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
    assert.equal(agent(list(), 'replaced').exitCode, 7);
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
    const plain = (args: string[] = [], paths = '0') => {
      const r = b.run('status', args, { env: { SUBAGENT_FAST_PATHS: paths } });
      assert.equal(r.code, 0, r.stdout + r.stderr);
      return r.stdout;
    };
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
