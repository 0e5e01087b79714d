import { SubagentError } from '../base/errors.js';
import { isTerminal, observeLatest, observeListed, observeRun, type Observation } from '../runs/observe.js';
import { validateName } from '../registry/names.js';
import { agentsDir, compareNames, listNames, listRuns, nameDir, runDir } from '../registry/store.js';
import type { Status, Usage } from '../registry/record.js';
import { DoneCache, type CachedView, type Stamp } from '../registry/done-cache.js';
import { fastPath } from '../base/fast-paths.js';
import { viewOf } from '../runs/entry.js';
import { waitFor } from '../base/wait.js';
import { queueView, readLimit } from '../registry/queue.js';
import { writeJunit } from '../runs/junit.js';
import { usageOfName } from '../runs/usage.js';
import { promptHead } from '../runs/transcript.js';
import { envValue, notFound, resolveRegistry, type Context } from './common.js';

export interface StatusOptions extends Context {
  names?: string[];
  /** All names under `prefix/`. */
  prefix?: string | undefined;
  all?: boolean;
  wait?: boolean;
  waitTerminal?: boolean;
  /** Seconds; undefined: SUBAGENT_WAIT_TIMEOUT_SEC (default 100); 0: forever. */
  timeoutSec?: string | undefined;
  requireSuccess?: boolean;
  junit?: string | undefined;
  /** With one --name: every run of it. */
  runs?: boolean;
}

interface Snapshot {
  /** What was read, by name. Cache hits are in `rows` only: the cache serves plain listings, which need no more. */
  observations: Map<string, Observation>;
  /** In listing order: what was read, and the done runs the cache proved current, already rendered. */
  rows: Array<Observation | CachedView>;
  /** Usage over all runs of a name, where the listing already knows it. */
  usage: Map<Observation, Usage | null>;
  /** Done runs read fresh that the cache may keep once rendered: their listed name and stamp. */
  stamps: Map<Observation, { name: string; stamp: Stamp }>;
  cache: DoneCache | null;
  problems: Array<Record<string, unknown>>;
}

export const DEFAULT_WAIT_TIMEOUT_SEC = 100;

export function waitTimeoutMs(flag: string | undefined, env: NodeJS.ProcessEnv): number | null {
  const raw = flag ?? envValue(env, 'SUBAGENT_WAIT_TIMEOUT_SEC', 'OPENCODE_PSA_WAIT_TIMEOUT_SEC') ?? String(DEFAULT_WAIT_TIMEOUT_SEC);
  const sec = Number(raw);
  if (raw.trim() === '' || !Number.isFinite(sec) || sec < 0) {
    throw new SubagentError('E_ARG_INVALID', `the wait timeout "${raw}" is not a number of seconds`, {
      value: raw,
      hint: 'give seconds as a number (0 waits forever), via --timeout or SUBAGENT_WAIT_TIMEOUT_SEC',
    });
  }
  return sec === 0 ? null : sec * 1000;
}

/** Checks the options that do not need the registry; the verb calls it before anything is read. */
export function checkStatusOptions(o: StatusOptions): void {
  for (const n of o.names ?? []) validateName(n);
  if (o.prefix !== undefined) validateName(o.prefix);
  const selectors = [(o.names ?? []).length > 0, o.prefix !== undefined, o.all === true].filter(Boolean).length;
  if (selectors > 1) throw new SubagentError('E_ARG_INVALID', '--name, --prefix and --all cannot be combined', { hint: 'choose one way to select runs' });
  if (o.wait && o.waitTerminal) throw new SubagentError('E_ARG_INVALID', '--wait and --wait-terminal cannot be combined', { hint: 'choose one' });
  if ((o.wait || o.waitTerminal) && selectors === 0) {
    throw new SubagentError('E_WAIT_NAME_REQUIRED', 'waiting needs the runs to wait for', { hint: 'add --name N (repeatable), --prefix P or --all' });
  }
  if (o.runs && ((o.names ?? []).length !== 1 || o.wait || o.waitTerminal)) {
    throw new SubagentError('E_ARG_INVALID', '--runs lists the history of one name', { hint: 'give exactly one --name, without --wait' });
  }
}

