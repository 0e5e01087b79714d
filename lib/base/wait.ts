import { watch, type FSWatcher } from 'node:fs';
import { checkpoint, testWaitBackstopMs } from './checkpoint.js';
import { monotonicMs } from './time.js';

/**
 * The one way to wait for something on disk: inotify (fs.watch) on the paths where it shows, and a
 * backstop for what no event announces (a process that died without writing anything) and for paths
 * that cannot be watched. `Watch` calls back on each relevant change; `waitFor` builds on it a wait that
 * misses nothing; `Throttle` spaces out the work a stream of changes asks for.
 */

/**
 * Watches paths (directories, or files) and calls `onChange` at each change `relevant` keeps (all, when
 * it is not given). A path that cannot be watched is not an error: `add` says so, and the caller polls.
 * A watch that fails later is dropped and reported to `onLost`.
 */
export class Watch {
  private readonly watchers = new Map<string, FSWatcher | null>();

  constructor(
    /** Called with the watched path that changed. */
    private readonly onChange: (path: string) => void,
    private readonly relevant?: (file: string | null) => boolean,
    private readonly onLost: () => void = () => undefined,
  ) {}

  /** Watches `path` unless it already is (or could not be); true when it is watched now. */
  add(path: string): boolean {
    if (this.watchers.has(path)) return this.watchers.get(path) !== null;
    try {
      const w = watch(path, (_event, file) => {
        if (!this.relevant || this.relevant(file === null ? null : String(file))) this.onChange(path);
      });
      w.on('error', () => {
        w.close();
        this.watchers.set(path, null);
        this.onLost();
      });
      this.watchers.set(path, w);
      return true;
    } catch {
      this.watchers.set(path, null); // not there (yet), or no inotify: the caller's polling covers it
      return false;
    }
  }

  /** Whether every path added is watched (none failed). */
  get whole(): boolean {
    for (const w of this.watchers.values()) if (w === null) return false;
    return true;
  }

  close(): void {
    for (const w of this.watchers.values()) w?.close();
    this.watchers.clear();
  }
}

export interface WaitSpec<T> {
  /** Paths whose changes signal progress (name dirs, run dirs, queue dirs). Re-read every round. */
  dirs: () => string[];
  /** Only these file names wake the waiter (null: any change). */
  relevant?: (file: string | null) => boolean;
  check: () => { done: boolean; value: T };
  timeoutMs: number | null;
  /** The re-check when nothing woke the waiter; default SUBAGENT_TEST_WAIT_BACKSTOP_MS, else 1 s. */
  backstopMs?: number;
  /** The re-check while a path of `dirs` is not watched; default `backstopMs`. */
  unwatchedMs?: number;
  /** The fault tests' checkpoint between the read and the sleep (lib/base/checkpoint.ts), if any. */
  checkpoint?: string;
  /** Ends the wait early, as its deadline would (timedOut: true). */
  signal?: AbortSignal | undefined;
}

/**
 * Waiting that misses nothing (docs/guarantees.md, 11): watch first, then read, then sleep until a watched
 * path changes, the backstop fires, or the monotonic deadline passes. A change that lands between the
 * read and the sleep has already set `woken`, so the sleep returns at once.
 */
export async function waitFor<T>(spec: WaitSpec<T>): Promise<{ value: T; timedOut: boolean }> {
  const deadline = spec.timeoutMs === null ? null : monotonicMs() + spec.timeoutMs;
  const backstop = spec.backstopMs ?? testWaitBackstopMs ?? 1000;
  let woken = false;
  let wake: (() => void) | null = null;
  const poke = () => {
    woken = true;
    wake?.();
  };
  const watched = new Watch(poke, spec.relevant, poke);
  spec.signal?.addEventListener('abort', poke);
  try {
    for (;;) {
      for (const dir of spec.dirs()) watched.add(dir);
      woken = false;
      const result = spec.check();
      if (result.done) return { value: result.value, timedOut: false };
      const left = deadline === null ? backstop : deadline - monotonicMs();
      if (left <= 0 || spec.signal?.aborted) return { value: result.value, timedOut: true };
      // The window a lost wake-up would fall into: read, not yet asleep (test/fault/wait.test.ts holds it open).
      if (spec.checkpoint !== undefined) checkpoint(spec.checkpoint);
      if (woken) continue;
      const sleep = watched.whole ? backstop : (spec.unwatchedMs ?? backstop);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(sleep, left));
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      wake = null;
    }
  } finally {
    spec.signal?.removeEventListener('abort', poke);
    watched.close();
  }
}

/**
 * Runs `work` at most once every `intervalMs`: a `schedule` while a run is pending joins it, one after a
 * quiet spell runs as soon as the interval since the last run has passed. `every` runs it on the interval
 * instead, for when no change can be watched.
 */
export class Throttle {
  private timer: NodeJS.Timeout | null = null;
  private periodic = false;
  private lastAt = -Infinity;

  constructor(
    private readonly intervalMs: number,
    private readonly work: () => void,
  ) {}

  schedule(): void {
    if (this.timer) return;
    this.timer = setTimeout(
      () => {
        this.timer = null;
        this.run();
      },
      Math.max(0, this.lastAt + this.intervalMs - monotonicMs()),
    );
  }

  every(): void {
    this.stop();
    this.periodic = true;
    this.timer = setInterval(() => this.run(), this.intervalMs);
  }

  stop(): void {
    if (this.timer) (this.periodic ? clearInterval : clearTimeout)(this.timer);
    this.timer = null;
    this.periodic = false;
  }

  private run(): void {
    this.lastAt = monotonicMs();
    this.work();
  }
}
