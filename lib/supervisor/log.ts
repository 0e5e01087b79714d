import { writeSync } from 'node:fs';
import { nowIso } from '../base/time.js';

/**
 * The supervisor's diagnostics, into its stderr (the run's supervisor.log). A line the disk does not
 * take (ENOSPC, EIO, a read-only remount) is dropped and counted, never thrown: a log write must not end
 * the run's only owner. The count is said in the next line that lands.
 */
export class SupervisorLog {
  /** Lines dropped since the last one that landed. */
  private dropped = 0;

  constructor(private readonly fd = 2) {}

  readonly write = (message: string): void => {
    const lost = this.dropped ? ` (${this.dropped} earlier line${this.dropped === 1 ? '' : 's'} lost: the log could not be written)` : '';
    try {
      writeSync(this.fd, `${nowIso()} supervisor ${process.pid}: ${message}${lost}\n`);
      this.dropped = 0;
    } catch {
      this.dropped++;
    }
  };
}

/** How the supervisor's parts log: one line, no newline. */
export type Log = (message: string) => void;
