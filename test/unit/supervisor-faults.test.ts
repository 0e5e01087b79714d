/**
 * The supervisor's own I/O faults (issue 23, point 5): a log line the disk refuses is dropped and counted,
 * never thrown; a write that fails is tried again until it lands, and given up only when the run's
 * directory is gone. The end-to-end proof is test/fault/disk-midrun.test.ts; these pin the two parts.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SupervisorLog } from '../../lib/supervisor/log.js';
import { untilItLands } from '../../lib/supervisor/retry.js';
import { withTempDir } from '../support/temp.js';

test('a log line the disk refuses (/dev/full: ENOSPC) is dropped and counted, and the next line that lands says so', (t) => {
  if (!existsSync('/dev/full')) {
    t.skip('no /dev/full here');
    return;
  }
  withTempDir('subagents-log-', (dir) => {
    const full = openSync('/dev/full', 'w');
    const log = new SupervisorLog(full);
    assert.doesNotThrow(() => log.write('one'));
    assert.doesNotThrow(() => log.write('two'));
    // The log's fd number now names a writable file (the lowest free fd is the one just closed).
    closeSync(full);
    const path = join(dir, 'supervisor.log');
    const fd = openSync(path, 'a');
    assert.equal(fd, full, 'the same fd number again');
    log.write('three');
    log.write('four');
    closeSync(fd);
    const lines = readFileSync(path, 'utf8').trim().split('\n');
    assert.equal(lines.length, 2);
    assert.match(lines[0]!, /three \(2 earlier lines lost: the log could not be written\)$/);
    assert.match(lines[1]!, /four$/);
  });
});

test('a write that fails is tried again until it lands; given up only once the run directory is gone', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'subagents-retry-'));
  const said: string[] = [];
  let tries = 0;
  const landed = await untilItLands(
    dir,
    'writing',
    () => {
      if (++tries < 3) throw Object.assign(new Error('ENOSPC: no space left on device'), { code: 'ENOSPC' });
      return 'ok';
    },
    (m) => said.push(m),
  );
  assert.equal(landed, 'ok');
  assert.equal(tries, 3);
  assert.match(said[0]!, /^writing failed \(trying again until it works\): ENOSPC/);
  assert.match(said.at(-1)!, /^writing: done after 3 tries/);
  rmSync(dir, { recursive: true, force: true });
  await assert.rejects(
    untilItLands(
      dir,
      'writing',
      () => {
        throw new Error('EIO');
      },
      () => undefined,
    ),
    /EIO/,
  );
});
