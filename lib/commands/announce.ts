import { SubagentError } from '../base/errors.js';
import { namesWithFollowUps } from '../registry/follow-ups.js';
import { encodeName } from '../registry/names.js';
import { announceEnd } from '../runs/hooks.js';
import type { Observation } from '../runs/observe.js';
import { placeNext } from '../supervisor/park.js';
import { publishFollowUpRun } from '../supervisor/follow-up.js';
import { trustOfPlace, type Place } from './context.js';
import { noticedEnd } from './follow-ups.js';
import type { ListingTail, Problem } from './listing.js';

/**
 * The one place where the end of a run whose supervisor died (`unknown`) is announced — its end hooks
 * fired, once (the O_EXCL claim of lib/runs/hooks.ts): `subagent-status --announce`, which the caller
 * asks for. Reading a run never does it (docs/hooks.md, "When"). Nothing is fired from a registry that
 * is not trusted; a hook refused on the way is a problem of the listing.
 */
export function announceUnknown(place: Place, observations: Iterable<Observation>, problems: Map<string, Problem>): void {
  let trusted: boolean | null = null;
  for (const ob of observations) {
    if (ob.status !== 'unknown') continue;
    trusted ??= trustOfPlace(place).trusted;
    if (!trusted) return; // the listing's `untrusted` says why
    announceEnd(ob, place.found, (why) => problems.set(ob.record.name, { name: ob.record.name, code: 'E_REGISTRY_UNSAFE', error: why, path: ob.dir }));
  }
}

/**
 * `subagent-status --announce` is also a verb that notices ends (docs/contract.md, "Follow-ups"): after a
 * run whose supervisor died before it looked at the name's queue (or before it looked again, after its
 * end), the next prompt that is due is published
 * — once, however many notice at the same time — and its supervisor started by a promise put in
 * `placing` (the verb awaits them before it answers). Whether a queue was looked at: the caller looks again,
 * and lists the name's latest run (its own or another verb's). Not from a registry that is not trusted (as for the hooks).
 */
export function publishDueFollowUps(place: Place, observations: Iterable<Observation>, problems: Map<string, Problem>, placing: Promise<void>[]): boolean {
  const held = namesWithFollowUps(place.registry);
  if (held.size === 0) return false;
  let looked = false;
  let trusted: boolean | null = null;
  for (const ob of observations) {
    const ended = held.has(encodeName(ob.record.name)) ? noticedEnd(ob) : null;
    if (!ended) continue;
    trusted ??= trustOfPlace(place).trusted;
    if (!trusted) return false; // the listing's `untrusted` says why
    const problem = (err: unknown): void => {
      problems.set(ob.record.name, {
        name: ob.record.name,
        code: err instanceof SubagentError ? err.code : 'E_INTERNAL',
        error: (err as Error).message,
        path: ob.dir,
      });
    };
    // Looked at: listed again, since another verb may have published it meanwhile.
    looked = true;
    try {
      const next = publishFollowUpRun(place.registry, ended, () => undefined);
      if (!next) continue;
      placing.push(placeNext(place.registry, next.dir, next.record).then(() => undefined, problem));
    } catch (err) {
      problem(err);
    }
  }
  return looked;
}

/** A listing's `untrusted`, when its registry would run no hooks (one stat and one small read per listing, none per run). */
export function untrustedTail(place: Place): Pick<ListingTail, 'untrusted'> {
  const t = trustOfPlace(place);
  return t.trusted ? {} : { untrusted: { reason: t.reason ?? '', hint: t.hint ?? '' } };
}
