import { statSync } from 'node:fs';
import { internalBinding } from '../internal-binding.js';

/**
 * A file's identity and version for the status cache — "inode,size,ctimeSec,ctimeNsec", all integers —
 * and the other probe the cache needs, whether a path exists. The listing makes both for every done
 * name, so their cost is the cost of `status` on a big registry.
 *
 * On Node 20, fs.statSync spends ~20 µs of a ~26 µs call (measured here, 1 000 calls in a fresh
 * process) building a Stats object with four Dates that we never read (Node 22 builds them lazily),
 * and the garbage of a thousand of them costs the listing scavenges. Node 20's fs binding returns the
 * raw numbers instead. It is an internal API (lib/internal-binding.ts), so it is used only on Node 20,
 * and only once it gave the same key as fs.statSync for a real file; anything else — another Node, a
 * changed binding, an exception — falls back to fs.statSync for good. Keys never depend on which of the
 * two ran.
 */
type RawStat = (path: string, bigint: false, req: undefined, throwIfNoEntry: false) => Float64Array | undefined;

let raw: RawStat | null | undefined;
/** Where the binding's array holds inode, size, ctime seconds and ctime nanoseconds. */
const KEY_FIELDS = [7, 8, 14, 15];

function rawStat(probe: string): RawStat | null {
  if (raw === undefined) raw = rawStatChecked(probe);
  return raw;
}

export function statKey(path: string): string | null {
  const stat = rawStat(path);
  if (stat === null) return publicKey(path);
  const a = stat(path, false, undefined, false);
  return a === undefined ? null : `${a[7]},${a[8]},${a[14]},${a[15]}`;
}

/** statKey(path) === key, where the key is the latin1 text bytes[from, to): without building strings when it can. */
export function statKeyMatches(path: string, bytes: Buffer, from: number, to: number): boolean {
  const stat = rawStat(path);
  if (stat === null) return publicKey(path) === bytes.toString('latin1', from, to);
  const a = stat(path, false, undefined, false);
  if (a === undefined) return false;
  let at = from;
  for (let f = 0; f < KEY_FIELDS.length; f++) {
    let n = 0;
    const start = at;
    for (; at < to && bytes[at] !== 0x2c; at++) {
      const d = bytes[at]! - 0x30;
      if (d < 0 || d > 9) return false;
      n = n * 10 + d;
    }
    if (at === start || n !== a[KEY_FIELDS[f]!]) return false;
    at++;
  }
  return at === to + 1;
}

/** Whether anything is at `path`; when that cannot be told (EACCES…), true — the cache then misses, safely. */
export function pathExists(path: string): boolean {
  const stat = rawStat(path);
  try {
    return stat === null ? statSync(path, { throwIfNoEntry: false }) !== undefined : stat(path, false, undefined, false) !== undefined;
  } catch {
    return true;
  }
}

function publicKey(path: string): string | null {
  const s = statSync(path, { bigint: true, throwIfNoEntry: false });
  return s === undefined ? null : `${s.ino},${s.size},${s.ctimeNs / 1_000_000_000n},${s.ctimeNs % 1_000_000_000n}`;
}

function rawStatChecked(path: string): RawStat | null {
  if (process.versions.node.split('.')[0] !== '20') return null;
  try {
    const binding = internalBinding<{ stat?: unknown }>('fs');
    if (typeof binding?.stat !== 'function') return null;
    const stat = binding.stat.bind(binding) as RawStat;
    // Checked on the path asked for (it usually exists) or, failing that, on the node binary itself.
    for (const probe of [path, process.execPath]) {
      const expected = publicKey(probe);
      if (expected === null) continue;
      const a = stat(probe, false, undefined, false);
      return a !== undefined && a.length >= 16 && `${a[7]},${a[8]},${a[14]},${a[15]}` === expected ? stat : null;
    }
    return null;
  } catch {
    return null;
  }
}
