import { closeSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SubagentError, fsReason, isErrno, unreadable, unwritable } from '../base/errors.js';
import { openRegular, readRegular } from '../base/regular.js';
import { createFile, replaceFileDurably, syncAll } from './durable.js';
import { withLock } from './lock.js';
import { journalled } from './journal.js';
import { decodeName, encodeName, nameExists } from './names.js';
import { parseRecord, serialiseRecord, type RunRecord } from './record.js';
import { isIdentity, type ProcessIdentity } from '../proc/identity.js';
import { nowIso } from '../base/time.js';
import { PRIVATE_DIR, PRIVATE_FILE } from './private.js';

/**
 * The registry on disk:
 *   <registry>/agents/<name with "/" as "+">/<run>/record.json   the run's record (atomic, durable)
 *                                                 /prompt         the prompt, byte-exact
 *                                                 /events.log     the agent's stdout, as produced
 *                                                 /stderr.log     the agent's stderr
 *                                                 /supervisor.log the supervisor's own diagnostics
 *                                                 /supervisor.json who supervises it, until the record says
 *                                                 /end.json       the end its supervisor settled before it looked at the name's follow-ups
 *   <registry>/tmp/                               unpublished new names (renamed into agents/ whole)
 *   <registry>/made-here.json                     who made (or adopted) it, and where (lib/registry/trust.ts)
 *   <registry>/journal                            the changes a listing's cache must see (lib/registry/journal.ts)
 *   <registry>/trash/, agents/<name>/pruned.json  subagent-prune's (lib/registry/prune.ts)
 * A name or a run appears by one rename of a complete directory, so nobody ever sees half of one.
 */
export const FILES = {
  record: 'record.json',
  prompt: 'prompt',
  events: 'events.log',
  stderr: 'stderr.log',
  supervisorLog: 'supervisor.log',
  lock: 'record.lock',
  launcher: 'supervisor.json',
  settledEnd: 'end.json',
} as const;

let lastAgents = { registry: '', dir: '' };

export function agentsDir(registry: string): string {
  // Remembered: a listing asks once per name, with the same registry.
  if (lastAgents.registry !== registry) lastAgents = { registry, dir: join(registry, 'agents') };
  return lastAgents.dir;
}

// Plain concatenation, not path.join: an encoded valid name is one plain entry, so the result is as
// normal as agentsDir's, and listings build thousands of these (join showed in their profiles).
export function nameDir(registry: string, name: string): string {
  return agentsDir(registry) + '/' + encodeName(name);
}

export function runDir(registry: string, name: string, run: number): string {
  return nameDir(registry, name) + '/' + run;
}

export function recordPath(dir: string): string {
  return dir + '/' + FILES.record;
}

/** All names in the registry, sorted. A registry that does not exist yet holds none. */
export function listNames(registry: string): string[] {
  let entries: string[];
  try {
    entries = readdirSync(agentsDir(registry));
  } catch (err) {
    if (isErrno(err, 'ENOENT', 'ENOTDIR')) return [];
    throw unreadable(agentsDir(registry), err);
  }
  const names: string[] = [];
  for (const entry of entries) {
    const name = decodeName(entry);
    if (name !== null) names.push(name);
  }
  return names.sort(compareNames);
}

