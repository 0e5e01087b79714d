/** Time helpers: ISO-8601 UTC for records, the monotonic clock for every deadline. */
export function nowIso(): string {
  return new Date().toISOString();
}

export function monotonicMs(): number {
  return performance.now();
}

const sleeper = new Int32Array(new SharedArrayBuffer(4));

/** Blocks the thread; used only in short lock back-offs of synchronous code. */
export function sleepSync(ms: number): void {
  Atomics.wait(sleeper, 0, 0, ms);
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Duration between two ISO times that never goes negative when the wall clock jumps back. */
export function durationMs(fromIso: string | null, toIso: string | null): number | null {
  if (!fromIso || !toIso) return null;
  const d = Date.parse(toIso) - Date.parse(fromIso);
  return Number.isFinite(d) ? Math.max(0, d) : null;
}
