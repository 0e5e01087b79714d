import { statSync } from 'node:fs';

/**
 * A file's identity and version for the status cache — its inode, size, and ctime (whole seconds and
 * the nanoseconds past them) — and the proof the cache runs on every listing: whether many paths still
 * have the keys it remembers (or are still missing). The listing proves two per done name, so their
 * cost is the cost of `status` on a big registry.
 *
 * The key comes from a BigInt stat: ctime to the nanosecond, as the file system keeps it (a float
 * ctimeMs would round it). Measured in docs/benchmarks.md.
 */
export type Key = [ino: number, size: number, ctimeSec: number, ctimeNsec: number];

/** The key of what is at `path`; null when nothing is (ENOENT); throws on other errors. */
export function statKey(path: string): Key | null {
  const s = statSync(path, { bigint: true, throwIfNoEntry: false });
  return s === undefined ? null : [Number(s.ino), Number(s.size), Number(s.ctimeNs / 1_000_000_000n), Number(s.ctimeNs % 1_000_000_000n)];
}

/**
 * For each path i (relative to `base`, each ended by a NUL byte in `paths`): ok[i] = 1 when it has the
 * key keys[4i..4i+3] — or, where keys[4i] is NaN, when it does not exist — else 0 (an error that is not
 * ENOENT or ENOTDIR proves nothing: 0). Returns how many paths it probed (all of them, unless `keys` or
 * `ok` are shorter).
 */
export function probeKeys(base: string, paths: Uint8Array, keys: Float64Array, ok: Uint8Array): number {
  const bytes = Buffer.from(paths.buffer, paths.byteOffset, paths.length);
  let n = 0;
  for (let at = 0; n < ok.length && 4 * n + 4 <= keys.length; n++) {
    const nul = bytes.indexOf(0, at);
    if (nul === -1) break;
    ok[n] = holds(base, bytes.toString('latin1', at, nul), keys, 4 * n) ? 1 : 0;
    at = nul + 1;
  }
  return n;
}

/** The empty path names nothing, and a path through a file (ENOTDIR) is missing. */
function holds(base: string, path: string, keys: Float64Array, at: number): boolean {
  let key: Key | null;
  try {
    key = path === '' ? null : statKey(`${base}/${path}`);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOTDIR') return false;
    key = null;
  }
  if (Number.isNaN(keys[at])) return key === null;
  return key !== null && key[0] === keys[at] && key[1] === keys[at + 1] && key[2] === keys[at + 2] && key[3] === keys[at + 3];
}
