import { existsSync } from 'node:fs';
import { hasFollowUps } from '../registry/follow-ups.js';
import { join } from 'node:path';
import { SubagentError } from '../base/errors.js';
import { SIZE_FORM, parseSize } from '../base/size.js';
import { journalled } from '../registry/journal.js';
import { withLock } from '../registry/lock.js';
import { validateName } from '../registry/names.js';
import { PRUNE_LOCK, emptyTrash, readPrunedUsage, removeName, removeRun, treeBytes, writePrunedUsage, type PrunedUsage } from '../registry/prune.js';
import type { RunRecord } from '../registry/record.js';
import { agentsDir, listNames, listRuns, nameDir, readListedRun, readRecord, runDir } from '../registry/store.js';
import { unsafeReason } from '../registry/trust.js';
import { addUsage } from '../runs/usage.js';
import { removeWorktree, worktreeKept } from '../runs/worktree.js';
import { inRegistryOf, placeOf, trustOfPlace, type Context } from './context.js';

/** What `subagent-prune` removes: whole finished runs, oldest first per name (docs/verbs/subagent-prune.md). */
export interface PruneOptions extends Context {
  /** Only runs that finished at least this long ago (milliseconds). */
  olderThanMs?: number | undefined;
  /** Keeps the last N runs of each name (the latest is kept anyway without `wholeNames`). */
  keepLast?: number | undefined;
  /** Removes the oldest of the runs selected until the registry's runs take at most this many bytes. */
  maxSizeBytes?: number | undefined;
  /** Only names under `prefix/`. */
  prefix?: string | undefined;
  /** Only these names. */
  names?: string[] | undefined;
  /** Says what would go, removes nothing. */
  dryRun?: boolean | undefined;
  /** A name removed whole takes its worktree with it, when git agrees nothing is lost. Needs `wholeNames`. */
  worktrees?: boolean | undefined;
  /** The latest run of a name may go too (and with it the name), when it is done and selected. */
  wholeNames?: boolean | undefined;
}

/** One run removed (or, with `dryRun`, that would be). */
export interface PrunedRun {
  name: string;
  run: number;
  /** The bytes of its directory (record, prompt, event log, transcript copies). */
  bytes: number;
}

/** With `worktrees`: each worktree of a name removed whole, and whether it went. */
export interface PrunedWorktree {
  name: string;
  path: string;
  removed: boolean;
  /** Why git kept it (then the name's latest run is kept too), else null. */
  reason: string | null;
}

/** What prune resolves to (docs/schemas/prune.schema.json). */
export interface PruneResult {
  ok: true;
  registry: string;
  dryRun: boolean;
  /** Oldest first within a name, names in order. */
  removed: PrunedRun[];
  freedBytes: number;
  /** The runs of the names looked at that are still there. */
  kept: number;
  worktrees?: PrunedWorktree[];
}

/** `--older-than DURATION`: a number with s, m, h, d or w (seconds when none), as milliseconds. */
export function parseDuration(raw: string, flag = '--older-than'): number {
  const m = /^([0-9]{1,9}(?:\.[0-9]{1,3})?)\s*([smhdw]?)$/.exec(raw.trim());
  if (!m) {
    throw new SubagentError('E_ARG_INVALID', `${flag} "${raw}" is not a duration`, {
      flag,
      value: raw,
      hint: 'a number with s, m, h, d or w (seconds when none), e.g. 7d or 12h',
    });
  }
  const unit = { '': 1, s: 1, m: 60, h: 3600, d: 86400, w: 604800 }[m[2] as '' | 's' | 'm' | 'h' | 'd' | 'w'];
  return Math.round(Number(m[1]) * unit * 1000);
}

/** `--max-size SIZE`: bytes. */
export function parseMaxSize(raw: string): number {
  const bytes = parseSize(raw);
  if (bytes === null) throw badNumber('--max-size', raw, `give the most the registry's runs may take, ${SIZE_FORM}, e.g. 500M`);
  return bytes;
}

/** `--keep-last N`: a whole number. */
export function parseKeepLast(raw: string): number {
  if (!/^[0-9]{1,9}$/.test(raw.trim())) throw badNumber('--keep-last', raw, 'give how many of the latest runs of each name to keep, e.g. 3');
  return Number(raw.trim());
}

function badNumber(flag: string, raw: string, hint: string): SubagentError {
  return new SubagentError('E_ARG_INVALID', `${flag} "${raw}" is not valid`, { flag, value: raw, hint });
}

