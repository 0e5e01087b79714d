import { watch, type FSWatcher } from 'node:fs';
import { checkpoint, testWaitBackstopMs } from './checkpoint.js';
import { monotonicMs } from './time.js';

/**
 * Waiting that misses nothing (docs/guarantees.md, 11): watch first, then read, then sleep until a watched
 * directory changes, the backstop fires (to notice a supervisor that died without writing anything),
 * or the monotonic deadline passes. A change that lands between the read and the sleep has already
 * set `woken`, so the sleep returns at once.
 */
export interface WaitSpec<T> {
  /** Directories whose entries signal progress (name dirs, run dirs). Re-read every round. */
  dirs: () => string[];
  /** Only these file names wake the waiter (null: any change). */
  relevant?: (file: string | null) => boolean;
  check: () => { done: boolean; value: T };
  timeoutMs: number | null;
  backstopMs?: number;
}

export async function waitFor<T>(spec: WaitSpec<T>): Promise<{ value: T; timedOut: boolean }> {
  const watchers = new Map<string, FSWatcher | null>();
  const deadline = spec.timeoutMs === null ? null : monotonicMs() + spec.timeoutMs;
  const backstop = spec.backstopMs ?? testWaitBackstopMs ?? 1000;
  let woken = false;
  let wake: (() => void) | null = null;
  const poke = () => {
    woken = true;
    wake?.();
  };
  const ensureWatched = () => {
    for (const dir of spec.dirs()) {
      if (watchers.has(dir)) continue;
      try {
        const w = watch(dir, (_event, file) => {
          if (!spec.relevant || spec.relevant(file === null ? null : String(file))) poke();
        });
        w.on('error', () => {
          watchers.set(dir, null);
          poke();
        });
        watchers.set(dir, w);
      } catch {
        watchers.set(dir, null); // not there (yet): the backstop covers it
      }
    }
  };
  try {
    for (;;) {
      ensureWatched();
      woken = false;
      const result = spec.check();
      if (result.done) return { value: result.value, timedOut: false };
      const left = deadline === null ? backstop : deadline - monotonicMs();
      if (left <= 0) return { value: result.value, timedOut: true };
      // The window a lost wake-up would fall into: read, not yet asleep (test/fault/wait.test.ts holds it open).
      checkpoint('wait-after-read');
      if (woken) continue;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(backstop, left));
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      wake = null;
    }
  } finally {
    for (const w of watchers.values()) w?.close();
  }
}
