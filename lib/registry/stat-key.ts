import { statSync, type Stats } from 'node:fs';

/**
 * A file's identity and version for the status cache — its inode, size, ctime and mtime — and the proof
 * the cache runs on every listing: whether many paths still have the keys it remembers (or are still
 * missing). The listing proves two per done name, so their cost is the cost of `status` on a big
 * registry.
 *
 * Times are Node's ctimeMs/mtimeMs: milliseconds as float64, which keep the nanoseconds the file system
 * stores to within a quarter of a microsecond, and come out the same for the same file every time. A
 * BigInt stat (ctimeNs) would be exact, but is slower by far on a cold listing (docs/benchmarks.md,
 * "Measured by hand").
 */
export type Key = [ino: number, size: number, ctimeMs: number, mtimeMs: number];

/** The key of what is at `path`; null when nothing is (ENOENT); throws on other errors. */
export function statKey(path: string): Key | null {
  const s = statSync(path, { throwIfNoEntry: false });
  return s === undefined ? null : [s.ino, s.size, s.ctimeMs, s.mtimeMs];
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
  let s: Stats | undefined;
  try {
    s = path === '' ? undefined : statSync(`${base}/${path}`, { throwIfNoEntry: false });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOTDIR') return false;
  }
  if (Number.isNaN(keys[at])) return s === undefined;
  return s !== undefined && s.ino === keys[at] && s.size === keys[at + 1] && s.ctimeMs === keys[at + 2] && s.mtimeMs === keys[at + 3];
}
