import { SubagentError, inRegistry } from '../base/errors.js';
import { waitFor } from '../base/wait.js';
import { isTerminal, type Observation } from '../runs/observe.js';
import { nameNotFound, validateName } from '../registry/names.js';
import { agentsDir, nameDir, runDir } from '../registry/store.js';
import type { Outcome, Status } from '../registry/record.js';
import { writeJunit } from '../runs/junit.js';
import { stallOf } from '../runs/stall.js';
import { BRIEF_FIELDS, ENTRY_FIELDS, projectEntry, type AgentEntry } from '../runs/entry.js';
import { inRegistryOf, placeOf, type Context, type Place } from './context.js';
import { announceUnknown, publishDueFollowUps, untrustedTail } from './announce.js';
import { waitTimeoutMs } from './settings.js';
import { entriesOf, listedNames, listingCache, rowsOf, snapshot, type ListingTail, type Problem, type Rows, type Snapshot } from './listing.js';

export type { AgentEntry } from '../runs/entry.js';
export type { ListingTail, Problem, QueueSummary } from './listing.js';

export interface StatusOptions extends Context {
  /** Only these names; a name that does not exist is not listed (waiting for it: E_NAME_NOT_FOUND). */
  names?: string[] | undefined;
  /** All names under `prefix/`. */
  prefix?: string | undefined;
  /** Every name (the default when listing; needed to wait for everything). */
  all?: boolean | undefined;
  /** Resolve at the first change of any selected run — with no selection, of any run of the registry, a new one too (adds `changed`). */
  wait?: boolean | undefined;
  /** Resolve when every selected run is done or unknown. */
  waitTerminal?: boolean | undefined;
  /** How long to wait, in seconds; undefined: SUBAGENT_WAIT_TIMEOUT_SEC (default 100); 0: forever. */
  timeoutSec?: number | undefined;
  /** Reject with E_RUN_FAILED when any selected run did not succeed. */
  requireSuccess?: boolean | undefined;
  /** Also write a JUnit XML report to this file (relative: against `cwd`). */
  junit?: string | undefined;
  /** Fire the end hooks of every selected run found `unknown` (its supervisor died), once, in a trusted registry (docs/hooks.md). */
  announce?: boolean | undefined;
  /** Ends a wait early, as its timeout would (E_WAIT_TIMEOUT): the MCP server's cancelled calls. */
  signal?: AbortSignal | undefined;
  /** Print only these fields of each entry of `agents`, in this order (ENTRY_FIELDS names them all). */
  fields?: string[] | undefined;
  /** Print only the fields an orchestrator acts on (BRIEF_FIELDS). */
  brief?: boolean | undefined;
}

/** A run that changed while `wait` waited. */
export interface Change {
  name: string;
  previousStatus: string | null;
  status: Status;
  run: number;
  exitCode: number | null;
  finishedAt: string | null;
  /** The run is stalled now (a change of this alone is a change: a stall, or its end). */
  stalled: boolean;
  /** Parked until then (--on-limit wait); a run that parks, or goes on, is a change. */
  parkedUntil: string | null;
}

/** What status resolves to (docs/schemas/status.schema.json). */
export interface StatusResult extends ListingTail {
  ok: true;
  registry: string;
  /** The latest run of each selected name, in name order. */
  agents: AgentEntry[];
  /** With `wait`: the runs that changed. */
  changed?: Change[];
  /** With `junit`: the report's path. */
  junit?: string;
}

/** Checks the options that do not need the registry; the verb calls it before anything is read. */
export function checkStatusOptions(o: StatusOptions): void {
  for (const n of o.names ?? []) validateName(n);
  if (o.prefix !== undefined) validateName(o.prefix);
  const selectors = [(o.names ?? []).length > 0, o.prefix !== undefined, o.all === true].filter(Boolean).length;
  if (selectors > 1) throw new SubagentError('E_ARG_INVALID', '--name, --prefix and --all cannot be combined', { hint: 'choose one way to select runs' });
  if (o.wait && o.waitTerminal) throw new SubagentError('E_ARG_INVALID', '--wait and --wait-terminal cannot be combined', { hint: 'choose one' });
  // A bare --wait waits on the whole registry, for any change (a new run too); waiting for every run to
  // end needs a target.
  if (o.fields !== undefined && o.brief) throw new SubagentError('E_ARG_INVALID', '--fields and --brief cannot be combined', { hint: 'choose one' });
  for (const f of o.fields ?? []) {
    if (!(ENTRY_FIELDS as readonly string[]).includes(f))
      throw new SubagentError('E_ARG_INVALID', `--fields: "${f}" is not a field of a status entry`, {
        flag: '--fields',
        value: f,
        hint: `name fields separated by commas, of: ${ENTRY_FIELDS.join(', ')}`,
      });
  }
  if (o.fields !== undefined && o.fields.length === 0)
    throw new SubagentError('E_ARG_INVALID', '--fields needs at least one field', { flag: '--fields', hint: `e.g. --fields name,status,outcome` });
  if (o.waitTerminal && selectors === 0) {
    throw new SubagentError('E_WAIT_NAME_REQUIRED', 'waiting for runs to end needs the runs to wait for', {
      hint: 'add --name N (repeatable), --prefix P or --all',
    });
  }
}