/** subagent-status: list runs, or wait for the first change / for every selected run to be terminal. */
export async function status(o: StatusOptions): Promise<Record<string, unknown>> {
  checkStatusOptions(o);
  const env = o.env ?? process.env;
  const registry = resolveRegistry(o);
  if (o.runs) return history(registry, o.names![0]!);
  const asked = [...new Set(o.names ?? [])];
  const waiting = o.wait || o.waitTerminal;
  const timeoutMs = waiting ? waitTimeoutMs(o.timeoutSec, env) : null;
  const take = (): Snapshot => snapshot(registry, asked.length ? asked : listedNames(registry, o.prefix), asked.length > 0, isPlainListing(o, env) ? new DoneCache(registry, o.prefix === undefined) : null);

  let value: Snapshot;
  let changed: Array<Record<string, unknown>> | null = null;
  let timedOut = false;
  if (!waiting) value = take();
  else {
    const first = take();
    for (const n of asked) if (!first.observations.has(n)) throw notFound(n, registry);
    if (first.observations.size === 0) {
      throw new SubagentError('E_NAME_NOT_FOUND', o.prefix !== undefined ? `no runs named ${o.prefix}/… in ${registry}` : `no runs in ${registry}`, {
        registry,
        hint: 'start some runs first, or check --registry / SUBAGENT_DIR',
      });
    }
    const baseline = new Map([...first.observations].map(([n, ob]) => [n, key(ob)]));
    let latest = first;
    const r = await waitFor({
      dirs: () => [agentsDir(registry), ...[...latest.observations.keys()].flatMap((n) => [nameDir(registry, n), runDir(registry, n, latest.observations.get(n)!.record.run)])],
      relevant: (file) => file === null || !/^(events\.log|stderr\.log|supervisor\.log|prompt)$|\.lock|\.tmp-|^\.new-/.test(file),
      timeoutMs,
      check: () => {
        latest = take();
        // A run that vanished while waited on (its directory removed) ends the wait: it can never
        // become terminal, and it must not count as having succeeded.
        const gone = [...baseline.keys()].find((n) => !latest.observations.has(n));
        if (gone !== undefined) throw vanished(gone, registry);
        const done = o.waitTerminal
          ? [...latest.observations.values()].every((ob) => isTerminal(ob.status))
          : [...latest.observations].some(([n, ob]) => baseline.get(n) !== key(ob));
        return { done, value: latest };
      },
    });
    value = r.value;
    timedOut = r.timedOut;
    if (o.wait) {
      changed = [...value.observations]
        .filter(([n, ob]) => baseline.get(n) !== key(ob))
        .map(([n, ob]) => ({
          name: n,
          previousStatus: baseline.has(n) ? baseline.get(n)!.split(' ')[0] : null,
          status: ob.status,
          run: ob.record.run,
          exitCode: ob.record.exitCode,
          finishedAt: ob.record.finishedAt,
        }));
    }
  }
  const { head, rows, render, tail } = output(registry, value);
  const body: Record<string, unknown> = { ...head, agents: rows.flatMap((r) => ('views' in r ? (JSON.parse(`[${r.views.toString('utf8', r.start, r.end)}]`) as unknown[]) : [render(r)])), ...tail };
  value.cache?.save();
  if (changed) body.changed = changed;
  if (o.junit !== undefined) body.junit = await writeJunit(o.junit, registry, [...value.observations.values()], o.cwd ?? process.cwd());
  if (timedOut) {
    throw new SubagentError(
      'E_WAIT_TIMEOUT',
      `timed out after ${(timeoutMs ?? 0) / 1000} s waiting for ${o.waitTerminal ? 'every run to end' : 'a change'}`,
      { registry, timeoutSec: (timeoutMs ?? 0) / 1000, hint: 'wait again, or raise --timeout / SUBAGENT_WAIT_TIMEOUT_SEC (0 waits forever)' },
      { agents: body.agents, ...(body.junit ? { junit: body.junit } : {}) },
    );
  }
  if (o.requireSuccess) {
    const failed = [...value.observations.values()].filter((ob) => !(ob.status === 'done' && ob.record.outcome === 'succeeded'));
    if (failed.length) {
      throw new SubagentError(
        'E_RUN_FAILED',
        `${failed.length} of ${value.observations.size} run${value.observations.size === 1 ? '' : 's'} did not succeed: ${failed.map((f) => `${f.record.name} (${f.status}${f.record.outcome ? ' ' + f.record.outcome : ''})`).join(', ')}`,
        { registry, failed: failed.map((f) => f.record.name), hint: 'read their answers with subagent-result --name N; errors are in each record' },
        { agents: body.agents, ...(body.junit ? { junit: body.junit } : {}) },
      );
    }
  }
  return body;
}

