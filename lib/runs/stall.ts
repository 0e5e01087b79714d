import type { RunRecord, Status } from '../registry/record.js';

/**
 * A stall as readers report it (docs/stalls.md): a flag on a running run, never a status of
 * its own. The supervisor writes `stalledSince`; a run that is not running (done, unknown, scheduled)
 * is never reported stalled, whatever its record kept.
 */
export function stallOf(o: { status: Status; record: RunRecord }): { stalled: boolean; stalledSince: string | null } {
  const since = o.record.stalledSince;
  return o.status === 'running' && typeof since === 'string' ? { stalled: true, stalledSince: since } : { stalled: false, stalledSince: null };
}
