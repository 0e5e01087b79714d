import { statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { monotonicMs, nowIso } from '../base/time.js';
import { Watch } from '../base/wait.js';
import { cpuUsedSince, treeCpu } from '../proc/cpu.js';
import type { RunRecord } from '../registry/record.js';
import { FILES, updateRecord } from '../registry/store.js';
import { childAtWork } from '../runs/stall.js';
import type { Log } from './log.js';

/**
 * Stalls (docs/stalls.md): the supervisor looks for signs of work every check — the event log
 * or stderr grew (a child's events arrive in the event log too), or the agent's process tree used CPU —
 * and flags the run `stalledSince` once it has seen none for the run's `stallAfterSec`; the next sign of
 * work clears the flag. With `stallAction: cancel` it then asks the supervisor's one stop path
 * (lib/supervisor/run.ts) to cancel the run, as subagent-cancel would. A check the disk fails (EIO on a
 * stat or a read of the registry) is logged and the next one tries again: the watch never ends the supervisor.
 *
 * CPU counts as work when the tree used at least CPU_SHARE of one CPU between two checks: an idle Node
 * CLI's timers cost far less, a tool that computes silently far more. The ps backend on Linux reads CPU
 * time in whole seconds, so there a second of CPU shows at once, less only when it adds up to one.
 */
const CPU_SHARE = 0.01;
/** A check every tenth of the stall time, between these bounds. */
const MIN_CHECK_MS = 250;
const MAX_CHECK_MS = 10_000;
/** While the run is flagged, the registry is searched for a child at work at most this often. */
const CHILD_RESCAN_MS = 1000;

export class StallWatch {
  private timer: NodeJS.Timeout | null = null;
  private watch: Watch | null = null;
  private readonly afterMs: number;
  private lastCheckMs = monotonicMs();
  private lastWorkMs = this.lastCheckMs;
  private lastWorkAt = nowIso();
  private cpu = new Map<number, number>();
  private sizes = '';
  private stalled = false;
  private written = '';
  /** When the registry was last searched for a child at work (only once the run shows no sign itself). */
  private lastChildScanMs = -Infinity;

  constructor(
    private readonly dir: string,
    private readonly record: RunRecord,
    private readonly agentPid: number,
    private readonly log: Log,
    /** Called once the run is found stalled, when its stall action is `cancel`. */
    private readonly cancel: () => void,
  ) {
    this.afterMs = (record.stallAfterSec ?? 0) * 1000;
  }

  /** Starts watching when the run asked for it (a stall time above 0). */
  start(): void {
    if (!(this.afterMs > 0)) return;
    this.timer = setInterval(() => this.check(), Math.min(MAX_CHECK_MS, Math.max(MIN_CHECK_MS, this.afterMs / 10)));
    // A stalled run that writes again is cleared at once, not at the next check (without a watch, the
    // checks alone see it).
    this.watch = new Watch(
      () => {
        if (this.stalled) this.check();
      },
      (file) => file === FILES.events || file === FILES.stderr,
    );
    this.watch.add(this.dir);
    this.check();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.watch?.close();
    this.watch = null;
  }

  private check(): void {
    try {
      this.look();
    } catch (err) {
      this.log(`stall check failed (the next one tries again): ${(err as Error).message}`);
    }
  }

  private look(): void {
    const now = monotonicMs();
    const elapsed = now - this.lastCheckMs;
    this.lastCheckMs = now;
    const sizes = `${sizeOf(join(this.dir, FILES.events))} ${sizeOf(join(this.dir, FILES.stderr))}`;
    const wrote = sizes !== this.sizes;
    this.sizes = sizes;
    let used = 0;
    try {
      const cpu = treeCpu(this.agentPid);
      used = cpuUsedSince(this.cpu, cpu);
      this.cpu = cpu;
    } catch (err) {
      this.log(`stall check: cannot read the CPU time of the agent's processes: ${(err as Error).message}`);
    }
    if (wrote || (used > 0 && used >= CPU_SHARE * elapsed) || this.childWorks(now)) {
      this.lastWorkMs = now;
      this.lastWorkAt = nowIso();
      if (this.stalled) this.log('working again: no longer stalled');
      this.stalled = false;
    } else if (!this.stalled && now - this.lastWorkMs >= this.afterMs) {
      this.stalled = true;
      this.log(`stalled: no sign of work since ${this.lastWorkAt}`);
      this.write();
      if (this.record.stallAction === 'cancel') this.cancel();
    }
    // Also what an earlier check could not write (a full disk): written once the disk takes it.
    this.write();
  }

  /**
   * A run this one started that works, as a sign of work: searched for once the run has shown no sign of
   * its own for its stall time, then at every check while it is flagged (at most once a second), so that
   * a child that starts clears the flag within a check, not a stall time later.
   */
  private childWorks(now: number): boolean {
    if (now - this.lastWorkMs < this.afterMs || now - this.lastChildScanMs < CHILD_RESCAN_MS) return false;
    this.lastChildScanMs = now;
    const child = childAtWork(dirname(dirname(dirname(this.dir))), this.record.name);
    if (child !== null && this.stalled) this.log(`run ${child}, started by this one, is at work`);
    return child !== null;
  }

  /** The flag and the last sign of work into the record, when either changed. */
  private write(): void {
    const stalledSince = this.stalled ? this.lastWorkAt : null;
    const key = `${stalledSince} ${this.lastWorkAt}`;
    if (key === this.written) return;
    try {
      updateRecord(this.dir, (r) => (r.status === 'done' ? null : { ...r, stalledSince, lastWorkAt: this.lastWorkAt }));
      this.written = key;
    } catch (err) {
      // Not remembered as written: the next check writes it again.
      this.log(`stall update failed: ${(err as Error).message}`);
    }
  }
}

/** What a run the supervisor cancelled for a stall records as its end, over the plain cancel's. */
export function stallEnd(r: RunRecord): Partial<Pick<RunRecord, 'error' | 'endReason'>> {
  return r.cancel?.reason === 'stalled' ? { error: `cancelled: no sign of work for ${r.stallAfterSec} s (--stall-action cancel)`, endReason: 'stalled' } : {};
}

function sizeOf(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return -1;
  }
}
