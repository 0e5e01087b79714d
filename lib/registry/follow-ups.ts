import { existsSync, mkdirSync, readdirSync, renameSync, rmdirSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { isErrno, unwritable } from '../base/errors.js';
import { readRegular } from '../base/regular.js';
import { nowIso } from '../base/time.js';
import { replaceFileDurably } from './durable.js';
import { withLock } from './lock.js';
import { encodeName } from './names.js';
import { PRIVATE_DIR } from './private.js';
import type { EndReason, Outcome } from './record.js';
import { FILES } from './store.js';

/**
 * A name's follow-up queue (`resume-subagent --queue`; docs/contract.md, "Follow-ups"): prompts waiting for
 * the name's latest run to end, each to become the name's next run in turn, oldest first.
 *
 *   <registry>/follow-ups/<name with "/" as "+">/<id>.json           a queued prompt: {queuedAt, any, prompt (base64)}
 *   <registry>/follow-ups/<name with "/" as "+">/<id>.taking-<run>   being made run <run> of the name
 *   <registry>/follow-ups/<name with "/" as "+">.lock                 held while one is taken
 *
 * An id sorts in queue order across processes (the system-wide monotonic clock). Taking one is a rename
 * to `.taking-<run>`, then the run published, then the file removed, all under the lock: whoever takes
 * the lock next finds a `.taking-` file whole and settles it by whether that run exists — so a prompt is
 * neither lost nor run twice, whoever dies where.
 */

/** A queued prompt, as status shows it. */
export interface FollowUp {
  id: string;
  /** 1: the next. */
  position: number;
  queuedAt: string;
  /** Follows the run before it whatever its outcome (`--after-any`); else only a success. */
  afterAny: boolean;
  promptBytes: number;
}

const ENTRY = /^([0-9]{20}-[0-9a-f]{8})\.json$/;
const TAKING = /^([0-9]{20}-[0-9a-f]{8})\.taking-([1-9][0-9]*)$/;

export function followUpsRoot(registry: string): string {
  return join(registry, 'follow-ups');
}

function dirOf(registry: string, name: string): string {
  return join(followUpsRoot(registry), encodeName(name));
}

function files(registry: string, name: string): string[] {
  try {
    return readdirSync(dirOf(registry, name)).sort();
  } catch (err) {
    if (isErrno(err, 'ENOENT', 'ENOTDIR')) return [];
    throw err;
  }
}

/** Whether the name has a queue folder (prompts queued, or one being taken): without one there is nothing to do. */
export function hasFollowUps(registry: string, name: string): boolean {
  return existsSync(dirOf(registry, name));
}

/** The encoded names that hold queued prompts (or did: an empty folder is left), for a listing. */
export function namesWithFollowUps(registry: string): Set<string> {
  try {
    return new Set(readdirSync(followUpsRoot(registry)).filter((e) => !e.endsWith('.lock')));
  } catch {
    return new Set();
  }
}

interface Stored {
  queuedAt: string;
  any: boolean;
  prompt: string;
}

function readEntry(path: string): Stored | null {
  try {
    const s = JSON.parse(readRegular(path).toString('utf8')) as Stored;
    return typeof s.prompt === 'string' && typeof s.queuedAt === 'string' ? s : null;
  } catch {
    return null;
  }
}

/** The name's queued prompts, oldest first (one being taken is not listed). */
export function listFollowUps(registry: string, name: string): FollowUp[] {
  const out: FollowUp[] = [];
  for (const f of files(registry, name)) {
    const id = ENTRY.exec(f)?.[1];
    const s = id ? readEntry(join(dirOf(registry, name), f)) : null;
    if (id && s)
      out.push({ id, position: out.length + 1, queuedAt: s.queuedAt, afterAny: s.any === true, promptBytes: Buffer.from(s.prompt, 'base64').length });
  }
  return out;
}

/** Runs `fn` holding the name's follow-up lock (adding, taking and dropping prompts). */
export function withFollowUps<T>(registry: string, name: string, fn: () => T): T {
  try {
    mkdirSync(followUpsRoot(registry), { recursive: true, mode: PRIVATE_DIR });
  } catch (err) {
    throw unwritable(registry, err);
  }
  return withLock(`${dirOf(registry, name)}.lock`, () => {
    try {
      return fn();
    } finally {
      // An empty queue leaves no folder: a listing reads the names that have one fresh.
      try {
        rmdirSync(dirOf(registry, name));
      } catch {
        /* not empty, or not there */
      }
    }
  });
}

/** Appends a prompt to the name's queue (durably); its id and its position. Under withFollowUps. */
export function addFollowUp(registry: string, name: string, prompt: Buffer, any: boolean): FollowUp {
  const dir = dirOf(registry, name);
  const id = `${process.hrtime.bigint().toString().padStart(20, '0')}-${Math.floor(Math.random() * 0x100000000)
    .toString(16)
    .padStart(8, '0')}`;
  try {
    mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR });
    replaceFileDurably(join(dir, `${id}.json`), JSON.stringify({ queuedAt: nowIso(), any, prompt: prompt.toString('base64') }));
  } catch (err) {
    throw unwritable(registry, err);
  }
  const all = listFollowUps(registry, name);
  return all.find((f) => f.id === id) ?? { id, position: all.length + 1, queuedAt: nowIso(), afterAny: any, promptBytes: prompt.length };
}

