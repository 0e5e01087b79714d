import type { CancelRequest, Outcome, Reason } from '../registry/record.js';

/**
 * How a run's reason (docs/contract.md, "Reasons") is written at its end by whoever records a cancel
 * (a record of any age reads with one: lib/registry/record.ts).
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
