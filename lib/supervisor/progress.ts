import { join } from 'node:path';
import type { AgentRun } from '../agents/types.js';
import { Throttle, Watch } from '../base/wait.js';
import type { LineFollower } from '../base/lines.js';
import { FILES, updateRecord } from '../registry/store.js';
import { skippedLines } from '../runs/transcript.js';
import type { Log } from './log.js';
import type { StoreUsageRead } from './store-usage.js';

const PROGRESS_INTERVAL_MS = 250;

/**
 * Copies what the stream said into the record, a few times a second at most, only when it changed.
 * inotify says when the log grew; a tick then follows at most PROGRESS_INTERVAL_MS after the last, so
 * an idle run does not wake at all. Without inotify it polls on that interval. An adapter's store usage
 * (lib/supervisor/store-usage.ts) is read at each tick, and every STORE_POLL_MS besides. A tick the disk
 * fails (a read of the log, a record the disk does not take) is logged; what it could not write is
 * written at a later tick, and the end writes it all (lib/supervisor/run.ts).
 */
export class Progress {
  private readonly ticks = new Throttle(PROGRESS_INTERVAL_MS, () => this.tick());
  private storePoll: NodeJS.Timeout | null = null;
  private watch: Watch | null = null;
  private lastWritten = '';
  private unwritten = false;

  constructor(
    private readonly dir: string,
    private readonly run: AgentRun,
    private readonly follower: LineFollower,
    private readonly onRead: () => void,
    private readonly fromStore: StoreUsageRead | null,
    private readonly log: Log,
    private readonly storePollMs: number,
  ) {}

  start(): void {
    if (this.fromStore) this.storePoll = setInterval(() => this.ticks.schedule(), this.storePollMs);
    this.watch = new Watch(
      () => this.ticks.schedule(),
      undefined,
      () => this.poll(),
    );
    if (!this.watch.add(join(this.dir, FILES.events))) {
      this.poll();
      return;
    }
    // Output written before the watcher started must be read too.
    this.ticks.schedule();
  }

  stop(): void {
    this.ticks.stop();
    if (this.storePoll) clearInterval(this.storePoll);
    this.storePoll = null;
    this.watch?.close();
    this.watch = null;
  }

  private poll(): void {
    this.stop();
    // Each tick reads the store too.
    this.ticks.every();
  }

  private tick(): void {
    try {
      this.read();
    } catch (err) {
      this.log(`progress update failed: ${(err as Error).message}`);
    }
  }

  private read(): void {
    const streamed = this.follower.poll() > 0;
    const stored = this.fromStore?.(this.run.state) ?? false;
    if (!streamed && !stored && !this.unwritten) return;
    if (streamed || stored) this.onRead();
    const s = this.run.state;
    const skipped = skippedLines(this.run, this.follower);
    const snapshot = JSON.stringify([s.sessionId, s.toolUses, s.usage, s.children, skipped, s.limitWarning]);
    const activity = s.lastActivityAt;
    if (snapshot === this.lastWritten && !activity) return;
    // Until the write lands, the next tick writes again even when nothing new was read.
    this.unwritten = true;
    updateRecord(this.dir, (r) => {
      if (r.status === 'done') return null;
      return {
        ...r,
        sessionId: r.sessionId ?? s.sessionId,
        toolUses: s.toolUses,
        usage: s.usage,
        children: s.children,
        skippedLines: skipped,
        limitWarning: s.limitWarning,
        lastActivityAt: activity ?? r.lastActivityAt,
        eventBytes: this.follower.position,
      };
    });
    this.lastWritten = snapshot;
    this.unwritten = false;
  }
}