function vanished(name: string, registry: string): SubagentError {
  return new SubagentError('E_NAME_NOT_FOUND', `"${name}" disappeared from ${registry} while it was waited on`, {
    name,
    registry,
    hint: 'its directory was removed or moved; nothing more will be recorded for it',
  });
}

function key(o: Observation): string {
  return `${o.status satisfies Status} ${o.record.run} ${o.record.outcome}`;
}

function snapshot(registry: string, names: string[], strict: boolean, cache: DoneCache | null): Snapshot {
  const s: Snapshot = { observations: new Map(), rows: [], usage: new Map(), stamps: new Map(), cache, problems: [] };
  for (const name of names) {
    try {
      // Names given by the caller may not exist; names from the listing do.
      if (strict) {
        const o = observeLatest(registry, name);
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
      const l = observeListed(registry, name, cache ?? undefined);
      if (l === null) continue;
      s.observations.set(name, l.observation);
      s.rows.push(l.observation);
      s.usage.set(l.observation, l.usageTotal);
      if (l.stamp && l.observation.status === 'done' && l.observation.record.name === name) s.stamps.set(l.observation, { name, stamp: l.stamp });
    } catch (err) {
      // A name's own trouble goes to `problems`; a process backend that cannot work fails the listing.
      if (strict || !(err instanceof SubagentError) || err.code === 'E_PROC_UNAVAILABLE') throw err;
      s.problems.push({ name, code: err.code, error: err.message, path: err.details.path ?? null });
    }
  }
  return s;
}

/** Every name of the registry, or those under `prefix/`. */
function listedNames(registry: string, prefix: string | undefined): string[] {
  const all = listNames(registry);
  return prefix !== undefined ? all.filter((n) => n.startsWith(prefix + '/')) : all;
}

/**
 * A listing served by the status cache (docs/design.md, "The status cache"): a plain one, with no names
 * (a listing of every name, or a prefix), no wait, no --require-success, no --junit.
 */
function isPlainListing(o: StatusOptions, env: NodeJS.ProcessEnv): boolean {
  return !o.wait && !o.waitTerminal && !o.requireSuccess && o.junit === undefined && !o.runs && (o.names ?? []).length === 0 && fastPath('status-cache', env);
}

/** A run as `status` prints it; a done run read fresh is remembered by the cache as the JSON it renders to. */
type Render = (r: Observation) => Record<string, unknown>;

/** The listing in order, with what surrounds `agents` in the output: { ok, registry } before, queue and problems after. */
function output(registry: string, s: Snapshot): { head: Record<string, unknown>; rows: Array<Observation | CachedView>; render: Render; tail: Record<string, unknown> } {
  const nameOf = (r: Observation | CachedView) => ('views' in r ? r.name : r.record.name);
  const rows = [...s.rows].sort((x, y) => compareNames(nameOf(x), nameOf(y)));
  const queue = rows.some((r) => ('views' in r ? r.queueTicket : r.record.queueTicket)) || readLimit(registry) > 0 ? queueView(registry) : null;
  const positions = new Map(queue?.queued.map((q) => [q.dir, q.position]) ?? []);
  const render: Render = (r) => {
    const v = viewOf(r);
    v.usageTotal = s.usage.has(r) ? s.usage.get(r)! : usageOfName(registry, r.record);
    const position = positions.get(r.dir);
    v.queued = r.status === 'scheduled' && position !== undefined;
    v.queuePosition = position ?? null;
    const stamped = s.stamps.get(r);
    if (stamped) s.cache!.remember(stamped.name, stamped.stamp, r.record.queueTicket !== null, JSON.stringify(v));
    return v;
  };
  const tail: Record<string, unknown> = {};
  if (queue) tail.queue = { limit: queue.limit || null, running: queue.running.length, queued: queue.queued.length };
  if (s.problems.length) tail.problems = s.problems;
  return { head: { ok: true, registry }, rows, render, tail };
}

/** A plain listing as JSON text in pieces, for the status verb, which prints it as it is (ListingText). */
export interface ListingText {
  /** { ok, registry }: what comes before `agents`. */
  head: Record<string, unknown>;
  /**
   * The `agents` array as JSON text: strings, and stretches of the status cache's bytes, which hold
   * the views of consecutive done runs as the cache proved them current (U+2028/U+2029 escaped). With
   * every run current, the whole array is one stretch.
   */
  agents: Array<string | Buffer>;
  /** queue and problems, when there are any: what comes after `agents`. */
  tail: Record<string, unknown>;
}

/**
 * subagent-status's plain listing (no names, no wait, no --require-success, no --junit, no --runs), with
 * done runs served from the status cache as the bytes it holds: with 1 000 runs that is most of the
 * listing, never parsed nor serialised again. The same listing as status() gives, as text.
 */
export function listingText(o: StatusOptions): ListingText | null {
  checkStatusOptions(o);
  const env = o.env ?? process.env;
  if (!isPlainListing(o, env)) return null;
  const registry = resolveRegistry(o);
  const s = snapshot(registry, listedNames(registry, o.prefix), false, new DoneCache(registry, o.prefix === undefined));
  const { head, rows, render, tail } = output(registry, s);
  const agents: Array<string | Buffer> = ['['];
  let views: Buffer | null = null;
  let from = 0;
  let to = 0;
  const flush = () => {
    if (views) agents.push(views.subarray(from, to));
    views = null;
  };
  for (let i = 0; i < rows.length; i++) {
    const r = rows[i]!;
    if ('views' in r && r.views === views && r.start === to + 1 && r.views[to] === 0x2c) {
      to = r.end;
      continue;
    }
    flush();
    if (i > 0) agents.push(',');
    if ('views' in r) ({ views, start: from, end: to } = r);
    else agents.push(JSON.stringify(render(r)));
  }
  flush();
  agents.push(']');
  s.cache?.save();
  return { head, agents, tail };
}

/** --runs: every run of one name, oldest first. */
function history(registry: string, name: string): Record<string, unknown> {
  const runs = listRuns(registry, name);
  if (!runs) throw notFound(name, registry);
  return {
    ok: true,
    registry,
    name,
    runs: runs.map((k) => {
      const dir = runDir(registry, name, k);
      const ob = observeRun(dir);
      const r = ob.record;
      return {
        run: k,
        status: ob.status,
        outcome: r.outcome,
        cli: r.cli,
        model: r.model,
        promptHead: promptHead(dir),
        promptBytes: r.promptBytes,
        sessionId: r.sessionId,
        startedAt: r.startedAt,
        finishedAt: r.finishedAt,
        exitCode: r.exitCode,
        signal: r.signal,
        error: r.error,
        usage: r.usage,
        skippedLines: r.skippedLines ?? 0,
      };
    }),
  };
}
