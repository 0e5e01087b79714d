// The status cache's checksum (lib/registry/checksum.ts): the WebAssembly function sums what its
// comment says it sums (held to the same sum computed here with BigInt), reads a file into its own
// memory, and notices damage.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SUM_DIGITS, readSummed, sumOf } from '../../lib/registry/checksum.js';

const dir = realpathSync(mkdtempSync(join(tmpdir(), 'subagents-checksum-')));
after(() => rmSync(dir, { recursive: true, force: true }));

const M = (1n << 64n) - 1n;
const K = 0x9e3779b97f4a7c15n;

/** The sum as the module's text says, in BigInt: two lanes of 8-byte little-endian words, zeros after the end. */
function reference(data: Uint8Array): string {
  const padded = new Uint8Array(Math.ceil(data.length / 16) * 16);
  padded.set(data);
  const words = new DataView(padded.buffer);
  let a = 0xcbf29ce484222325n;
  let b = 0x84222325cbf29ce4n;
  const step = (h: bigint, w: bigint) => {
    const m = ((h ^ w) * K) & M;
    return m ^ (m >> 32n);
  };
  for (let i = 0; i < padded.length; i += 16) {
    a = step(a, words.getBigUint64(i, true));
    b = step(b, words.getBigUint64(i + 8, true));
  }
  a = (((a * K) & M) ^ b ^ BigInt(data.length)) & M;
  a = ((a ^ (a >> 29n)) * 0xbf58476d1ce4e5b9n) & M;
  a ^= a >> 32n;
  return a.toString(16).padStart(SUM_DIGITS, '0');
}

function bytes(n: number, seed: number): Uint8Array {
  const out = new Uint8Array(n);
  let x = seed;
  for (let i = 0; i < n; i++) {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    out[i] = x >>> 24;
  }
  return out;
}

test('the sum is the one its text describes, at every length around the 16-byte steps', () => {
  for (const n of [0, 1, 7, 8, 15, 16, 17, 31, 32, 33, 100, 1000, 65_536, 65_537, 200_003]) {
    const data = bytes(n, n + 1);
    assert.equal(sumOf(data), reference(data), `${n} bytes`);
  }
});

test('any one byte changed, a byte cut or added, or zeroes: another sum', () => {
  const data = bytes(4099, 7);
  const sum = sumOf(data);
  for (let i = 0; i < data.length; i += 37) {
    const changed = Uint8Array.from(data);
    changed[i] = changed[i]! ^ (1 << (i % 8));
    assert.notEqual(sumOf(changed), sum, `byte ${i}`);
  }
  assert.notEqual(sumOf(data.subarray(0, data.length - 1)), sum, 'cut');
  assert.notEqual(sumOf(Uint8Array.from([...data, 0])), sum, 'a zero added');
  assert.notEqual(sumOf(new Uint8Array(data.length)), sumOf(new Uint8Array(data.length + 16)), 'zeros of two lengths');
});

test('readSummed: the file read whole, summed from an offset; a second read does not disturb the first', () => {
  const a = bytes(150_001, 3);
  const b = bytes(70_000, 4);
  writeFileSync(join(dir, 'a'), a);
  writeFileSync(join(dir, 'b'), b);
  const ra = readSummed(join(dir, 'a'), 33)!;
  const rb = readSummed(join(dir, 'b'), 0)!;
  assert.deepEqual(new Uint8Array(ra.data), a);
  assert.equal(ra.sum, reference(a.subarray(33)));
  assert.equal(rb.sum, sumOf(b));
  assert.deepEqual(new Uint8Array(ra.data), a, 'the first read is intact');
  assert.throws(() => readSummed(join(dir, 'missing'), 0), { code: 'ENOENT' });
});
