import { closeSync, readSync, statSync } from 'node:fs';
import { isErrno } from './errors.js';
import { openRegular } from './regular.js';

/**
 * Reads a growing file from an offset and hands out complete lines; a torn last line waits for the
 * rest. `flush()` hands out the remainder at the end of a run.
 */
export class LineFollower {
  private offset: number;
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private readonly chunk = Buffer.allocUnsafe(256 * 1024);
  /** Lines longer than this (in bytes, without the newline) are dropped whole and counted in `cutLines`, so a runaway line cannot exhaust memory. */
  static readonly MAX_LINE = 16 * 1024 * 1024;
  cutLines = 0;
  /** Inside a line that was cut: the rest of it, up to its newline, is dropped too. */
  private discarding = false;

  /**
   * Where reading stops (a byte offset; Infinity: the file's end as it grows). A done run's log is read up
   * to where it stood when the end was recorded (docs/states.md), whatever was appended after.
   */
  limit: number;

  constructor(
    private readonly path: string,
    private readonly onLine: (line: string) => void,
    offset = 0,
    limit = Infinity,
  ) {
    this.offset = offset;
    this.limit = limit;
  }

  get position(): number {
    return this.offset;
  }

  /** Reads whatever is new; returns the number of bytes read. */
  poll(): number {
    let fd: number;
    try {
      fd = openRegular(this.path);
    } catch (err) {
      if (isErrno(err, 'ENOENT')) return 0;
      throw err;
    }
    let total = 0;
    try {
      for (;;) {
        const want = Math.min(this.chunk.length, this.limit - this.offset);
        if (want <= 0) break;
        const n = readSync(fd, this.chunk, 0, want, this.offset);
        if (n <= 0) break;
        this.offset += n;
        total += n;
        this.take(this.chunk.subarray(0, n));
      }
    } finally {
      closeSync(fd);
    }
    return total;
  }

  private take(data: Buffer): void {
    let start = 0;
    for (;;) {
      const nl = data.indexOf(10, start);
      if (nl === -1) break;
      const piece = data.subarray(start, nl);
      if (this.discarding) this.discarding = false;
      else if (this.pendingBytes + piece.length > LineFollower.MAX_LINE) this.cut();
      else if (this.pendingBytes) {
        this.pending.push(piece);
        this.emit(Buffer.concat(this.pending));
        this.pending = [];
        this.pendingBytes = 0;
      } else this.emit(piece);
      start = nl + 1;
    }
    if (start < data.length && !this.discarding) {
      const rest = data.subarray(start);
      if (this.pendingBytes + rest.length > LineFollower.MAX_LINE) {
        this.cut();
        this.discarding = true;
      } else {
        this.pending.push(Buffer.from(rest));
        this.pendingBytes += rest.length;
      }
    }
  }

  /** The line being read is longer than MAX_LINE: what was kept of it goes, and it is counted. */
  private cut(): void {
    this.cutLines++;
    this.pending = [];
    this.pendingBytes = 0;
  }

  private emit(line: Buffer): void {
    const text = line.toString('utf8');
    this.onLine(text.endsWith('\r') ? text.slice(0, -1) : text);
  }

  flush(): void {
    this.poll();
    if (this.pendingBytes) {
      this.emit(Buffer.concat(this.pending));
      this.pending = [];
      this.pendingBytes = 0;
    }
  }
}

/** The size of a file, 0 when it is not there (yet): where a `LineFollower` of only what is appended from now on starts. */
export function fileSize(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}
