// The addon's statProbe and readFile (lib/native/stat-probe.c, read-file.c) against what plain Node
// gives for the same files: the status cache's proofs must not depend on whether `make build` had a C
// compiler. Every case runs through both probes; each path's expected answer is stated, not derived.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, renameSync, rmSync, symlinkSync, utimesSync, writeFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { nativeAddon, readWholeFile } from '../../lib/native/addon.js';
import { probeKeysInNode, statKey } from '../../lib/registry/stat-key.js';
import { skipUnlessCi } from '../helpers.js';

const dir = realpathSync(mkdtempSync(join(tmpdir(), 'subagents-probe-')));
after(() => rmSync(dir, { recursive: true, force: true }));

const MISSING = [NaN, NaN, NaN, NaN];

/** Probes [path, key] pairs under base with both implementations; returns each one's answers. */
function probeBoth(base: string, probes: Array<[string, number[]]>): { node: number[]; addon: number[] | null } {
  const paths = Buffer.from(probes.map(([p]) => p + '\0').join(''), 'latin1');
  const keys = new Float64Array(probes.flatMap(([, k]) => k));
  const run = (probe: (b: string, p: Uint8Array, k: Float64Array, o: Uint8Array) => number) => {
    const ok = new Uint8Array(probes.length).fill(7);
    assert.equal(probe(base, paths, keys, ok), probes.length, 'every path probed');
    return [...ok];
  };
  const addon = nativeAddon();
  return { node: run(probeKeysInNode), addon: addon ? run(addon.statProbe) : null };
}

test('statProbe and its plain-Node twin agree, path by path, on what holds', (t) => {
  const base = join(dir, 'agents');
  mkdirSync(join(base, 'a', '1'), { recursive: true });
  mkdirSync(join(base, 'b', '1'), { recursive: true });
  const rec = (n: string) => join(base, n, '1', 'record.json');
  writeFileSync(rec('a'), '{"same":1}\n');
  writeFileSync(rec('b'), '{"same":1}\n');
  writeFileSync(join(base, 'file'), 'x');
  symlinkSync(join(base, 'a'), join(base, 'link'));
  const a = statKey(rec('a'))!;
  const b0 = statKey(rec('b'))!;
  // b's record edited in place: same size, mtime put back — its ctime moves all the same.
  const before = statSync(rec('b'));
  writeFileSync(rec('b'), '{"same":2}\n');
  utimesSync(rec('b'), before.atime, before.mtime);
  const cases: Array<[string, number[], number]> = [
    ['a/1/record.json', a, 1], // unchanged
    ['a/2', MISSING, 1], // still missing
    ['a/1', MISSING, 0], // exists, was to be missing
    ['a/1/record.json', [a[0], a[1] + 1, a[2], a[3]], 0], // other size
    ['a/1/record.json', [a[0] + 1, a[1], a[2], a[3]], 0], // other inode
    ['a/1/record.json', [a[0], a[1], a[2], a[3] + 1], 0], // other ctime
    ['b/1/record.json', b0, 0], // edited in place
    ['gone/1/record.json', a, 0], // missing, was to exist
    ['file/1', MISSING, 1], // through a file (ENOTDIR): missing
    ['link/1/record.json', a, 1], // symlinks followed, as fs.statSync does
    ['', MISSING, 1], // the empty path names nothing
  ];
  const { node, addon } = probeBoth(base, cases.map(([p, k]) => [p, k]));
  assert.deepEqual(node, cases.map(([, , want]) => want), 'plain Node');
  if (addon === null) return skipUnlessCi(t, 'the addon is not built');
  assert.deepEqual(addon, node, 'the addon');

  // A base that does not exist: nothing under it exists either.
  const none = probeBoth(join(dir, 'no-such-dir'), [['a/1/record.json', a], ['a/2', MISSING]]);
  assert.deepEqual(none.node, [0, 1]);
  assert.deepEqual(none.addon, none.node);
  // A record replaced by rename, same size and mtime: a new inode.
  writeFileSync(rec('a') + '.new', '{"same":1}\n');
  renameSync(rec('a') + '.new', rec('a'));
  const renamed = probeBoth(base, [['a/1/record.json', a]]);
  assert.deepEqual(renamed.node, [0]);
  assert.deepEqual(renamed.addon, renamed.node);
});

test('a long list (probed in two halves, by two threads where there are two CPUs) has every answer in its place', (t) => {
  const base = join(dir, 'many');
  mkdirSync(base);
  const probes: Array<[string, number[]]> = [];
  const want: number[] = [];
  for (let i = 0; i < 1501; i++) {
    const file = `f${i}-${'x'.repeat(i % 37)}`;
    writeFileSync(join(base, file), String(i));
    const key = statKey(join(base, file))!;
    // Every third key is wrong, every fifth path is one that must be missing (and is, or is not).
    if (i % 5 === 0) {
      probes.push([i % 2 ? `${file}/missing` : file, MISSING]);
      want.push(i % 2);
    } else {
      probes.push([file, i % 3 === 0 ? [key[0], key[1] + 1, key[2], key[3]] : key]);
      want.push(i % 3 === 0 ? 0 : 1);
    }
  }
  const { node, addon } = probeBoth(base, probes);
  assert.deepEqual(node, want, 'plain Node');
  if (addon === null) return skipUnlessCi(t, 'the addon is not built');
  assert.deepEqual(addon, want, 'the addon');
});

test('statProbe stops where its arrays end, and refuses what is not its arguments', (t) => {
  const addon = nativeAddon();
  if (!addon) return skipUnlessCi(t, 'the addon is not built');
  const paths = Buffer.from('x\0y\0z\0', 'latin1');
  assert.equal(addon.statProbe(dir, paths, new Float64Array(8), new Uint8Array(3)), 2, 'keys for two paths');
  assert.equal(addon.statProbe(dir, paths, new Float64Array(12), new Uint8Array(1)), 1, 'room for one answer');
  assert.equal(addon.statProbe(dir, Buffer.from('x\0y', 'latin1'), new Float64Array(8), new Uint8Array(2)), 1, 'an unended path is not probed');
  assert.equal(probeKeysInNode(dir, paths, new Float64Array(8), new Uint8Array(3)), 2);
  assert.throws(() => addon.statProbe(dir, paths, new Float32Array(8) as unknown as Float64Array, new Uint8Array(2)), TypeError);
  assert.throws(() => (addon.statProbe as (...a: unknown[]) => number)(dir, 'x\0', new Float64Array(4), new Uint8Array(1)), TypeError);
});

test('readFile: the same bytes as fs.readFileSync, big or small, and the same errors', (t) => {
  if (!nativeAddon()) return skipUnlessCi(t, 'the addon is not built');
  for (const size of [0, 1, 4096, 256 * 1024 - 1, 256 * 1024, 3 * 1024 * 1024 + 17]) {
    const file = join(dir, `f${size}`);
    writeFileSync(file, randomBytes(size));
    const got = readWholeFile(file);
    assert.ok(Buffer.isBuffer(got));
    assert.ok(got.equals(readFileSync(file)), `${size} bytes`);
  }
  assert.throws(() => readWholeFile(join(dir, 'missing')), { code: 'ENOENT' });
  assert.throws(() => readWholeFile(dir), { code: 'EISDIR' });
  assert.equal(nativeAddon()!.readFile(dir), -21, 'the addon itself reports -errno');
  const locked = join(dir, 'locked');
  writeFileSync(locked, 'x');
  chmodSync(locked, 0);
  if (process.getuid?.() !== 0) assert.throws(() => readWholeFile(locked), { code: 'EACCES' });
});
