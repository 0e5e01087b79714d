import { readRegular } from '../base/regular.js';
import { mkdirSync, readdirSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { isErrno, unwritable } from '../base/errors.js';
import { waitFor } from '../base/wait.js';
import { isIdentity, liveness, type ProcessIdentity } from '../proc/identity.js';
import { availableMemory } from '../proc/memory.js';
import { replaceFileDurably } from './durable.js';
import { withLock } from './lock.js';
import { PRIVATE_DIR, PRIVATE_FILE } from './private.js';

/**
 * A concurrency limit per registry without a daemon. Each waiting supervisor holds a ticket, named so
 * that tickets sort in start order; a supervisor may run its agent only while holding a slot. Under
 * the queue lock a supervisor takes a slot when fewer than `limit` live slots exist, its ticket is
 * the first live one and — with a free-memory floor — the machine has that much memory available
 * (docs/memory.md). Slots and tickets of dead processes are swept by whoever holds the lock next.
 * A slot counts agents, not supervisors: it is held while its supervisor lives or, after that died,
 * while its run's agent (or any process of the run) still does.
 *
 *   <registry>/queue/limit             the limit in force (absent or 0: none)
 *   <registry>/queue/min-free-memory   the free-memory floor in bytes (absent or 0: none)
 *   <registry>/queue/tickets/<ticket>  a waiting run: {"dir": run directory}
 *   <registry>/queue/slots/<runId>     a running run: the supervisor's identity and its run directory
 *   <registry>/queue/queue.lock
 */
/**
 * What the queue must know of a run that only reading the run can tell (lib/runs/observe.ts answers it):
 * whether it is still scheduled, and whether its agent is alive. A question that throws counts as "no".
 */
export interface RunProbe {
  scheduled(dir: string): boolean;
  agentAlive(dir: string): boolean;
}

export function queueDir(registry: string): string {
  return join(registry, 'queue');
}

/** The queue's settings, each a file of one whole number (absent, unreadable or 0: none). */
type Setting = 'limit' | 'min-free-memory';

function readSetting(registry: string, setting: Setting): number {
  try {
    const n = Number(
      readRegular(join(queueDir(registry), setting))
        .toString('utf8')
        .trim(),
    );
    return Number.isSafeInteger(n) && n > 0 ? n : 0;
  } catch {
    return 0;
  }
}

function writeSetting(registry: string, setting: Setting, value: number): void {
  if (readSetting(registry, setting) === value) return;
  try {
    mkdirSync(queueDir(registry), { recursive: true, mode: PRIVATE_DIR });
  } catch (err) {
    throw unwritable(registry, err);
  }
  replaceFileDurably(join(queueDir(registry), setting), `${value}\n`);
}

export function readLimit(registry: string): number {
  return readSetting(registry, 'limit');
}

export function writeLimit(registry: string, limit: number): void {
  writeSetting(registry, 'limit', limit);
}

/** The registry's free-memory floor in bytes (0: none). */
export function readMemoryFloor(registry: string): number {
  return readSetting(registry, 'min-free-memory');
}

export function writeMemoryFloor(registry: string, bytes: number): void {
  writeSetting(registry, 'min-free-memory', bytes);
}

/** Whether the machine has the floor's memory available; memory that cannot be told holds nothing back. */
function memoryAllows(floor: number): boolean {
  if (floor === 0) return true;
  const available = availableMemory();
  return available === null || available >= floor;
}

/** A ticket name that sorts in start order across processes: the system-wide monotonic clock. */
export function newTicket(runId: string): string {
  return `${process.hrtime.bigint().toString().padStart(20, '0')}-${runId}`;
}

function ensureDirs(registry: string): void {
  mkdirSync(join(queueDir(registry), 'tickets'), { recursive: true, mode: PRIVATE_DIR });
  mkdirSync(join(queueDir(registry), 'slots'), { recursive: true, mode: PRIVATE_DIR });
}

function list(dir: string): string[] {
  try {
    return readdirSync(dir)
      .filter((e) => !e.startsWith('.'))
      .sort();
  } catch (err) {
    if (isErrno(err, 'ENOENT')) return [];
    throw err;
  }
}

function readJson(path: string): Record<string, unknown> | null {
  try {
    return JSON.parse(readRegular(path).toString('utf8')) as Record<string, unknown>;
  } catch {
    return null;
  }
}

function removeQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    /* already gone */
  }
}

/** A ticket is live while its run is still scheduled and watched by a live process. */
function ticketLive(path: string, probe: RunProbe): boolean {
  const t = readJson(path);
  if (!t || typeof t.dir !== 'string') return false;
  try {
    return probe.scheduled(t.dir);
  } catch {
    return false;
  }
}

/**
 * A slot is held while its supervisor lives (by identity), and after that died for as long as its run's
 * agent is proven alive: by the identity in the record, or, for an agent the supervisor never got to
 * record, by the run's marker. A slot whose run cannot be read any more is free: a corrupt record must
 * not block the queue for ever.
 */
function slotHeld(slot: Record<string, unknown> | null, probe: RunProbe): boolean {
  if (!slot) return false;
  // An owner the backend cannot check may be alive: its slot stays held.
  if (isIdentity(slot.owner) && liveness(slot.owner) !== 'dead') return true;
  if (typeof slot.dir !== 'string') return false;
  try {
    return probe.agentAlive(slot.dir);
  } catch {
    return false;
  }
}

