// The status cache's proofs (lib/registry/stat-key.ts): whether each path still has the key it was
// remembered by, or is still missing. Each path's expected answer is stated, not derived.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, realpathSync, renameSync, rmSync, symlinkSync, utimesSync, writeFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { probeKeys, statKey } from '../../lib/registry/stat-key.js';

const dir = realpathSync(mkdtempSync(join(tmpdir(), 'subagents-probe-')));
after(() => rmSync(dir, { recursive: true, force: true }));

const MISSING = [NaN, NaN, NaN, NaN];

/** Probes [path, key] pairs under base; returns the answers. */
function probe(base: string, probes: Array<[string, number[]]>): number[] {
  const paths = Buffer.from(probes.map(([p]) => p + '\0').join(''), 'latin1');
  const keys = new Float64Array(probes.flatMap(([, k]) => k));
  const ok = new Uint8Array(probes.length).fill(7);
  assert.equal(probeKeys(base, paths, keys, ok), probes.length, 'every path probed');
  return [...ok];
}

test('probeKeys says, path by path, what still holds', () => {
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
  assert.deepEqual(
    probe(
      base,
      cases.map(([p, k]) => [p, k]),
    ),
    cases.map(([, , want]) => want),
  );

  // A base that does not exist: nothing under it exists either.
  assert.deepEqual(
    probe(join(dir, 'no-such-dir'), [
      ['a/1/record.json', a],
      ['a/2', MISSING],
    ]),
    [0, 1],
  );
  // A record replaced by rename, same size and mtime: a new inode.
  writeFileSync(rec('a') + '.new', '{"same":1}\n');
  renameSync(rec('a') + '.new', rec('a'));
  assert.deepEqual(probe(base, [['a/1/record.json', a]]), [0]);
});

test('probeKeys stops where its arrays end, and does not probe an unended path', () => {
  const paths = Buffer.from('x\0y\0z\0', 'latin1');
  assert.equal(probeKeys(dir, paths, new Float64Array(8), new Uint8Array(3)), 2, 'keys for two paths');
  assert.equal(probeKeys(dir, paths, new Float64Array(12), new Uint8Array(1)), 1, 'room for one answer');
  assert.equal(probeKeys(dir, Buffer.from('x\0y', 'latin1'), new Float64Array(8), new Uint8Array(2)), 1, 'an unended path is not probed');
});
