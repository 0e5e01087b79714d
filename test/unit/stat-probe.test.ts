// The status cache's key of agents/ (lib/registry/stat-key.ts): a new key whenever what it names
// changed, and null for nothing. Each expected answer is stated, not derived.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, realpathSync, renameSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { statKey } from '../../lib/registry/stat-key.js';

const dir = realpathSync(mkdtempSync(join(tmpdir(), 'subagents-probe-')));
after(() => rmSync(dir, { recursive: true, force: true }));

test('statKey: a new key for a new entry, an edit in place with its mtime put back, a replacement; null for nothing', () => {
  const agents = join(dir, 'agents');
  mkdirSync(agents);
  const k0 = statKey(agents)!;
  assert.deepEqual(statKey(agents), k0, 'the same key for the same directory');
  mkdirSync(join(agents, 'new-name'));
  const k1 = statKey(agents)!;
  assert.notDeepEqual(k1, k0, 'a new entry');
  const file = join(dir, 'f');
  writeFileSync(file, '{"same":1}\n');
  const f0 = statKey(file)!;
  const before = statSync(file);
  writeFileSync(file, '{"same":2}\n');
  utimesSync(file, before.atime, before.mtime);
  assert.notEqual(statKey(file)![2], f0[2], 'edited in place, same size and mtime: its ctime moved');
  writeFileSync(file + '.new', '{"same":1}\n');
  renameSync(file + '.new', file);
  assert.notEqual(statKey(file)![0], f0[0], 'replaced by rename: a new inode');
  assert.equal(statKey(join(dir, 'missing')), null);
});
