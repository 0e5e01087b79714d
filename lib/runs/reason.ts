import { NO_CAPS, type Caps, type CancelRequest, type Outcome, type Reason, type RunRecord } from '../registry/record.js';

/**
 * How a run's reason (docs/contract.md, "Reasons") is written at its end by whoever records a cancel,
 * and read back from records of any age.
 */

/**
 * The end of a run whose cancel was asked for: `cancelled` (the supervisor's for a stall: reason
 * `stalled`) — or, when the supervisor stopped it at a spend cap (the request carries the cap's reason),
 * `failed` with that reason: a cap is not a cancel.
 */
export function cancelledEnd(cancel: CancelRequest | null): { outcome: Outcome; error: string; reason: Reason } {
  const error = `cancelled with ${cancel?.signal ?? 'a signal'}`;
  if (cancel?.reason === 'stalled') return { outcome: 'cancelled', error, reason: 'stalled' };
  if (cancel?.reason) return { outcome: 'failed', error: cancel.message ?? `stopped at its ${cancel.reason} cap`, reason: cancel.reason };
  return { outcome: 'cancelled', error, reason: 'cancelled' };
}

/** A record's reason: as recorded; for a record written before the field existed, what its end implies. */
export function reasonOf(r: RunRecord): Reason | null {
  if (r.reason !== undefined) return r.reason;
  if (r.status !== 'done' || r.outcome === null || r.outcome === 'succeeded') return null;
  if (r.outcome === 'cancelled') return r.endReason === 'stalled' ? 'stalled' : 'cancelled';
  return r.endReason === 'spawn-failed' ? 'spawn-failed' : 'unknown';
}

/** A record's caps (none for a record written before they existed). */
export function capsOf(r: RunRecord): Caps {
  return { ...NO_CAPS, ...r.caps };
}
