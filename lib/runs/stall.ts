import type { RunRecord, Status } from '../registry/record.js';
import { listNames, readLatestOfListed, readRecord } from '../registry/store.js';
import { observeRun } from './observe.js';

/**
 * A stall as readers report it (docs/stalls.md): a flag on a running run, never a status of
 * its own. The supervisor writes `stalledSince`; a run that is not running (done, unknown, scheduled)
 * is never reported stalled, whatever its record kept.
 */
export function stallOf(o: { status: Status; record: RunRecord }): { stalled: boolean; stalledSince: string | null } {
  const since = o.record.stalledSince;
  return o.status === 'running' && typeof since === 'string' ? { stalled: true, stalledSince: since } : { stalled: false, stalledSince: null };
}

/**
 * A run that `parent`'s agent started itself (its record's `parent`), in the same registry, that is at
 * work: running and not stalled, or scheduled (being started, or waiting for a slot of the queue) — a
 * sign of work of the parent (docs/stalls.md): an orchestrator that waits for its children while they
 * start and work is not stuck. Its name, or null. Reads every name's latest record (the supervisor asks
 * only when the parent has shown no other sign for its stall time).
 */
export function childAtWork(registry: string, parent: string): string | null {
  for (const name of listNames(registry)) {
    try {
      const latest = readLatestOfListed(registry, name, readRecord);
      if (latest === null) continue;
      const { dir, value: r } = latest;
      if (r.parent !== parent || r.status === 'done') continue;
      const o = observeRun(dir);
      if (o.status === 'scheduled' || (o.status === 'running' && !stallOf(o).stalled)) return name;
    } catch {
      /* a record being replaced, or gone: not a child at work */
    }
  }
  return null;
}