function checkOptions(o: PruneOptions): void {
  const whole = (v: number | undefined, flag: string, hint: string) => {
    if (v !== undefined && (!Number.isSafeInteger(v) || v < 0)) throw badNumber(flag, String(v), hint);
  };
  whole(o.keepLast, '--keep-last', 'a whole number of runs');
  whole(o.maxSizeBytes, '--max-size', 'a whole number of bytes');
  if (o.olderThanMs !== undefined && (!Number.isFinite(o.olderThanMs) || o.olderThanMs < 0))
    throw badNumber('--older-than', String(o.olderThanMs), 'milliseconds, 0 or more');
  for (const n of o.names ?? []) validateName(n);
  if (o.prefix !== undefined) validateName(o.prefix);
  if ((o.names ?? []).length > 0 && o.prefix !== undefined) {
    throw new SubagentError('E_ARG_INVALID', '--name and --prefix cannot be combined', { hint: 'choose one way to select names' });
  }
  const selectors = [o.olderThanMs, o.keepLast, o.maxSizeBytes, o.prefix].filter((v) => v !== undefined).length + ((o.names ?? []).length > 0 ? 1 : 0);
  if (selectors === 0) {
    throw new SubagentError('E_ARG_INVALID', 'say which runs to prune', {
      hint: 'give --older-than, --keep-last, --max-size, --name or --prefix (and --dry-run to see what would go)',
    });
  }
  if (o.worktrees && !o.wholeNames) {
    throw new SubagentError('E_ARG_INVALID', '--worktrees removes the worktree of a name removed whole, and needs --whole-names', {
      hint: 'add --whole-names, or drop --worktrees (a name that keeps a run keeps its worktree)',
    });
  }
}

interface Candidate {
  name: string;
  run: number;
  record: RunRecord;
  bytes: number;
  /** The latest finish of this run and the name's earlier ones: the order in which --max-size takes runs. */
  age: number;
}

interface NamePlan {
  name: string;
  runs: number[];
  /** The runs that may go, lowest first: always the name's oldest runs (no hole in its history). */
  candidates: Candidate[];
}

/** subagent-prune: removes whole finished runs, each atomically (lib/registry/prune.ts). */
export async function prune(o: PruneOptions): Promise<PruneResult> {
  checkOptions(o);
  const dryRun = o.dryRun === true;
  const place = placeOf(o, dryRun ? 'read' : 'write');
  const { registry } = place;
  return inRegistryOf(registry, () => {
    if (dryRun) return pruneIn(registry, o, true);
    // Never removes in a registry we did not make (or name): one found in a clone is not ours to clean.
    const trust = trustOfPlace(place);
    if (!trust.trusted)
      throw new SubagentError('E_REGISTRY_UNTRUSTED', `subagent-prune removes nothing in ${registry}: ${trust.reason}`, {
        path: registry,
        hint: trust.hint ?? '',
      });
    if (!existsSync(agentsDir(registry))) return pruneIn(registry, o, false);
    return withLock(join(registry, PRUNE_LOCK), () => {
      emptyTrash(registry);
      return pruneIn(registry, o, false);
    });
  });
}

/** The prune itself, once the registry is known to be one it may remove in (and, unless dryRun, held). */
function pruneIn(registry: string, o: PruneOptions, dryRun: boolean): PruneResult {
  const plans = planOf(registry, o);
  const chosen = choose(registry, plans, o.maxSizeBytes);
  const result: PruneResult = { ok: true, registry, dryRun, removed: [], freedBytes: 0, kept: 0 };
  if (o.worktrees) result.worktrees = [];
  const work = plans.map((plan) => ({ plan, runs: chosen.get(plan.name) ?? [] }));
  if (!dryRun) {
    for (const w of work) if (o.worktrees && isWhole(w)) w.runs = keepWorktree(registry, w.plan, w.runs, result);
    // The usage of the runs about to go, kept for the names that keep runs, durably, before any goes.
    const kept = work.filter((w) => w.runs.length > 0 && !isWhole(w)).map((w) => prunedUsageAfter(registry, w.plan.name, w.runs));
    writePrunedUsage(
      registry,
      kept.filter((k) => k !== null),
    );
  }
  for (const { plan, runs } of work) {
    const gone = runs.length === 0 || dryRun ? runs : removeRuns(registry, plan, runs, o, result);
    for (const c of gone) {
      result.removed.push({ name: c.name, run: c.run, bytes: c.bytes });
      result.freedBytes += c.bytes;
    }
    result.kept += plan.runs.length - gone.length;
  }
  result.worktrees?.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return result;
}

