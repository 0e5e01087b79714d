import { SubagentError, registryFault } from '../base/errors.js';
import { fastPath } from '../base/fast-paths.js';
import { observeLatest, observeListed, runProbe, type Observation } from '../runs/observe.js';
import { compareNames, listNames } from '../registry/store.js';
import type { Usage } from '../registry/record.js';
import { DoneCache, type CachedView, type Stamp } from '../registry/done-cache.js';
import { queueView, readLimit } from '../registry/queue.js';
import { entryOf, type AgentEntry } from '../runs/entry.js';
import { usageOfName } from '../runs/usage.js';
import { JobViews } from '../runs/placed.js';

/** A name the listing could not read: it is left out of `agents` and said here. */
export interface Problem {
  name: string;
  code: string;
  error: string;
  path: unknown;
}

/** The registry's concurrency queue, when a limit is or was in force. */
export interface QueueSummary {
  limit: number | null;
  running: number;
  queued: number;
}

/** What a listing says besides `agents`, after it: the queue and the problems, when there are any. */
export interface ListingTail {
  queue?: QueueSummary;
  problems?: Problem[];
  /** The registry runs no hooks (docs/security.md): why, and how to adopt it. Absent when it is trusted. */
  untrusted?: { reason: string; hint: string };
}

/** What was read of the selected names, at one moment. */
export interface Snapshot {
  /** What was read, by name. Cache hits are in `rows` only: the cache serves plain listings, which need no more. */
  observations: Map<string, Observation>;
  /** In listing order: what was read, and the done runs the cache proved current, already rendered. */
  rows: Array<Observation | CachedView>;
  /** Usage over all runs of a name, where the listing already knows it. */
  usage: Map<Observation, Usage | null>;
  /** Done runs read fresh that the cache may keep once rendered: their listed name and stamp. */
  stamps: Map<Observation, { name: string; stamp: Stamp }>;
  cache: DoneCache | null;
  problems: Problem[];
}

/** A listing in name order: entries, and stretches of done runs' entries served by the status cache as JSON bytes. */
export interface Rows {
  rows: Array<AgentEntry | CachedView>;
  tail: ListingTail;
}

/**
 * Reads the names: `strict` for names a caller gave (they may not exist; any error is the caller's),
 * else names from the listing, where one name's trouble goes to `problems` and the cache may serve.
 */
export function snapshot(registry: string, names: string[], strict: boolean, cache: DoneCache | null): Snapshot {
  const s: Snapshot = { observations: new Map(), rows: [], usage: new Map(), stamps: new Map(), cache, problems: [] };
  // Runs placed on a job engine: one question to the engine for the whole listing.
  const jobs = new JobViews(names.length > 1);
  for (const name of names) {
    try {
      if (strict) {
        const o = observeLatest(registry, name, jobs);
        if (o) {
          s.observations.set(name, o);
          s.rows.push(o);
        }
        continue;
      }
      // A done run the cache proves current comes rendered, joined to the previous row when that is
      // the cache's too and its view lies just before: a listing of current runs is one row.
      const last = s.rows[s.rows.length - 1];
      const hit = cache?.lookup(name, last !== undefined && 'views' in last ? last : undefined);
      if (hit) {
        if (hit !== last) s.rows.push(hit);
        continue;
      }
      const l = observeListed(registry, name, cache ?? undefined, jobs);
      if (l === null) continue;
      s.observations.set(name, l.observation);
      s.rows.push(l.observation);
      s.usage.set(l.observation, l.usageTotal);
      if (l.stamp && l.observation.status === 'done' && l.observation.record.name === name) s.stamps.set(l.observation, { name, stamp: l.stamp });
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

/** Every name of the registry, or those under `prefix/`. */
export function listedNames(registry: string, prefix: string | undefined): string[] {
  const all = listNames(registry);
  return prefix !== undefined ? all.filter((n) => n.startsWith(prefix + '/')) : all;
}

/** A status cache for a plain listing (docs/design.md, "The status cache"), unless its fast path is off. */
export function listingCache(registry: string, prefix: string | undefined, env: NodeJS.ProcessEnv): DoneCache | null {
  return fastPath('status-cache', env) ? new DoneCache(registry, prefix === undefined) : null;
}

/**
 * The snapshot's rows in name order, each fresh one as its entry (a done one read fresh is remembered by
 * the cache as the JSON it renders to), with the queue and problems; the cache is saved.
 */
export function rowsOf(registry: string, s: Snapshot): Rows {
  const nameOf = (r: Observation | CachedView) => ('views' in r ? r.name : r.record.name);
  const sorted = [...s.rows].sort((x, y) => compareNames(nameOf(x), nameOf(y)));
  const queue = sorted.some((r) => ('views' in r ? r.queueTicket : r.record.queueTicket)) || readLimit(registry) > 0 ? queueView(registry, runProbe) : null;
  const positions = new Map(queue?.queued.map((q) => [q.dir, q.position]) ?? []);
  const rows = sorted.map((r): AgentEntry | CachedView => {
    if ('views' in r) return r;
    const position = positions.get(r.dir);
    const entry = entryOf(r, {
      usageTotal: s.usage.has(r) ? s.usage.get(r)! : usageOfName(registry, r.record),
      queued: r.status === 'scheduled' && position !== undefined,
      queuePosition: position ?? null,
    });
    const stamped = s.stamps.get(r);
    if (stamped) s.cache!.remember(stamped.name, stamped.stamp, r.record.queueTicket !== null, JSON.stringify(entry));
    return entry;
  });
  s.cache?.save();
  const tail: ListingTail = {};
  if (queue) tail.queue = { limit: queue.limit || null, running: queue.running.length, queued: queue.queued.length };
  if (s.problems.length) tail.problems = s.problems;
  return { rows, tail };
}

/** The entries of the rows, the cache's bytes parsed. */
export function entriesOf(rows: Rows['rows']): AgentEntry[] {
  return rows.flatMap((r) => ('views' in r ? (JSON.parse(`[${r.views.toString('utf8', r.start, r.end)}]`) as AgentEntry[]) : [r]));
}
