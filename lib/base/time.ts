/** Time helpers: ISO-8601 UTC for records, the monotonic clock for every deadline. */
let last = { ms: NaN, iso: '' };

/** Now, in ISO-8601 UTC; a parser may ask once per event line, so the same millisecond is formatted once. */
export function nowIso(): string {
  const ms = Date.now();
  if (ms !== last.ms) last = { ms, iso: isoOf(ms) as string };
  return last.iso;
}

const MAX_DATE_MS = 8.64e15;

/**
 * ISO-8601 UTC (what Date#toISOString gives) of a time in ms, or null when it is not one. Formatted
 * from the UTC fields by hand: V8's toISOString loads ICU's time-zone data, ~0.8 MB in every
 * process that formats a time (a supervisor does it on every record update).
 */
export function isoOf(ms: unknown): string | null {
  if (typeof ms !== 'number' || !(Math.abs(ms) <= MAX_DATE_MS)) return null;
  const d = new Date(ms);
  const year = d.getUTCFullYear();
  if (year < 0 || year > 9999) return d.toISOString();
  const p = (n: number, width = 2) => String(n).padStart(width, '0');
  return `${p(year, 4)}-${p(d.getUTCMonth() + 1)}-${p(d.getUTCDate())}T${p(d.getUTCHours())}:${p(d.getUTCMinutes())}:${p(d.getUTCSeconds())}.${p(d.getUTCMilliseconds(), 3)}Z`;
}

/** process.hrtime, not performance.now: the `performance` global loads perf_hooks (~0.7 MB per process). */
export function monotonicMs(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}

const sleeper = new Int32Array(new SharedArrayBuffer(4));

/** Blocks the thread; used only in short lock back-offs of synchronous code. */
export function sleepSync(ms: number): void {
  Atomics.wait(sleeper, 0, 0, ms);
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** This process's start on the wall clock, read when this module loads (moments after the start). */
const processStartWallMs = Date.now() - process.uptime() * 1000;

/**
 * How long a run that started at `startedAt` has taken, for the process that ends it (its supervisor):
 * this process's own lifetime on the monotonic clock (process.uptime), plus the wait from the run's start
 * to this process's — the only part read from the wall clock, when this process began, bounded to a
 * minute. So a step of the wall clock during the run (NTP, a suspend) does not count; null for a bad time.
 */
export function elapsedSinceMs(startedAt: string): number | null {
  const started = Date.parse(startedAt);
  if (!Number.isFinite(started)) return null;
  const before = Math.min(Math.max(0, processStartWallMs - started), 60_000);
  return Math.round(before + process.uptime() * 1000);
}

/** Duration between two ISO times that never goes negative when the wall clock jumps back. */
export function durationMs(fromIso: string | null, toIso: string | null): number | null {
  if (!fromIso || !toIso) return null;
  const d = Date.parse(toIso) - Date.parse(fromIso);
  return Number.isFinite(d) ? Math.max(0, d) : null;
}