/** A queued prompt's bytes. */
export function followUpPrompt(registry: string, name: string, id: string): Buffer | null {
  const s = readEntry(join(dirOf(registry, name), `${id}.json`));
  return s ? Buffer.from(s.prompt, 'base64') : null;
}

/**
 * Settles what a taker that died left (under withFollowUps): a prompt whose run exists was run, and is
 * removed; one whose run does not is queued again, in its place.
 */
export function settleTaken(registry: string, name: string, runExists: (run: number) => boolean): void {
  const dir = dirOf(registry, name);
  for (const f of files(registry, name)) {
    const m = TAKING.exec(f);
    if (!m) continue;
    if (runExists(Number(m[2]))) removeQuietly(join(dir, f));
    else renameSync(join(dir, f), join(dir, `${m[1]}.json`));
  }
}

/** Marks a prompt as being made run `run` (under withFollowUps); `done` then removes it, `undo` queues it again. */
export function takeFollowUp(registry: string, name: string, id: string, run: number): { done: () => void; undo: () => void } {
  const dir = dirOf(registry, name);
  const taking = join(dir, `${id}.taking-${run}`);
  renameSync(join(dir, `${id}.json`), taking);
  return { done: () => removeQuietly(taking), undo: () => renameSync(taking, join(dir, `${id}.json`)) };
}

/** Drops queued prompts (under withFollowUps): those at these positions, or all; what was dropped. */
export function dropFollowUps(registry: string, name: string, positions: number[] | null): FollowUp[] {
  const dropped = listFollowUps(registry, name).filter((f) => positions === null || positions.includes(f.position));
  for (const f of dropped) removeQuietly(join(dirOf(registry, name), `${f.id}.json`));
  return dropped;
}

/**
 * The end a run's supervisor settled before it looked at the name's queue, kept beside the record
 * (`end.json`) while prompts are queued: when the supervisor dies before it records that end, the run is
 * `unknown`, and the verb that notices decides by this whether the queue goes on (docs/contract.md,
 * "Follow-ups"). A run cut off at work has none: its outcome is not known.
 */
export interface SettledEnd {
  outcome: Outcome;
  endReason: EndReason | null;
}

export function writeSettledEnd(dir: string, end: SettledEnd): void {
  replaceFileDurably(join(dir, FILES.settledEnd), JSON.stringify(end));
}

/** The settled end of the run in `dir`, or null (none, or not a whole one of ours). */
export function readSettledEnd(dir: string): SettledEnd | null {
  try {
    const s = JSON.parse(readRegular(join(dir, FILES.settledEnd)).toString('utf8')) as Partial<SettledEnd>;
    const outcomes: unknown[] = ['succeeded', 'failed', 'cancelled'];
    return outcomes.includes(s.outcome) ? { outcome: s.outcome as Outcome, endReason: s.endReason ?? null } : null;
  } catch {
    return null;
  }
}

function removeQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    /* gone already */
  }
}