/** Each selected name's runs, and those of its oldest that the options let go. */
function planOf(registry: string, o: PruneOptions): NamePlan[] {
  const wanted = new Set(o.names ?? []);
  const prefix = o.prefix === undefined ? undefined : o.prefix + '/';
  const names = listNames(registry).filter((n) => (wanted.size === 0 || wanted.has(n)) && (prefix === undefined || n.startsWith(prefix)));
  const uid = process.getuid?.();
  const cutoff = o.olderThanMs === undefined ? Infinity : Date.now() - o.olderThanMs;
  const plans: NamePlan[] = [];
  for (const name of names) {
    const runs = listRuns(registry, name) ?? [];
    if (runs.length === 0) continue;
    const plan: NamePlan = { name, runs, candidates: [] };
    plans.push(plan);
    // Never through a symlink, never what another user owns or may write.
    if (uid !== undefined && unsafeReason(nameDir(registry, name), 'dir', uid)) continue;
    const last = runs.length - 1;
    const keepFrom = o.keepLast === undefined ? runs.length : runs.length - o.keepLast;
    // A name with follow-ups queued (a queue a failure stopped) keeps its latest run: they are its next runs.
    const whole = o.wholeNames === true && !hasFollowUps(registry, name);
    let age = 0;
    for (let i = 0; i < runs.length; i++) {
      if (i >= keepFrom || (i === last && !whole)) break;
      const dir = runDir(registry, name, runs[i]!);
      if (uid !== undefined && unsafeReason(dir, 'dir', uid)) break;
      const record = readListedRun(dir, readRecord);
      // A run that is not done — scheduled, running, parked, waiting — stays, and so does every later one.
      if (record === null || record.status !== 'done') break;
      const finished = Date.parse(record.finishedAt);
      if (!(finished <= cutoff)) break;
      age = Math.max(age, finished);
      plan.candidates.push({ name, run: runs[i]!, record, bytes: treeBytes(dir), age });
    }
  }
  return plans;
}

/** The candidates to remove: all of them, or with a size to fit, the oldest until the registry's runs fit in it. */
function choose(registry: string, plans: NamePlan[], maxSizeBytes: number | undefined): Map<string, Candidate[]> {
  const chosen = new Map<string, Candidate[]>();
  const all = plans.flatMap((p) => p.candidates);
  if (maxSizeBytes !== undefined) {
    // Ordered by age (a run's and its name's earlier runs' latest finish), so a name still loses only its oldest runs.
    all.sort((a, b) => a.age - b.age || (a.name < b.name ? -1 : a.name > b.name ? 1 : a.run - b.run));
    let size = treeBytes(agentsDir(registry));
    let n = 0;
    while (n < all.length && size > maxSizeBytes) size -= all[n++]!.bytes;
    all.length = n;
  }
  for (const c of all) {
    const list = chosen.get(c.name);
    if (list) list.push(c);
    else chosen.set(c.name, [c]);
  }
  for (const list of chosen.values()) list.sort((a, b) => a.run - b.run);
  return chosen;
}

/** Whether a name's chosen runs reach its latest: then it goes whole. */
function isWhole(w: { plan: NamePlan; runs: Candidate[] }): boolean {
  return w.runs.length > 0 && w.runs[w.runs.length - 1]!.run === w.plan.runs[w.plan.runs.length - 1];
}

/**
 * A name about to go whole whose worktree holds work keeps its latest run, and with it the way back to
 * the worktree. The runs that may still go.
 */
function keepWorktree(registry: string, plan: NamePlan, runs: Candidate[], result: PruneResult): Candidate[] {
  const w = runs[runs.length - 1]!.record.worktree;
  if (!w) return runs;
  const reason = worktreeKept(registry, plan.name, w);
  if (reason === null) return runs;
  result.worktrees!.push({ name: plan.name, path: w.path, removed: false, reason });
  return runs.slice(0, -1);
}

/**
 * Removes a name's chosen runs, lowest first, between the two lines of one journalled change (the
 * listing's cache reads the name again); the whole name in one rename when its latest run is among
 * them. Returns those removed.
 */
function removeRuns(registry: string, plan: NamePlan, runs: Candidate[], o: PruneOptions, result: PruneResult): Candidate[] {
  const latest = plan.runs[plan.runs.length - 1]!;
  const whole = isWhole({ plan, runs });
  const gone = journalled(runDir(registry, plan.name, latest), () => {
    if (whole) return removeName(registry, plan.name, new Set(plan.runs.map(String))) ? runs : [];
    return runs.filter((c) => removeRun(registry, plan.name, c.run));
  });
  // The worktree only once its name is gone: a resume that raced the prune keeps its directory.
  const w = whole && gone.length > 0 && o.worktrees ? runs[runs.length - 1]!.record.worktree : null;
  if (w) {
    const reason = removeWorktree(w);
    result.worktrees!.push({ name: plan.name, path: w.path, removed: reason === null, reason });
  }
  return gone;
}

/**
 * The name's pruned usage with the runs about to go added (those counted already skipped); null when
 * nothing changes — no new run, or none with a usage (a run without one adds nothing, present or gone).
 */
function prunedUsageAfter(registry: string, name: string, runs: Candidate[]): { name: string; pruned: PrunedUsage } | null {
  if (!runs.some((c) => c.record.usage !== null)) return null;
  const pruned = readPrunedUsage(registry, name);
  const news = runs.filter((c) => c.run > pruned.through);
  if (!news.some((c) => c.record.usage !== null)) return null;
  const sessions = pruned.sessions.map((s) => ({ ...s }));
  for (const c of news) {
    const s = sessions.find((x) => x.sessionId === c.record.sessionId);
    if (s) s.usage = addUsage(s.usage, c.record.usage);
    else sessions.push({ sessionId: c.record.sessionId, usage: addUsage(null, c.record.usage) });
  }
  return { name, pruned: { through: news[news.length - 1]!.run, sessions } };
}
