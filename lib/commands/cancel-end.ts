import { updateRecord } from '../registry/store.js';
import type { RunRecord } from '../registry/record.js';
import { nowIso } from '../base/time.js';

/**
 * The end of a cancelled run as cancel records it when its supervisor could not (dead, or too slow):
 * `done`/`cancelled`, the exit status unknown, and why in `endReason`. A record already done stays.
 */
export function recordCancelledEnd(dir: string, signal: string, endReason: string): RunRecord {
  return updateRecord(dir, (r) =>
    r.status === 'done'
      ? null
      : { ...r, status: 'done', outcome: 'cancelled', exitCode: null, signal: null, finishedAt: nowIso(), error: `cancelled with ${signal}`, endReason },
  );
}
