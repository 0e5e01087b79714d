import { statSync } from 'node:fs';
import { internalBinding } from '../internal-binding.js';
import { nativeAddon } from '../native/addon.js';

/**
 * A file's identity and version for the status cache — its inode, size, ctime seconds and ctime
 * nanoseconds, all integers — and the proof the cache runs on every listing: whether many paths still
 * have the keys it remembers (or are still missing). The listing proves two per done name, so their
 * cost is the cost of `status` on a big registry.
 *
 * The proof runs in the addon when it is built (lib/native/stat-probe.c: one call, fstatat(2)s and
 * comparisons in C); otherwise here, one stat at a time, with the same result for every path.
 *
 * On Node 20, fs.statSync spends ~20 µs of a ~26 µs call (measured here, 1 000 calls in a fresh
 * process) building a Stats object with four Dates that we never read (Node 22 builds them lazily),
 * and the garbage of a thousand of them costs the listing scavenges. Node 20's fs binding returns the
 * raw numbers instead. It is an internal API (lib/internal-binding.ts), so it is used only on Node 20,
 * and only once it gave the same key as fs.statSync for a real file; anything else — another Node, a
 * changed binding, an exception — falls back to fs.statSync for good. Keys never depend on which ran.
 */
export type Key = [ino: number, size: number, ctimeSec: number, ctimeNsec: number];

type RawStat = (path: string, bigint: false, req: undefined, throwIfNoEntry: false) => Float64Array | undefined;

let raw: RawStat | null | undefined;

function rawStat(probe: string): RawStat | null {
  if (raw === undefined) raw = rawStatChecked(probe);
  return raw;
}

/** The key of what is at `path`; null when nothing is (ENOENT); throws on other errors. */
export function statKey(path: string): Key | null {
  const stat = rawStat(path);
  if (stat === null) return publicKey(path);
  const a = stat(path, false, undefined, false);
  return a === undefined ? null : [a[7]!, a[8]!, a[14]!, a[15]!];
}

/**
 * For each path i (relative to `base`, each ended by a NUL byte in `paths`): ok[i] = 1 when it has the
 * key keys[4i..4i+3] — or, where keys[4i] is NaN, when it does not exist — else 0 (an error that is not
 * ENOENT or ENOTDIR proves nothing: 0). Returns how many paths it probed (all of them, unless `keys` or
 * `ok` are shorter).
 */
export function probeKeys(base: string, paths: Uint8Array, keys: Float64Array, ok: Uint8Array): number {
  const addon = nativeAddon();
  return addon ? addon.statProbe(base, paths, keys, ok) : probeKeysInNode(base, paths, keys, ok);
}

/** probeKeys without the addon (exported for the test that holds the two to the same results). */
export function probeKeysInNode(base: string, paths: Uint8Array, keys: Float64Array, ok: Uint8Array): number {
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

/** As fstatat(2) relative to base answers: the empty path names nothing, and a path through a file (ENOTDIR) is missing. */
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

function publicKey(path: string): Key | null {
  const s = statSync(path, { bigint: true, throwIfNoEntry: false });
  return s === undefined ? null : [Number(s.ino), Number(s.size), Number(s.ctimeNs / 1_000_000_000n), Number(s.ctimeNs % 1_000_000_000n)];
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
      return a !== undefined && a.length >= 16 && [a[7], a[8], a[14], a[15]].every((v, i) => v === expected[i]) ? stat : null;
    }
    return null;
  } catch {
    return null;
  }
}
