import { lstatSync, mkdirSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { isErrno, unreadable, unwritable } from '../base/errors.js';
import { checkpoint } from '../base/checkpoint.js';
import { readRegular } from '../base/regular.js';
import { replaceFileDurably } from './durable.js';
import { encodeName } from './names.js';
import { PRIVATE_DIR } from './private.js';
import type { Usage } from './record.js';
import { nameDir } from './store.js';

/**
 * What `subagent-prune` does to the disk. A run (or a whole name) leaves by one rename into
 * `<registry>/trash/` — on the registry's own filesystem, so the rename is atomic — and is deleted from
 * there: a kill -9 at any instant leaves each run either whole in `agents/` or in the trash, which the
 * next prune empties and no other verb reads. A name loses only its oldest runs, lowest first, so its
 * history never has a hole: what is left is runs K..N.
 *
 *   <registry>/trash/<entry>               a run or name on its way out
 *   <registry>/agents/<name>/pruned.json   the usage of the name's pruned runs (PrunedUsage), written
 *                                          before they go, so that later runs' usage stays what it was
 */
export const TRASH = 'trash';
export const PRUNED_FILE = 'pruned.json';
/** A name taken out whole that a resume or a start raced into: never deleted by a later prune. */
const RACED = 'raced-';

/**
 * The usage of a name's pruned runs 1..through, summed per session (a CLI whose counters are cumulative
 * over its session, Codex, needs the earlier runs of the same session; the per-name figure needs all).
 */
export interface PrunedUsage {
  through: number;
  sessions: { sessionId: string | null; usage: Usage | null }[];
}

export const NOTHING_PRUNED: PrunedUsage = { through: 0, sessions: [] };

/** The name's pruned usage; NOTHING_PRUNED when none of its runs was pruned (or the file is not ours to believe). */
export function readPrunedUsage(registry: string, name: string): PrunedUsage {
  let text: string;
  try {
    text = readRegular(nameDir(registry, name) + '/' + PRUNED_FILE).toString('utf8');
  } catch {
    return NOTHING_PRUNED;
  }
  try {
    const v = JSON.parse(text) as Partial<PrunedUsage>;
    if (typeof v.through === 'number' && Number.isInteger(v.through) && v.through > 0 && Array.isArray(v.sessions))
      return { through: v.through, sessions: v.sessions };
  } catch {
    /* damaged: as if nothing was pruned */
  }
  return NOTHING_PRUNED;
}

/** Written durably before the runs it counts are moved out (a kill between the two counts them once: readers skip runs up to `through`). */
export function writePrunedUsage(registry: string, name: string, pruned: PrunedUsage): void {
  try {
    replaceFileDurably(nameDir(registry, name) + '/' + PRUNED_FILE, JSON.stringify(pruned) + '\n');
  } catch (err) {
    throw unwritable(registry, err);
  }
}

/** The apparent size of a file tree, never following a symlink (a link counts its own few bytes). */
export function treeBytes(path: string): number {
  let st: ReturnType<typeof lstatSync>;
  try {
    st = lstatSync(path);
  } catch {
    return 0;
  }
  if (!st.isDirectory()) return st.size;
  let total = 0;
  let entries: string[];
  try {
    entries = readdirSync(path);
  } catch {
    return 0;
  }
  for (const e of entries) total += treeBytes(path + '/' + e);
  return total;
}

function trashDir(registry: string): string {
  const dir = join(registry, TRASH);
  try {
    mkdirSync(dir, { mode: PRIVATE_DIR });
  } catch (err) {
    if (!isErrno(err, 'EEXIST')) throw unwritable(registry, err);
  }
  return dir;
}

let trashed = 0;

function trashEntry(registry: string, what: string): string {
  return join(trashDir(registry), `${what}.${process.pid}.${++trashed}.${Math.random().toString(36).slice(2, 8)}`);
}

/** Moves run `run` of `name` into the trash (one rename) and deletes it there. */
export function removeRun(registry: string, name: string, run: number): void {
  const to = trashEntry(registry, `${encodeName(name)}.${run}`);
  try {
    renameSync(nameDir(registry, name) + '/' + run, to);
  } catch (err) {
    throw unwritable(registry, err);
  }
  checkpoint('prune-run-moved');
  rmSync(to, { recursive: true, force: true });
}

/**
 * Takes a whole name out (one rename of its directory), then looks at what it took: when it holds an
 * entry that `expected` (its run numbers, and the files prune itself left) does not — a resume published
 * a run, or is publishing one, between the caller's look and the rename — the name is put back and
 * false returned. A name that cannot be put back (a start took the name meanwhile) is kept in the trash
 * under a name no prune deletes.
 */
export function removeName(registry: string, name: string, expected: Set<string>): boolean {
  const from = nameDir(registry, name);
  const to = trashEntry(registry, encodeName(name));
  try {
    renameSync(from, to);
  } catch (err) {
    if (isErrno(err, 'ENOENT')) return true;
    throw unwritable(registry, err);
  }
  checkpoint('prune-name-moved');
  let taken: string[];
  try {
    taken = readdirSync(to);
  } catch (err) {
    throw unreadable(to, err);
  }
  if (taken.every((e) => expected.has(e) || e === PRUNED_FILE || e.startsWith('.' + PRUNED_FILE))) {
    rmSync(to, { recursive: true, force: true });
    return true;
  }
  try {
    renameSync(to, from);
  } catch {
    renameSync(to, join(trashDir(registry), RACED + encodeName(name) + '.' + process.pid + '.' + trashed));
  }
  return false;
}

/** Deletes what an earlier prune left in the trash (it was killed between a rename and the delete). */
export function emptyTrash(registry: string): void {
  let entries: string[];
  try {
    entries = readdirSync(join(registry, TRASH));
  } catch (err) {
    if (isErrno(err, 'ENOENT', 'ENOTDIR')) return;
    throw unreadable(join(registry, TRASH), err);
  }
  for (const e of entries) if (!e.startsWith(RACED)) rmSync(join(registry, TRASH, e), { recursive: true, force: true });
}
