import { formatSize } from '../base/size.js';
import { treeRss } from '../proc/memory.js';
import type { MemoryUse, RunRecord } from '../registry/record.js';
import { updateRecord } from '../registry/store.js';
import type { Crossed } from './caps.js';
import type { Log } from './log.js';

/**
 * The memory of a run (docs/memory.md): the supervisor samples the resident memory of the agent's
 * process tree (RSS summed over the agent and its descendants, one look at every process per sample)
 * every SAMPLE_MS, and every FAST_SAMPLE_MS once the run holds three quarters of its --max-memory. The
 * record's `memory` is written when it moved by a tenth or more since the last write (an fsync per
 * sample would cost more than the sample); the end writes the last. Past --max-memory, it asks the
 * supervisor's one stop path to stop the run (`failed`, reason `max-memory`). A sample that fails (the
 * process table unreadable, a full disk) is logged and the next one tries again.
 */
export const SAMPLE_MS = 5000;
const FAST_SAMPLE_MS = 1000;
/** A change of memory the record is rewritten for: a tenth. */
const WRITE_CHANGE = 0.1;

export class MemoryWatch {
  private timer: NodeJS.Timeout | null = null;
  private last: MemoryUse | null = null;
  private written: MemoryUse | null = null;
  private stopped = false;
  private failures = 0;

  constructor(
    private readonly dir: string,
    private readonly record: RunRecord,
    private readonly agentPid: number,
    private readonly log: Log,
    /** The supervisor's one stop path, called once, when the run passes its --max-memory. */
    private readonly stop: (crossed: Crossed) => void,
  ) {}

  /** What was last measured (null: nothing yet). */
  get use(): MemoryUse | null {
    return this.last;
  }

  start(): void {
    this.sample();
  }

  close(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  private sample(): void {
    let rss: number | null = null;
    try {
      rss = treeRss(this.agentPid);
      this.failures = 0;
    } catch (err) {
      // Said once per run of failures: a process table that stays unreadable must not fill the log.
      if (this.failures++ === 0) this.log(`memory sample failed (the next one tries again): ${(err as Error).message}`);
    }
    if (rss !== null) this.took(rss);
    const cap = this.record.caps.maxMemoryBytes;
    const near = cap !== null && this.last !== null && this.last.rssBytes >= cap * 0.75;
    this.timer = setTimeout(() => this.sample(), near ? FAST_SAMPLE_MS : SAMPLE_MS);
    this.timer.unref();
  }

  private took(rssBytes: number): void {
    this.last = { rssBytes, peakRssBytes: Math.max(rssBytes, this.last?.peakRssBytes ?? 0) };
    const cap = this.record.caps.maxMemoryBytes;
    if (cap !== null && rssBytes > cap && !this.stopped) {
      this.stopped = true;
      this.stop({ reason: 'max-memory', message: `stopped at --max-memory ${formatSize(cap)}: the run's processes held ${formatSize(rssBytes)}` });
    }
    if (this.written === null || moved(this.written.rssBytes, rssBytes) || moved(this.written.peakRssBytes, this.last.peakRssBytes)) this.write();
  }

  private write(): void {
    const use = this.last;
    try {
      updateRecord(this.dir, (r) => (r.status === 'done' ? null : { ...r, memory: use }));
      this.written = use;
    } catch (err) {
      // Not remembered as written: the next sample writes it again.
      this.log(`memory update failed: ${(err as Error).message}`);
    }
  }
}

function moved(before: number, now: number): boolean {
  return Math.abs(now - before) > before * WRITE_CHANGE;
}
