import { writeSync, writevSync } from 'node:fs';
import { SubagentError, ERROR_CODES } from '../errors.js';

/**
 * JSON text serialised earlier (cached views of runs), in pieces: jsonLine puts them in as they are,
 * which spares parsing and serialising them again. Bytes (Buffers) must hold no raw U+2028/U+2029 (the
 * status cache stores them escaped) and go out unchanged; strings are escaped like the rest of the line.
 * Anything else that serialises a RawJson gets the value.
 */
export class RawJson {
  constructor(readonly parts: ReadonlyArray<string | Buffer>) {}
  toJSON(): unknown {
    if (splicing === null) return JSON.parse(this.parts.map((p) => p.toString()).join(''));
    splicing.push(this);
    return MARK;
  }
}

/** Stands for one RawJson while jsonLine serialises; no data can hold it (NULs and a random part). */
const MARK = `\u0000raw-${Math.random().toString(36).slice(2)}\u0000`;
const QUOTED_MARK = JSON.stringify(MARK);
let splicing: RawJson[] | null = null;

/** JSON text where U+2028/U+2029 are escaped, so line-splitting readers (and JS eval) never break it. */
export function escapeSeparators(text: string): string {
  return text.indexOf('\u2028') === -1 && text.indexOf('\u2029') === -1 ? text : text.replace(/[\u2028\u2029]/g, (c) => (c === '\u2028' ? '\\u2028' : '\\u2029'));
}

/** The line's pieces, in order: strings (to escape) and bytes (already escaped). */
function pieces(value: unknown): Array<string | Buffer> {
  const raw: RawJson[] = [];
  splicing = raw;
  let text: string;
  try {
    text = JSON.stringify(value);
  } finally {
    splicing = null;
  }
  if (raw.length === 0) return [text];
  const parts = text.split(QUOTED_MARK);
  const out: Array<string | Buffer> = [];
  let pending = parts[0]!;
  for (let i = 0; i < raw.length; i++) {
    for (const p of raw[i]!.parts) {
      if (typeof p === 'string') pending += p;
      else {
        out.push(pending, p);
        pending = '';
      }
    }
    pending += parts[i + 1]!;
  }
  out.push(pending);
  return out;
}

/** One JSON line, U+2028/U+2029 escaped. */
export function jsonLine(value: unknown): string {
  let line = '';
  for (const p of pieces(value)) line += typeof p === 'string' ? escapeSeparators(p) : p.toString();
  return line + '\n';
}

/**
 * jsonLine as pieces of bytes, for writeStdout: cached views go out as the bytes they are, never
 * decoded and encoded again, nor copied into one buffer (a 0.7 MB listing would fault in ~170 fresh
 * pages for that copy, ~2 ms on the test VM).
 */
export function jsonLineBytes(value: unknown): Buffer[] {
  const ps = pieces(value);
  const bytes = ps.map((p) => (typeof p === 'string' ? Buffer.from(escapeSeparators(p)) : p));
  bytes.push(NEWLINE);
  return bytes;
}

const NEWLINE = Buffer.from('\n');

export function errorObject(err: unknown, registry?: string | null): { body: Record<string, unknown>; exitCode: number } {
  if (err instanceof SubagentError && (ERROR_CODES as readonly string[]).includes(err.code)) {
    const details = { ...err.details };
    if (registry && details.registry === undefined) details.registry = registry;
    return { body: { ok: false, code: err.code, error: err.message, ...err.extra, details }, exitCode: err.exitCode };
  }
  const e = err as Error;
  return {
    body: {
      ok: false,
      code: 'E_INTERNAL',
      error: `internal error: ${e?.message ?? String(err)}`,
      details: { ...(registry ? { registry } : {}), hint: 'this is a bug in subagents; please report it with the command line that caused it', stack: e?.stack?.split('\n').slice(0, 6) ?? [] },
    },
    exitCode: 1,
  };
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
  if (Array.isArray(text)) return writePieces(text);
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
  let rest = pieces.filter((p) => p.length > 0);
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
