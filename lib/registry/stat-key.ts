import { statSync } from 'node:fs';

/**
 * A file's identity and version — its inode, size, ctime and mtime — by which the status cache knows
 * that agents/ still holds the names it read (a name appears or goes by a rename in agents/, which
 * moves its times).
 *
 * Times are Node's ctimeMs/mtimeMs: milliseconds as float64, which keep the nanoseconds the file system
 * stores to within a quarter of a microsecond, and come out the same for the same file every time.
 */
export type Key = [ino: number, size: number, ctimeMs: number, mtimeMs: number];

/** The key of what is at `path`; null when nothing is (ENOENT); throws on other errors. */
export function statKey(path: string): Key | null {
  const s = statSync(path, { throwIfNoEntry: false });
  return s === undefined ? null : [s.ino, s.size, s.ctimeMs, s.mtimeMs];
}
