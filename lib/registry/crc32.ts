import { builtin } from '../base/builtin.js';

type Crc32 = (data: Uint8Array) => number;

let chosen: Crc32 | null | undefined;

/**
 * CRC-32 (zlib's, node:zlib's crc32), or null on a Node without it (it arrived in 22.2): the status
 * cache checks itself with it, and without it there is no cache. node:zlib is loaded on first use only:
 * a verb that never reads the cache does not pay for it.
 */
export function crc32(): Crc32 | null {
  if (chosen === undefined) {
    const zlib = builtin<{ crc32?: (data: Uint8Array) => number }>('node:zlib');
    chosen = typeof zlib.crc32 === 'function' ? (data) => zlib.crc32!(data) : null;
  }
  return chosen;
}
