import { writeSync, writevSync } from 'node:fs';
import { inRegistry, internalError } from '../base/errors.js';

/** The error line of a verb: what went wrong, its code and details, and the exit code that goes with it. */
export function errorObject(err: unknown, registry: string | null): { body: Record<string, unknown>; exitCode: number } {
  const e = registry ? inRegistry(err, registry) : internalError(err, null);
  return { body: { ok: false, code: e.code, error: e.message, ...e.extra, details: { ...e.details } }, exitCode: e.exitCode };
}

let stdoutClosed = false;
let useStream = false;

/** True when everything written to stdout has reached the kernel (nothing is queued in a stream). */
export function stdoutFlushed(): boolean {
  return !useStream || process.stdout.writableLength === 0;
}

/**
 * Writes to stdout. A plain write(2) on fd 1: creating process.stdout costs a verb milliseconds it
 * does not need. A non-blocking stdout (EAGAIN) falls back to the stream, which queues; a reader that
 * went away (EPIPE, `status | head -c1`) ends us quietly.
 */
export function writeStdout(text: string | Buffer | Buffer[]): void {
  if (stdoutClosed) return;
  if (Array.isArray(text)) {
    writePieces(text);
    return;
  }
  if (useStream) {
    process.stdout.write(text);
    return;
  }
  const data = typeof text === 'string' ? Buffer.from(text, 'utf8') : text;
  let off = 0;
  while (off < data.length) {
    try {
      off += writeSync(1, data, off, data.length - off);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'EPIPE') {
        stdoutClosed = true;
        return;
      }
      if (code !== 'EAGAIN') throw err;
      useStream = true;
      guardStdout();
      process.stdout.write(data.subarray(off));
      return;
    }
  }
}

/** Pieces written with writev(2), in as many calls as the kernel needs; anything unusual goes the plain way. */
function writePieces(pieces: Buffer[]): void {
  const rest = pieces.filter((p) => p.length > 0);
  while (rest.length > 0 && !useStream && !stdoutClosed) {
    let written: number;
    try {
      written = writevSync(1, rest);
    } catch {
      // EAGAIN, EPIPE, or a writev the fd refuses: the one-buffer path knows what each means.
      break;
    }
    while (rest.length > 0 && written >= rest[0]!.length) written -= rest.shift()!.length;
    if (written > 0) rest[0] = rest[0]!.subarray(written);
  }
  if (rest.length > 0) writeStdout(Buffer.concat(rest));
}

let guarded = false;

export function guardStdout(): void {
  if (guarded) return;
  guarded = true;
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE' || err.code === 'ERR_STREAM_DESTROYED') {
      stdoutClosed = true;
      return;
    }
    stdoutClosed = true;
  });
}
