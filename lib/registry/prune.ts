import { type Dirent, lstatSync, mkdirSync, readdirSync, renameSync, rmSync, rmdirSync, unlinkSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { isErrno, unreadable, unwritable } from '../base/errors.js';
import { checkpoint } from '../base/checkpoint.js';
import { readRegular } from '../base/regular.js';
import { createFile, fsyncDir, syncAll, tempName } from './durable.js';
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
/** Held by a prune while it removes: two prunes at once would each keep a name's pruned usage without the other's runs. */
export const PRUNE_LOCK = 'prune.lock';
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

/**
 * The pruned usage of many names, written durably before the runs they count are moved out (a kill
 * between the two counts them once: readers skip the runs up to `through`). Each step is done for every
 * name before the next — temp files written, fsynced, renamed, their directories fsynced — so that the
 * first fsync of each step commits what the others would (a filesystem with an ordered journal) and a
 * prune of thousands of names does not wait for thousands of journal commits.
 */
export function writePrunedUsage(registry: string, items: { name: string; pruned: PrunedUsage }[]): void {
  const writes = items.map(({ name, pruned }) => {
    const path = nameDir(registry, name) + '/' + PRUNED_FILE;
    return { path, tmp: tempName(path), data: JSON.stringify(pruned) + '\n' };
  });
  try {
    for (const w of writes) createFile(w.tmp, w.data);
    syncAll(writes.map((w) => w.tmp));
    for (const w of writes) renameSync(w.tmp, w.path);
    for (const dir of new Set(writes.map((w) => dirname(w.path)))) fsyncDir(dir);
  } catch (err) {
    for (const w of writes) rmSync(w.tmp, { force: true });
    throw unwritable(registry, err);
  }
}

/** The apparent size of a directory's tree, never following a symlink (a link counts its own few bytes). */
export function treeBytes(dir: string): number {
  let total = 0;
  let entries: Dirent[];
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return 0;
  }
  for (const e of entries) {
    const p = dir + '/' + e.name;
    if (e.isDirectory()) total += treeBytes(p);
    else {
      try {
        total += lstatSync(p).size;
      } catch {
        /* gone meanwhile: nothing to count */
      }
    }
  }
  return total;
}

let madeTrash = '';

function trashDir(registry: string): string {
  const dir = join(registry, TRASH);
  if (madeTrash === dir) return dir;
  try {
    mkdirSync(dir, { mode: PRIVATE_DIR });
  } catch (err) {
    if (!isErrno(err, 'EEXIST')) throw unwritable(registry, err);
  }
  madeTrash = dir;
  return dir;
}

/**
 * Deletes a tree taken into the trash: by the types its directory listings give (no stat per entry,
 * no rmdir tried on a directory before it is empty — a prune deletes tens of thousands of files), a
 * symlink unlinked, never followed. What cannot be deleted stays for the next prune.
 */
function deleteTree(path: string): void {
  try {
    for (const e of readdirSync(path, { withFileTypes: true })) {
      const p = path + '/' + e.name;
      if (e.isDirectory()) deleteTree(p);
      else unlinkSync(p);
    }
    rmdirSync(path);
  } catch {
    rmSync(path, { recursive: true, force: true });
  }
}

let trashed = 0;

function trashEntry(registry: string, what: string): string {
  return join(trashDir(registry), `${what}.${process.pid}.${++trashed}.${Math.random().toString(36).slice(2, 8)}`);
}

/** Moves run `run` of `name` into the trash (one rename) and deletes it there; false when it was gone already. */
export function removeRun(registry: string, name: string, run: number): boolean {
  const to = trashEntry(registry, `${encodeName(name)}.${run}`);
  try {
    renameSync(nameDir(registry, name) + '/' + run, to);
  } catch (err) {
    if (isErrno(err, 'ENOENT')) return false;
    throw unwritable(registry, err);
  }
  checkpoint('prune-run-moved');
  deleteTree(to);
  return true;
}

/**
 * Takes a whole name out (one rename of its directory), then looks at what it took: when it holds an
 * entry that `expected` (its run numbers, and the files prune itself left) does not — a resume published
 * a run, or is publishing one, between the caller's look and the rename — the name is put back and
 * false returned. A name that cannot be put back (a start took the name meanwhile) is kept in the trash
 * under a name no prune deletes. False too when the name was gone already.
 */
export function removeName(registry: string, name: string, expected: Set<string>): boolean {
  const from = nameDir(registry, name);
  const to = trashEntry(registry, encodeName(name));
  try {
    renameSync(from, to);
  } catch (err) {
    if (isErrno(err, 'ENOENT')) return false;
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
    deleteTree(to);
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
  for (const e of entries) if (!e.startsWith(RACED)) deleteTree(join(registry, TRASH, e));
}
