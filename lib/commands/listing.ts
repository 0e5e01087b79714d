import { listFollowUps, namesWithFollowUps } from '../registry/follow-ups.js';
import { encodeName } from '../registry/names.js';
import { SubagentError, registryFault } from '../base/errors.js';
import { fastPath } from '../base/fast-paths.js';
import { observeLatest, observeListed, runProbe, type Observation } from '../runs/observe.js';
import { compareNames, listNames } from '../registry/store.js';
import type { Usage } from '../registry/record.js';
import { DoneCache, parseViews, spliceViews, type CachedView, type Stamp } from '../registry/done-cache.js';
import { queueView, readLimit, readMemoryFloor, type QueueView } from '../registry/queue.js';
import { availableMemory } from '../proc/memory.js';
import { formatSize } from '../base/size.js';
import { BRIEF_FIELDS, entryOf, projectEntry, type AgentEntry } from '../runs/entry.js';
import { usageOfName } from '../runs/usage.js';
import { JobViews } from '../runs/placed.js';

/** A name the listing could not read: it is left out of `agents` and said here. */
export interface Problem {
  name: string;
  code: string;
  error: string;
  path: unknown;
}

/** The registry's concurrency queue, when a limit or a free-memory floor is or was in force. */
export interface QueueSummary {
  limit: number | null;
  running: number;
  queued: number;
  /** The free-memory floor in bytes (--min-free-memory), or null. */
  minFreeMemory: number | null;
  /** With a floor: the memory the machine has available now, in bytes (null: cannot tell); else null. */
  availableMemory: number | null;
}

/** What a listing says besides `agents`, after it: the queue and the problems, when there are any. */
export interface ListingTail {
  queue?: QueueSummary;
  problems?: Problem[];
  /** The registry runs no hooks (docs/security.md): why, and how to adopt it. Absent when it is trusted. */
  untrusted?: { reason: string; hint: string };
}

/** Done runs of consecutive names that the status cache proved current: their views, as the cache's bytes. */
export interface CachedRow {
  kind: 'cached';
  stretch: CachedView;
}

/** A run read fresh, with what the read learnt of it on the way. */
export interface FreshRow {
  kind: 'fresh';
  observation: Observation;
  /** Usage over all runs of the name, when the read already knew it (undefined: not yet known). */
  usageTotal?: Usage | null;
  /** A done run the cache may keep once it is rendered: its listed name, and the stamp it was read after. */
  stamp?: { name: string; stamp: Stamp };
}

/** A row of a snapshot: a run read fresh, or a stretch of done runs the cache served. */
export type SnapshotRow = FreshRow | CachedRow;

/** A row of a listing: a run read fresh as its entry, or a stretch of done runs the cache served. */
export type ListingRow = { kind: 'fresh'; entry: AgentEntry } | CachedRow;

/** What was read of the selected names, at one moment. */
export interface Snapshot {
  /** What was read, by name. Cache hits are in `rows` only: the cache serves plain listings, which need no more. */
  observations: Map<string, Observation>;
  /** In listing order: what was read, and the done runs the cache proved current, already rendered. */
  rows: SnapshotRow[];
  cache: DoneCache | null;
  problems: Problem[];
}

/** A listing in name order, with what it says after `agents`. */
export interface Rows {
  rows: ListingRow[];
  tail: ListingTail;
}

/**
 * Reads the names: `strict` for names a caller gave (they may not exist; any error is the caller's),
 * else names from the listing, where one name's trouble goes to `problems` and the cache may serve.
 */
export function snapshot(registry: string, names: string[], strict: boolean, cache: DoneCache | null): Snapshot {
  const s: Snapshot = { observations: new Map(), rows: [], cache, problems: [] };
  // Runs placed on a job engine: one question to the engine for the whole listing.
  const jobs = new JobViews(names.length > 1);
  // A name with follow-ups queued is read fresh: its queue changes without its runs changing.
  const held = namesWithFollowUps(registry);
  for (let k = 0; k < names.length; k++) {
    const name = names[k]!;
    try {
      if (strict) {
        const o = observeLatest(registry, name, jobs);
        if (o) {
          s.observations.set(name, o);
          s.rows.push({ kind: 'fresh', observation: o });
        }
        continue;
      }
      // A done run the cache proves current comes rendered, joined to the previous row when that is
      // the cache's too and its view lies just before: a listing of current runs is one row.
      const last = s.rows[s.rows.length - 1];
      const after = last?.kind === 'cached' ? last.stretch : undefined;
      const fresh = held.size > 0 && held.has(encodeName(name));
      const hit = fresh ? undefined : cache?.lookup(name, after);
      if (hit) {
        if (hit !== after) s.rows.push({ kind: 'cached', stretch: hit });
        // The names after it that the cache holds next, current: joined to it in one pass.
        if (held.size === 0) k = cache!.extend(hit, names, k + 1) - 1;
        continue;
      }
      const l = observeListed(registry, name, fresh ? undefined : (cache ?? undefined), jobs);
      if (l === null) continue;
      const { observation } = l;
      s.observations.set(name, observation);
      const row: FreshRow = { kind: 'fresh', observation, usageTotal: l.usageTotal };
      if (l.stamp && observation.status === 'done' && observation.record.name === name) row.stamp = { name, stamp: l.stamp };
      s.rows.push(row);
    } catch (caught) {
      // A name's own trouble goes to `problems`; a process backend that cannot work fails the listing.
      // An unreadable folder of the name (its permissions, a symlink loop) is the name's trouble too.
      const err = registryFault(caught, registry) ?? caught;
      if (strict || !(err instanceof SubagentError) || err.code === 'E_PROC_UNAVAILABLE') throw err;
      s.problems.push({ name, code: err.code, error: err.message, path: err.details.path ?? null });
    }
  }
  return s;
}

