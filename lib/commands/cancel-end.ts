import { updateRecord } from '../registry/store.js';
import { cancelledChildren, type EndReason, type RunRecord } from '../registry/record.js';
import { nowIso } from '../base/time.js';
import { cancelledEnd } from '../runs/reason.js';
import { announceEnd } from '../runs/hooks.js';
import { doneObservation } from '../runs/observe.js';

/**
 * The end of a cancelled run as cancel records it when its supervisor could not (dead, or too slow):
 * `done`/`cancelled` (or, stopped by the supervisor at a spend cap, `failed` with the cap's reason), the
 * exit status unknown, children still open cancelled, and why in `endReason`, then the end hooks. A record
 * already done stays.
 */
export function recordCancelledEnd(dir: string, signal: string, endReason: EndReason): RunRecord {
  const ended = updateRecord(dir, (r) => {
    if (r.status === 'done') return null;
    const at = nowIso();
    return {
      ...r,
      status: 'done',
      ...cancelledEnd(r.cancel ?? { requestedAt: at, signal, by: process.pid }),
      exitCode: null,
      signal: null,
      finishedAt: at,
      children: cancelledChildren(r.children, at, { since: r.cancel?.requestedAt }),
      endReason,
      resetsAt: null,
      // Not this process's to measure or to know: the supervisor's.
      elapsedMs: null,
      eventBytesAtEnd: null,
      leftovers: [],
    };
  });
  // The supervisor that fires the end hooks did not record this end: the cancel fires them (once:
  // claimed), from a registry its marker vouches for (docs/security.md).
  announceEnd(doneObservation(dir, ended), 'inherited');
  return ended;
}