/** The fields the options print of each entry, or null for all of them. */
export function printedFields(o: StatusOptions): readonly string[] | null {
  return o.brief ? BRIEF_FIELDS : (o.fields ?? null);
}

/** A listing the status cache may serve: no names, no wait, no --require-success, no --junit. */
export function isPlainListing(o: StatusOptions): boolean {
  return !o.wait && !o.waitTerminal && !o.requireSuccess && !o.announce && o.junit === undefined && (o.names ?? []).length === 0;
}

/**
 * A plain listing as rows: the status cache's stretches stay bytes, for the status verb to print as they
 * are (lib/verbs/status.ts). null when the options ask for more than a plain listing.
 */
export function plainListing(o: StatusOptions): (Rows & { registry: string; fields: readonly string[] | null }) | null {
  checkStatusOptions(o);
  // Fields of one's choosing are taken from the entries (the library's path); the brief ones the cache holds too.
  if (!isPlainListing(o) || o.fields !== undefined) return null;
  const place = placeOf(o);
  const { registry, env } = place;
  try {
    const cache = listingCache(registry, o.prefix, env, o.brief === true);
    const { rows, tail } = rowsOf(registry, snapshot(registry, listedNames(registry, o.prefix, cache), false, cache));
    return { registry, rows, tail: { ...tail, ...untrustedTail(place) }, fields: printedFields(o) };
  } catch (err) {
    throw inRegistry(err, registry);
  }
}

/** subagent-status: list runs, or wait for the first change / for every selected run to be terminal. */
export async function status(o: StatusOptions): Promise<StatusResult> {
  checkStatusOptions(o);
  const place = placeOf(o);
  return inRegistryOf(place.registry, () => statusIn(place, o));
}

async function statusIn(place: Place, o: StatusOptions): Promise<StatusResult> {
  const { registry, env, cwd } = place;
  const asked = [...new Set(o.names ?? [])];
  const plain = isPlainListing(o);
  const refused = new Map<string, Problem>();
  const placing: Promise<void>[] = [];
  const take = (): Snapshot => {
    const cache = plain ? listingCache(registry, o.prefix, env) : null;
    const look = () => snapshot(registry, asked.length ? asked : listedNames(registry, o.prefix, cache), asked.length > 0, cache);
    const s = look();
    if (!o.announce) return s;
    announceUnknown(place, s.observations.values(), refused);
    // A follow-up published after a run it found unknown is listed (and waited for) as the name's latest.
    return publishDueFollowUps(place, s.observations.values(), refused, placing) ? look() : s;
  };
  const waited = o.wait || o.waitTerminal ? await waitOn(place, o, asked, take) : null;
  const { value, changed, timedOut, timeoutMs } = waited ?? { value: take(), changed: null, timedOut: false, timeoutMs: null };
  await Promise.all(placing);
  value.problems.push(...refused.values());
  const { rows, tail } = rowsOf(registry, value);
  const fields = printedFields(o);
  const entries = entriesOf(rows);
  const agents = fields ? (entries.map((e) => projectEntry(e, fields)) as unknown as AgentEntry[]) : entries;
  const body: StatusResult = { ok: true, registry, agents, ...tail, ...untrustedTail(place) };
  if (changed) body.changed = changed;
  if (o.junit !== undefined) body.junit = await writeJunit(o.junit, registry, [...value.observations.values()], cwd);
  // Both errors carry the listing: what the caller would have had, had nothing been required of it.
  const listing = { agents: body.agents, ...(body.junit ? { junit: body.junit } : {}) };
  if (timedOut) {
    throw new SubagentError(
      'E_WAIT_TIMEOUT',
      `timed out after ${(timeoutMs ?? 0) / 1000} s waiting for ${o.waitTerminal ? 'every run to end' : 'a change'}`,
      { registry, timeoutSec: (timeoutMs ?? 0) / 1000, hint: 'wait again, or raise --timeout / SUBAGENT_WAIT_TIMEOUT_SEC (0 waits forever)' },
      listing,
    );
  }
  if (o.requireSuccess) requireSuccess([...value.observations.values()], registry, listing);
  return body;
}

/** What a wait ended on: the last snapshot, the runs that changed (--wait), and whether its time ran out first. */
interface Waited {
  value: Snapshot;
  changed: Change[] | null;
  timedOut: boolean;
  timeoutMs: number | null;
}

/**
 * --wait and --wait-terminal: snapshots taken at every change of the selected runs' directories (and of
 * agents/, where a new name appears) until one of them changed, or every one is terminal.
 */
