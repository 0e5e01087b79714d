import { createRequire } from 'node:module';
import { internalBinding } from '../internal-binding.js';

type Crc32 = (data: Uint8Array) => number;

let chosen: Crc32 | null | undefined;

/**
 * CRC-32 (zlib's), or null when this Node has none (zlib.crc32 arrived in Node 20.15). The status cache
 * checks itself with it on every listing, and loading node:zlib for it cost `status` 3.5 ms — zlib
 * brings streams along — while the same function sits in zlib's C++ binding, which loads in microseconds.
 * The binding is internal (lib/internal-binding.ts): it is used only after it gave the right CRC for
 * the standard check input; anything else uses node:zlib. Both compute the same number, so the cache
 * never depends on which ran.
 */
export function crc32(): Crc32 | null {
  if (chosen === undefined) chosen = fromBinding() ?? fromModule();
  return chosen;
}

/** The CRC-32 of "123456789", the check value of the standard (zlib's crc32 included). */
const CHECK = 0xcbf43926;

function fromBinding(): Crc32 | null {
  const binding = internalBinding<{ crc32?: unknown }>('zlib');
  if (typeof binding?.crc32 !== 'function') return null;
  try {
    const fn = binding.crc32.bind(binding) as (data: Uint8Array, value: number) => number;
    return fn(Buffer.from('123456789'), 0) === CHECK ? (data) => fn(data, 0) : null;
  } catch {
    return null;
  }
}

function fromModule(): Crc32 | null {
  const zlib = createRequire(import.meta.url)('node:zlib') as { crc32?: (data: Uint8Array) => number };
  return typeof zlib.crc32 === 'function' ? (data) => zlib.crc32!(data) : null;
}
