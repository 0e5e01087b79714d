import { readRegularInto } from '../base/regular.js';

/**
 * The status cache's checksum (lib/registry/done-cache.ts): 64 bits over a stretch of bytes, by a
 * 204-byte WebAssembly function, instead of node:zlib's CRC-32 — loading node:zlib (and node:stream,
 * which it loads) cost every listing ~3 ms, more than reading and summing the cache of 1 000 runs
 * (docs/benchmarks.md, "Measured by hand"). It guards against damage, not forgery: the cache is the
 * user's own private file.
 *
 * The bytes are summed as 8-byte words (little-endian) in two lanes, even and odd words, each step
 * `h = (h ^ w) * K; h ^= h >>> 32`: for a given h a bijection of w, and for a given w one of h. So a
 * change within one 8-byte word always changes the sum; any other change is missed with odds of
 * about 2^-64. The length is mixed in at the end, then the sum avalanched. The module, as text:
 *
 *   (func (export "h") (param $i i32) (param $end i32) (param $len i32) (result i64)
 *     (local $a i64) (local $b i64)
 *     (local.set $a (i64.const 0xcbf29ce484222325)) (local.set $b (i64.const 0x84222325cbf29ce4))
 *     (block (loop
 *       (br_if 1 (i32.ge_u (local.get $i) (local.get $end)))
 *       (local.set $a (i64.mul (i64.xor (local.get $a) (i64.load (local.get $i))) (i64.const K)))
 *       (local.set $a (i64.xor (local.get $a) (i64.shr_u (local.get $a) (i64.const 32))))
 *       (local.set $b (i64.mul (i64.xor (local.get $b) (i64.load offset=8 (local.get $i))) (i64.const K)))
 *       (local.set $b (i64.xor (local.get $b) (i64.shr_u (local.get $b) (i64.const 32))))
 *       (local.set $i (i32.add (local.get $i) (i32.const 16)))
 *       (br 0)))
 *     (local.set $a (i64.xor (i64.xor (i64.mul (local.get $a) (i64.const K)) (local.get $b)) (i64.extend_i32_u (local.get $len))))
 *     (local.set $a (i64.mul (i64.xor (local.get $a) (i64.shr_u (local.get $a) (i64.const 29))) (i64.const 0xbf58476d1ce4e5b9)))
 *     (i64.xor (local.get $a) (i64.shr_u (local.get $a) (i64.const 32))))
 *   (memory (export "m") 1)
 *
 * with K = 0x9e3779b97f4a7c15; bytes past `len` up to the next multiple of 16 are zero (a memory's new
 * pages are). test/unit/checksum.test.ts holds it to the same sum computed in JavaScript.
 */
const MODULE =
  'AGFzbQEAAAABCAFgA39/fwF+AwIBAAUDAQABBwkCAW0CAAFoAAAKowEBoAEBAn5CpcaIocicp/lLIQNC5LnK39zkiJGEfyEEAkADQCAAIAFPDQEgAyAAKQAAhUKV+Kn6l7fem55/fiIDIANCIIiFIQMgBCAAKQAIhUKV+Kn6l7fem55/fiIEIARCIIiFIQQgAEEQaiEADAALCyADQpX4qfqXt96bnn9+IASFIAKthSIDIANCHYiFQrnLk+fR7ZGsv39+IgMgA0IgiIUL';

/** The sum as text: 16 hex digits. */
export const SUM_DIGITS = 16;

const PAGE = 65536;

interface Summer {
  memory: WebAssembly.Memory;
  h: (from: number, end: number, len: number) => bigint;
}

let compiled: WebAssembly.Module | null | undefined;

/**
 * A summer with a memory of its own, room for `size` bytes (and the zeros up to 16 more), or null
 * where WebAssembly cannot run (e.g. `node --jitless`) or the memory cannot grow: then there is no
 * checksum, so no status cache. Each read or sum has its own: bytes read stay put while they are used.
 */
function summer(size: number): Summer | null {
  try {
    compiled ??= new WebAssembly.Module(Buffer.from(MODULE, 'base64'));
    const x = new WebAssembly.Instance(compiled).exports as unknown as Summer & { m: WebAssembly.Memory };
    const pages = Math.ceil((size + 16) / PAGE) - x.m.buffer.byteLength / PAGE;
    if (pages > 0) x.m.grow(pages);
    return { memory: x.m, h: x.h };
  } catch {
    compiled ??= null;
    return null;
  }
}

function hex(s: Summer, from: number, to: number): string {
  const end = from + Math.ceil((to - from) / 16) * 16;
  return BigInt.asUintN(64, s.h(from, end, to - from))
    .toString(16)
    .padStart(SUM_DIGITS, '0');
}

/** The sum of `data`, or null where there is no checksum. */
export function sumOf(data: Uint8Array): string | null {
  const s = summer(data.length);
  if (!s) return null;
  new Uint8Array(s.memory.buffer).set(data);
  return hex(s, 0, data.length);
}

/**
 * The regular file at `path` read whole (lib/base/regular.ts), straight into a summer's memory — a
 * file of megabytes is neither copied nor read twice — with the sum of its bytes from `from` on. Null
 * where there is no checksum, or when the file grew while it was read; throws what reading throws.
 */
export function readSummed(path: string, from: number): { data: Buffer; sum: string } | null {
  const got: { s: Summer | null } = { s: null };
  const data = readRegularInto(path, (room) => {
    got.s = summer(room);
    return got.s ? new Uint8Array(got.s.memory.buffer, 0, room) : null;
  });
  if (!data || !got.s) return null;
  return { data: Buffer.from(data.buffer, 0, data.length), sum: data.length < from ? '' : hex(got.s, from, data.length) };
}
