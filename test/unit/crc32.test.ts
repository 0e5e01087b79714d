// The status cache's CRC-32: zlib's numbers, taken from zlib's C++ binding so that `status` does not load
// node:zlib (and its streams) for one checksum.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { crc32 as zlibCrc32 } from 'node:zlib';
import { crc32 } from '../../lib/registry/crc32.js';

test('crc32 gives zlib\'s CRC-32 for the check input, the empty input and random buffers', () => {
  const crc = crc32();
  assert.ok(crc, 'this Node has a CRC-32');
  assert.equal(crc(Buffer.from('123456789')), 0xcbf43926);
  assert.equal(crc(Buffer.alloc(0)), 0);
  for (const size of [1, 7, 4096, 100_000, 1_000_003]) {
    const data = randomBytes(size);
    assert.equal(crc(data), zlibCrc32(data), `${size} bytes`);
  }
});

const probe = (nodeOptions: string) => {
  const module = fileURLToPath(new URL('../../lib/registry/crc32.js', import.meta.url));
  const script = `import(${JSON.stringify(module)}).then(({ crc32 }) => process.stdout.write(JSON.stringify({ crc: crc32()(Buffer.from('hello')), zlib: process.moduleLoadList.includes('NativeModule zlib') })))`;
  const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: nodeOptions } });
  assert.equal(r.status, 0, r.stderr);
  return { ...JSON.parse(r.stdout), stderr: r.stderr };
};

test('it does not load node:zlib, and prints no deprecation warning even under --pending-deprecation', () => {
  for (const options of ['', '--pending-deprecation']) {
    assert.deepEqual(probe(options), { crc: zlibCrc32(Buffer.from('hello')), zlib: false, stderr: '' }, options);
  }
});