/** Every name of the registry, or those under `prefix/`; the status cache's, when it proves them. */
export function listedNames(registry: string, prefix: string | undefined, cache?: DoneCache | null): string[] {
  const all = cache ? cache.listedNames() : listNames(registry);
  return prefix !== undefined ? all.filter((n) => n.startsWith(prefix + '/')) : all;
}

/** A status cache for a plain listing (docs/design.md, "The status cache"), unless its fast path is off. */
export function listingCache(registry: string, prefix: string | undefined, env: NodeJS.ProcessEnv, brief = false): DoneCache | null {
  return fastPath('status-cache', env) ? new DoneCache(registry, prefix === undefined, brief) : null;
}

/**
 * The snapshot's rows in name order, each fresh one as its entry (a done one read fresh is remembered by
 * the cache as the JSON it renders to), with the queue and problems; the cache is saved.
 */
export function rowsOf(registry: string, s: Snapshot): Rows {
  const sorted = [...s.rows].sort((x, y) => compareNames(nameOf(x), nameOf(y)));
  const queue = sorted.some(holdsTicket) || readLimit(registry) > 0 || readMemoryFloor(registry) > 0 ? queueView(registry, runProbe) : null;
  const positions = new Map(queue?.queued.map((q) => [q.dir, q.position]) ?? []);
  const available = queue && queue.floor > 0 ? availableMemory() : null;
  const heldBack = queue ? memoryHold(queue, available) : null;
  const held = namesWithFollowUps(registry);
  const rows = sorted.map((r): ListingRow => {
    if (r.kind === 'cached') return r;
    const { observation: o, stamp } = r;
    const position = positions.get(o.dir);
    const entry = entryOf(o, {
      usageTotal: r.usageTotal !== undefined ? r.usageTotal : usageOfName(registry, o.record),
      queued: o.status === 'scheduled' && position !== undefined,
      queuePosition: position ?? null,
      queuedPrompts: held.size > 0 && held.has(encodeName(o.record.name)) ? listFollowUps(registry, o.record.name) : [],
    });
    if (position === 1 && heldBack && entry.status === 'scheduled') entry.statusReason ??= heldBack;
    if (stamp) {
      const views = { full: JSON.stringify(entry), brief: JSON.stringify(projectEntry(entry, BRIEF_FIELDS)) };
      s.cache!.remember(stamp.name, stamp.stamp, o.record.queueTicket !== null, o.record.run, views);
    }
    return { kind: 'fresh', entry };
  });
  s.cache?.save();
  const tail: ListingTail = {};
  if (queue)
    tail.queue = {
      limit: queue.limit || null,
      running: queue.running.length,
      queued: queue.queued.length,
      minFreeMemory: queue.floor || null,
      availableMemory: available,
    };
  if (s.problems.length) tail.problems = s.problems;
  return { rows, tail };
}

/**
 * Why the first in line waits though a slot is free: the machine has less memory available than the
 * registry's floor (docs/memory.md); null when that is not what holds it.
 */
function memoryHold(queue: QueueView, available: number | null): string | null {
  if (queue.floor === 0 || available === null || available >= queue.floor) return null;
  if (queue.limit > 0 && queue.running.length >= queue.limit) return null;
  return `waiting for ${formatSize(queue.floor)} of available memory (--min-free-memory); ${formatSize(available)} available`;
}

/** The entries of the rows, the cache's bytes parsed. */
export function entriesOf(rows: ListingRow[]): AgentEntry[] {
  return rows.flatMap((r) => (r.kind === 'cached' ? (parseViews(r.stretch) as AgentEntry[]) : [r.entry]));
}

/**
 * The line's bytes of the rows, the `agents` array's items: each fresh entry's JSON (only `fields` of it,
 * when given), the cache's stretches as they are (a cache opened for brief views serves those).
 */
export function itemsOf(rows: ListingRow[], fields: readonly string[] | null = null): Buffer[] {
  return spliceViews(rows.map((r) => (r.kind === 'cached' ? r.stretch : JSON.stringify(fields ? projectEntry(r.entry, fields) : r.entry))));
}

/** The name a row is sorted by: a stretch's first. */
function nameOf(r: SnapshotRow): string {
  return r.kind === 'cached' ? r.stretch.name : r.observation.record.name;
}

/** Whether a row's run, or one of a stretch's runs, holds a queue ticket. */
function holdsTicket(r: SnapshotRow): boolean {
  return r.kind === 'cached' ? r.stretch.queueTicket : Boolean(r.observation.record.queueTicket);
}