export interface QueueView {
  limit: number;
  /** The free-memory floor in bytes (0: none). */
  floor: number;
  running: string[];
  queued: Array<{ dir: string; position: number }>;
}

/** The queue as it stands (read-only: dead entries are skipped, not removed). */
export function queueView(registry: string, probe: RunProbe): QueueView {
  const limit = readLimit(registry);
  const floor = readMemoryFloor(registry);
  const base = queueDir(registry);
  const running: string[] = [];
  for (const s of list(join(base, 'slots'))) {
    const slot = readJson(join(base, 'slots', s));
    if (slotHeld(slot, probe) && typeof slot?.dir === 'string') running.push(slot.dir);
  }
  const queued: QueueView['queued'] = [];
  for (const t of list(join(base, 'tickets'))) {
    const path = join(base, 'tickets', t);
    if (!ticketLive(path, probe)) continue;
    queued.push({ dir: String(readJson(path)?.dir), position: queued.length + 1 });
  }
  return { limit, floor, running, queued };
}

export function enqueue(registry: string, ticket: string, dir: string): void {
  try {
    ensureDirs(registry);
    writeFileSync(join(queueDir(registry), 'tickets', ticket), JSON.stringify({ dir }), { flag: 'wx', mode: PRIVATE_FILE });
  } catch (err) {
    if (!isErrno(err, 'EEXIST')) throw unwritable(registry, err);
  }
}

export function leaveQueue(registry: string, ticket: string | null, runId: string): void {
  if (ticket) removeQuietly(join(queueDir(registry), 'tickets', ticket));
  removeQuietly(join(queueDir(registry), 'slots', runId));
}

/**
 * Who may take a slot now: how many slots are held, and the first live ticket (ours counts as live), and
 * whether ours is still there. Only under the queue lock are the dead swept (`sweep`).
 */
function survey(base: string, ticket: string, sweep: boolean, probe: RunProbe): { live: number; first: string | null; mine: boolean } {
  let live = 0;
  for (const s of list(join(base, 'slots'))) {
    if (slotHeld(readJson(join(base, 'slots', s)), probe)) live++;
    else if (sweep) removeQuietly(join(base, 'slots', s));
  }
  let first: string | null = null;
  const tickets = list(join(base, 'tickets'));
  for (const t of tickets) {
    if (t === ticket || ticketLive(join(base, 'tickets', t), probe)) {
      first = t;
      break;
    }
    if (sweep) removeQuietly(join(base, 'tickets', t));
  }
  return { live, first, mine: tickets.includes(ticket) };
}

/**
 * One attempt: first without the lock — while live slots fill the limit or a live ticket is ahead of
 * ours, no attempt can win, and the queue lock is left to others. (With the ps process backend that look
 * costs a `ps`, and the same view then serves the locked attempt: the lock is not held across a `ps`.)
 * Then under the queue lock: sweep the dead, and take a slot if it is our turn.
 */
function tryTake(registry: string, ticket: string, runId: string, dir: string, me: ProcessIdentity, probe: RunProbe): boolean {
  const base = queueDir(registry);
  const before = survey(base, ticket, false, probe);
  const limit = readLimit(registry);
  if (before.mine && ((limit > 0 && before.live >= limit) || before.first !== ticket)) return false;
  // The first in line waits for memory too; the lock is not held while it is read (a vm_stat on macOS).
  if (before.mine && !memoryAllows(readMemoryFloor(registry))) return false;
  return withLock(join(base, 'queue.lock'), () => {
    enqueue(registry, ticket, dir); // again, in case a sweep took it while our run looked unwatched
    const limit = readLimit(registry);
    const { live, first } = survey(base, ticket, true, probe);
    if (limit > 0 && live >= limit) return false;
    if (first !== ticket) return false;
    writeFileSync(join(base, 'slots', runId), JSON.stringify({ owner: me, dir }), { mode: PRIVATE_FILE });
    removeQuietly(join(base, 'tickets', ticket));
    return true;
  });
}

/**
 * Waits for a slot: woken by any change in the queue directories, with a backstop that notices a slot
 * holder (supervisor or orphaned agent) that died without a trace, and memory that became available.
 * Resolves when the slot is ours.
 */
export async function waitForSlot(
  registry: string,
  ticket: string,
  runId: string,
  dir: string,
  me: ProcessIdentity,
  probe: RunProbe,
  backstopMs = 1000,
): Promise<void> {
  ensureDirs(registry);
  const base = queueDir(registry);
  const dirs = [join(base, 'slots'), join(base, 'tickets'), base];
  await waitFor({
    dirs: () => dirs,
    // The queue lock coming and going is no change of the queue: waking on it, every waiter's attempt (which
    // takes the lock) would wake all the others, round after round — cheap with /proc, but each attempt
    // costs the ps process backend a `ps` (lib/proc/ps.ts).
    relevant: (file) => file === null || !file.startsWith('queue.lock'),
    check: () => ({ done: tryTake(registry, ticket, runId, dir, me, probe), value: undefined }),
    timeoutMs: null,
    backstopMs,
  });
}