async function waitOn(place: Place, o: StatusOptions, asked: string[], take: () => Snapshot): Promise<Waited> {
  const { registry, env } = place;
  const timeoutMs = waitTimeoutMs(o.timeoutSec, env);
  const first = take();
  requireSelected(first, o, asked, registry);
  const baseline = new Map([...first.observations].map(([n, ob]) => [n, watchedOf(ob)]));
  let latest = first;
  const r = await waitFor({
    dirs: () => [
      agentsDir(registry),
      ...[...latest.observations.keys()].flatMap((n) => [nameDir(registry, n), runDir(registry, n, latest.observations.get(n)!.record.run)]),
    ],
    relevant: (file) => file === null || !/^(events\.log|stderr\.log|supervisor\.log|prompt)$|\.lock|\.tmp-|^\.new-/.test(file),
    timeoutMs,
    signal: o.signal,
    checkpoint: 'wait-after-read',
    check: () => {
      latest = take();
      // A run that vanished while waited on (its directory removed) ends the wait: it can never
      // become terminal, and it must not count as having succeeded.
      const gone = [...baseline.keys()].find((n) => !latest.observations.has(n));
      if (gone !== undefined) throw vanished(gone, registry);
      const done = o.waitTerminal
        ? [...latest.observations.values()].every((ob) => isTerminal(ob.status))
        : [...latest.observations].some(([n, ob]) => changedSince(baseline.get(n), ob));
      return { done, value: latest };
    },
  });
  return { value: r.value, changed: o.wait ? changesOf(baseline, r.value) : null, timedOut: r.timedOut, timeoutMs };
}

/** A wait's first snapshot must hold every name asked for; --prefix/--all must select something. */
function requireSelected(first: Snapshot, o: StatusOptions, asked: string[], registry: string): void {
  for (const n of asked) if (!first.observations.has(n)) throw nameNotFound(n, registry);
  // A bare --wait may start on an empty registry (its first run is a change).
  const bare = asked.length === 0 && o.prefix === undefined && !o.all;
  if (first.observations.size === 0 && !bare) {
    throw new SubagentError('E_NAME_NOT_FOUND', o.prefix !== undefined ? `no runs named ${o.prefix}/… in ${registry}` : `no runs in ${registry}`, {
      registry,
      hint: 'start some runs first, or check --registry / SUBAGENT_DIR',
    });
  }
}

/** What --wait watches of a run: a change of any of these is a change. */
interface Watched {
  status: Status;
  run: number;
  outcome: Outcome | null;
  stalled: boolean;
  parked: boolean;
}

function watchedOf(o: Observation): Watched {
  return { status: o.status, run: o.record.run, outcome: o.record.outcome, stalled: stallOf(o).stalled, parked: parkedOf(o) !== null };
}

function parkedOf(o: Observation): string | null {
  return o.status === 'running' || o.status === 'scheduled' ? o.record.parkedUntil : null;
}

/** Whether a run differs from what was watched of it before (nothing: a new run). */
function changedSince(before: Watched | undefined, o: Observation): boolean {
  const now = watchedOf(o);
  return (
    before === undefined ||
    before.status !== now.status ||
    before.run !== now.run ||
    before.outcome !== now.outcome ||
    before.stalled !== now.stalled ||
    before.parked !== now.parked
  );
}

/** The runs of the last snapshot that changed since the first. */
function changesOf(baseline: Map<string, Watched>, value: Snapshot): Change[] {
  return [...value.observations]
    .filter(([n, ob]) => changedSince(baseline.get(n), ob))
    .map(([n, ob]) => ({
      name: n,
      previousStatus: baseline.get(n)?.status ?? null,
      status: ob.status,
      run: ob.record.run,
      exitCode: ob.record.exitCode,
      finishedAt: ob.record.finishedAt,
      stalled: stallOf(ob).stalled,
      parkedUntil: parkedOf(ob),
    }));
}

/** --require-success: E_RUN_FAILED, with the listing, when a selected run did not succeed. */
function requireSuccess(observations: Observation[], registry: string, listing: Record<string, unknown>): void {
  const failed = observations.filter((ob) => !(ob.status === 'done' && ob.record.outcome === 'succeeded'));
  if (!failed.length) return;
  const n = observations.length;
  throw new SubagentError(
    'E_RUN_FAILED',
    `${failed.length} of ${n} run${n === 1 ? '' : 's'} did not succeed: ${failed.map((f) => `${f.record.name} (${f.status}${f.record.outcome ? ' ' + f.record.outcome : ''})`).join(', ')}`,
    { registry, failed: failed.map((f) => f.record.name), hint: 'read their answers with subagent-result --name N; errors are in each record' },
    listing,
  );
}

function vanished(name: string, registry: string): SubagentError {
  return new SubagentError('E_NAME_NOT_FOUND', `"${name}" disappeared from ${registry} while it was waited on`, {
    name,
    registry,
    hint: 'its directory was removed or moved; nothing more will be recorded for it',
  });
}
