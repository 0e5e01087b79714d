import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { identityOf, isAlive, bootId } from '../../lib/proc/identity.js';
import { parseStat } from '../../lib/proc/linux.js';
import { acquireLock, releaseLock, UNREADABLE_GRACE_MS } from '../../lib/registry/lock.js';
import { replaceFileDurably } from '../../lib/registry/durable.js';
import type { SubagentError } from '../../lib/base/errors.js';
import { laterStartTime } from '../support/procs.js';
import { withTempDir } from '../support/temp.js';

test('stat is parsed after the last ")" even when the command name holds ") ("', () => {
  const line = '4242 (evil) (name) S 1 4242 4242 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 987654 1000000 100 18446744073709551615';
  const s = parseStat(line);
  assert.ok(s);
  assert.equal(s.pid, 4242);
  assert.equal(s.comm, 'evil) (name');
  assert.equal(s.state, 'S');
  assert.equal(s.ppid, 1);
  assert.equal(s.pgid, 4242);
  assert.equal(s.startTime, '987654');
  assert.equal(s.cpuTicks, 3, 'utime + stime + cutime + cstime (fields 14-17)');
});

test('identity: the same pid with another start time or boot id is not alive', () => {
  const me = identityOf(process.pid);
  assert.ok(me);
  assert.equal(me.bootId, bootId());
  assert.equal(isAlive(me), true);
  assert.equal(isAlive({ ...me, startTime: laterStartTime(me.startTime, 1) }), false);
  assert.equal(isAlive({ ...me, bootId: 'another-boot' }), false);
  assert.equal(isAlive(null), false);
});

test('a zombie is not alive', async () => {
  const child = spawn('/bin/sh', ['-c', 'exit 0'], { stdio: 'ignore' });
  const pid = child.pid!;
  // Until Node reaps it the child may be a zombie; either way it must not count as alive once exited.
  await new Promise((r) => child.on('exit', r));
  assert.equal(isAlive({ pid, startTime: '0', bootId: bootId() }), false);
});

test('a lock is exclusive, records its owner, and is released', () => {
  withTempDir('lock-', (dir) => {
    const path = join(dir, 'x.lock');
    const h = acquireLock(path);
    const owner = JSON.parse(readFileSync(path, 'utf8'));
    assert.equal(owner.pid, process.pid);
    assert.throws(
      () => acquireLock(path, 100),
      (e: SubagentError) => e.code === 'E_LOCK_TIMEOUT',
    );
    releaseLock(h);
    assert.equal(existsSync(path), false);
  });
});

test('a lock whose owner is dead is taken over; fresh unreadable owner data is waited for, old is not', () => {
  withTempDir('lock-', (dir) => {
    const path = join(dir, 'x.lock');
    const dead = spawnSync('/bin/sh', ['-c', 'echo $$']);
    writeFileSync(path, JSON.stringify({ pid: Number(String(dead.stdout).trim()), startTime: '1', bootId: bootId() }));
    releaseLock(acquireLock(path, 1000));
    writeFileSync(path, '{"pid":');
    assert.throws(
      () => acquireLock(path, 200),
      (e: SubagentError) => e.code === 'E_LOCK_TIMEOUT',
    );
    const old = (Date.now() - UNREADABLE_GRACE_MS - 1000) / 1000;
    utimesSync(path, old, old);
    releaseLock(acquireLock(path, 1000));
    assert.equal(existsSync(path), false);
  });
});

test('a durable replace that cannot write leaves the old file and no temp file', () => {
  withTempDir('durable-', (dir) => {
    const path = join(dir, 'record.json');
    replaceFileDurably(path, 'old');
    assert.equal(readFileSync(path, 'utf8'), 'old');
    replaceFileDurably(path, 'new');
    assert.equal(readFileSync(path, 'utf8'), 'new');
    assert.throws(
      () => replaceFileDurably(join(dir, 'missing', 'x'), 'y'),
      (e: SubagentError) => e.code === 'E_REGISTRY_UNWRITABLE',
    );
    assert.deepEqual(spawnSync('ls', ['-A', dir], { encoding: 'utf8' }).stdout.trim().split('\n'), ['record.json']);
  });
});