export function compareNames(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Run numbers of a name, ascending; null when the name does not exist. */
export function listRuns(registry: string, name: string): number[] | null {
  let entries: string[];
  try {
    entries = readdirSync(nameDir(registry, name));
  } catch (err) {
    if (isErrno(err, 'ENOENT', 'ENOTDIR')) return null;
    throw unreadable(nameDir(registry, name), err);
  }
  return entries
    .filter((e) => /^[1-9][0-9]*$/.test(e))
    .map(Number)
    .sort((a, b) => a - b);
}

/**
 * The latest run of a name. Runs are numbered without gaps and most names have only run 1, so one
 * failed probe for run 2 usually answers without listing the directory (status reads thousands).
 */
export function latestRun(registry: string, name: string): number | null {
  if (!exists(join(nameDir(registry, name), '2')) && exists(join(nameDir(registry, name), '1'))) return 1;
  const runs = listRuns(registry, name);
  return runs?.length ? runs[runs.length - 1]! : null;
}

/**
 * For names just listed from the registry (so they exist): the latest run's directory with one probe.
 * Run 1 is published together with its name, so a name without a run 2 is at run 1 — unless
 * subagent-prune removed its first runs: `readLatestOfListed` checks that guess after the fact.
 */
export function latestRunDirOfListed(registry: string, name: string): string | null {
  const dir = nameDir(registry, name);
  if (!exists(dir + '/2')) return dir + '/1';
  const run = latestRun(registry, name);
  return run === null ? null : dir + '/' + run;
}

/**
 * `read` of the latest run's directory of a listed name, with latestRunDirOfListed's one probe. When
 * the guess (run 1) fails because run 1 is gone (pruned), the name's runs are listed and its latest
 * read instead: only a pruned name pays for that. Null when the name holds no run (a prune took its
 * last one out).
 */
export function readLatestOfListed<T>(registry: string, name: string, read: (dir: string) => T): { dir: string; value: T } | null {
  const guess = latestRunDirOfListed(registry, name);
  if (guess === null) return null;
  try {
    return { dir: guess, value: read(guess) };
  } catch (err) {
    if (!guess.endsWith('/1') || exists(guess)) throw err;
  }
  const run = latestRun(registry, name);
  if (run === null) return null;
  const dir = runDir(registry, name, run);
  return { dir, value: read(dir) };
}

/**
 * `read` of a run directory listed a moment ago; null when the directory is gone since (subagent-prune
 * took the run out, oldest first: a history read while it works starts later, it has no hole).
 */
export function readListedRun<T>(dir: string, read: (dir: string) => T): T | null {
  try {
    return read(dir);
  } catch (err) {
    if (exists(dir)) throw err;
    return null;
  }
}

/** existsSync, not accessSync: a miss costs no exception (4× cheaper, and status probes thousands). */
function exists(path: string): boolean {
  return existsSync(path);
}

const readBuffer = { buf: Buffer.allocUnsafe(64 * 1024) };

/** Reads a whole small file with one open and as few reads as it takes (never blocking: openRegular). */
function readSmall(path: string): string {
  const fd = openRegular(path);
  try {
    let len = 0;
    for (;;) {
      if (len === readBuffer.buf.length) {
        const bigger = Buffer.allocUnsafe(readBuffer.buf.length * 2);
        readBuffer.buf.copy(bigger, 0, 0, len);
        readBuffer.buf = bigger;
      }
      const want = readBuffer.buf.length - len;
      const n = readSync(fd, readBuffer.buf, len, want, null);
      len += n;
      // A regular file reads short only at its end: no second read(2) just to see 0.
      if (n < want) break;
    }
    return readBuffer.buf.toString('utf8', 0, len);
  } finally {
    closeSync(fd);
  }
}

export function readRecord(dir: string): RunRecord {
  const path = recordPath(dir);
  let text: string;
  try {
    text = readSmall(path);
  } catch (err) {
    if (isErrno(err, 'ENOENT'))
      throw new SubagentError('E_REGISTRY_CORRUPT', `the run directory ${dir} has no record`, {
        path,
        hint: 'the directory was kept as it is; inspect or remove it by hand',
      });
    // Permissions or a symlink loop on the way: the registry's state around the record, not the record.
    if (isErrno(err, 'EACCES', 'EPERM', 'ELOOP', 'ENAMETOOLONG', 'EIO')) throw unreadable(path, err);
    throw new SubagentError('E_REGISTRY_CORRUPT', `the record ${path} cannot be read: ${fsReason(err)}`, {
      path,
      hint: 'fix its permissions or type (it must be a readable file); it was left as it is',
    });
  }
  return parseRecord(text, path);
}

/**
 * A directory just published by one rename, and its parent fsynced (which makes the rename survive a
 * crash of the machine). A failure of that fsync is kept for `assertDurable`, which throws it as
 * E_REGISTRY_UNWRITABLE: the caller starts the supervisor of the published run first, then calls it
 * before it reports success (docs/reliability.md, "Publishing a run").
 */
export interface Published {
  dir: string;
  assertDurable(): void;
}

/**
 * Publishes a new name with its run 1, all or nothing: everything is written into a temp directory,
 * fsynced, then renamed into agents/. Of concurrent creators of one name exactly one rename succeeds.
 */
export function createName(registry: string, name: string, record: RunRecord, prompt: Buffer): Published {
  const target = nameDir(registry, name);
  let tmp: string | null = null;
  try {
    mkdirSync(join(registry, 'tmp'), { recursive: true, mode: PRIVATE_DIR });
    mkdirSync(agentsDir(registry), { recursive: true, mode: PRIVATE_DIR });
    ignoreInGit(registry);
    tmp = mkdtempSync(join(registry, 'tmp', 'new-'));
    const run = join(tmp, '1');
    mkdirSync(run, PRIVATE_DIR);
    createFile(join(run, FILES.prompt), prompt);
    createFile(recordPath(run), serialiseRecord(record));
    syncAll([join(run, FILES.prompt), recordPath(run), run, tmp]);
  } catch (err) {
    if (tmp) rmSync(tmp, { recursive: true, force: true });
    throw unwritable(registry, err);
  }
  try {
    renameSync(tmp, target);
  } catch (err) {
    rmSync(tmp, { recursive: true, force: true });
    if (isErrno(err, 'EEXIST', 'ENOTEMPTY')) throw nameExists(name, registry);
    throw unwritable(registry, err);
  }
  return { dir: join(target, '1'), assertDurable: syncEntry(registry, agentsDir(registry)) };
}

/** Publishes run N of an existing name; of concurrent creators of run N exactly one wins (null: lost). */
export function createRun(registry: string, name: string, record: RunRecord, prompt: Buffer): Published | null {
  const parent = nameDir(registry, name);
  let tmp: string | null = null;
  try {
    tmp = mkdtempSync(join(parent, '.new-'));
    createFile(join(tmp, FILES.prompt), prompt);
    createFile(recordPath(tmp), serialiseRecord(record));
    syncAll([join(tmp, FILES.prompt), recordPath(tmp), tmp]);
  } catch (err) {
    if (tmp) rmSync(tmp, { recursive: true, force: true });
    throw unwritable(registry, err);
  }
  const target = join(parent, String(record.run));
  try {
    // A new run changes what the name's latest run is: listings that cached the last one read it again.
    journalled(target, () => renameSync(tmp!, target));
  } catch (err) {
    rmSync(tmp, { recursive: true, force: true });
    if (err instanceof SubagentError) throw err;
    if (isErrno(err, 'EEXIST', 'ENOTEMPTY')) return null;
    throw unwritable(registry, err);
  }
  return { dir: target, assertDurable: syncEntry(registry, parent) };
}

/** fsyncs a directory now; returns what throws its failure (E_REGISTRY_UNWRITABLE), if any, when called. */
function syncEntry(registry: string, dir: string): () => void {
  let failure: SubagentError | null = null;
  try {
    syncAll([dir]);
  } catch (err) {
    failure = unwritable(registry, err);
  }
  return () => {
    if (failure) throw failure;
  };
}

/**
 * Read-modify-write of a record under its lock. `mutate` returns the new record, or null to leave the
 * record untouched. Returns the record as it stands afterwards.
 */
export function updateRecord(dir: string, mutate: (current: RunRecord) => RunRecord | null, label?: string): RunRecord {
  return withLock(join(dir, FILES.lock), () => {
    const current = readRecord(dir);
    const next = mutate(current);
    if (next === null) return current;
    next.updatedAt = nowIso();
    const write = () => replaceFileDurably(recordPath(dir), serialiseRecord(next), label);
    // A done run is what listings cache (lib/registry/journal.ts): its changes, and its end, are journalled.
    if (current.status === 'done' || next.status === 'done') journalled(dir, write);
    else write();
    return next;
  });
}

/** A registry inside a git checkout should not show up in `git status`: it ignores itself. */
function ignoreInGit(registry: string): void {
  const path = join(registry, '.gitignore');
  if (!existsSync(path)) writeFileSync(path, '# created by subagents: the registry is not source\n*\n', { mode: PRIVATE_FILE });
}

/**
 * The supervisor's identity as its launcher saw it, in a side file so the start command need not take
 * the record's lock and fsync twice more. Replaced atomically; not fsynced on purpose: after a crash of
 * the machine the boot id differs and every unfinished run is `unknown` whatever this file says.
 */
export function writeLauncher(dir: string, identity: ProcessIdentity): void {
  const path = join(dir, FILES.launcher);
  const tmp = `${path}.tmp-${process.pid}`;
  try {
    writeFileSync(tmp, JSON.stringify(identity), { mode: PRIVATE_FILE });
    renameSync(tmp, path);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw unwritable(dir, err);
  }
}

export function readLauncher(dir: string): ProcessIdentity | null {
  try {
    const v: unknown = JSON.parse(readRegular(join(dir, FILES.launcher)).toString('utf8'));
    return isIdentity(v) ? v : null;
  } catch {
    return null;
  }
}
