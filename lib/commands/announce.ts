import { announceEnd } from '../runs/hooks.js';
import type { Observation } from '../runs/observe.js';
import { trustOfPlace, type Place } from './context.js';
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

/** A listing's `untrusted`, when its registry would run no hooks (one stat and one small read per listing, none per run). */
export function untrustedTail(place: Place): Pick<ListingTail, 'untrusted'> {
  const t = trustOfPlace(place);
  return t.trusted ? {} : { untrusted: { reason: t.reason ?? '', hint: t.hint ?? '' } };
}
