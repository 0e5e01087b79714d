/**
 * A recorded start time says which clock it was read from, so that a backend never takes the other's
 * number for its own:
 * - `"987654"` (digits): clock ticks since boot, field 22 of /proc/<pid>/stat — the Linux backend's,
 *   and the form of every registry written before the ps backend existed;
 * - `"epoch:1718000000"`: whole seconds since 1970-01-01 UTC, as `ps -o lstart` shows it — the ps
 *   backend's;
 * - `"exited"`, `"gone"`: the process had already ended when its identity was recorded (the start
 *   command and the supervisor write these when the process they just spawned is gone);
 * - anything else is foreign: no backend can check it.
 */
export type StartTime = { clock: 'ticks'; ticks: string } | { clock: 'epoch'; seconds: number } | { clock: 'gone' } | { clock: 'foreign' };

const EPOCH = 'epoch:';

export function epochStartTime(seconds: number): string {
  return `${EPOCH}${seconds}`;
}

export function readStartTime(text: string): StartTime {
  if (/^\d+$/.test(text)) return { clock: 'ticks', ticks: text };
  if (text.startsWith(EPOCH) && /^\d+$/.test(text.slice(EPOCH.length))) return { clock: 'epoch', seconds: Number(text.slice(EPOCH.length)) };
  if (text === 'exited' || text === 'gone') return { clock: 'gone' };
  return { clock: 'foreign' };
}
