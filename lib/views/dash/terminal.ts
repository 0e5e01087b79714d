import { decodeKeys, type Key } from './keys.js';

/**
 * The dashboard's terminal: raw keys in, a screen of rows out. It takes the alternate screen (the
 * person's scrollback is left as it was, and given back on leave), hides the cursor, and draws a frame
 * by rewriting only the rows that changed since the last one — never a full redraw per event, which
 * flickers over SSH — except after a resize, when everything is drawn again.
 */
export interface TerminalIo {
  input: NodeJS.ReadStream;
  output: NodeJS.WriteStream;
}

export interface Size {
  cols: number;
  rows: number;
}

export class Terminal {
  private previous: string[] = [];
  private drawnSize: Size | null = null;
  private entered = false;
  private readonly onData = (chunk: Buffer | string) => this.keys?.(decodeKeys(String(chunk)));
  private keys: ((keys: Key[]) => void) | null = null;

  constructor(private readonly io: TerminalIo) {}

  /** The terminal's size now (a pty without one, as in some CI terminals: 80×24). */
  get size(): Size {
    return { cols: this.io.output.columns || 80, rows: this.io.output.rows || 24 };
  }

  /** Raw mode, the alternate screen, no cursor; `onKeys` gets each read's keys, `onResize` each resize. */
  enter(onKeys: (keys: Key[]) => void, onResize: () => void): void {
    this.keys = onKeys;
    this.io.input.setRawMode?.(true);
    this.io.input.setEncoding('utf8');
    this.io.input.on('data', this.onData);
    this.io.input.resume();
    this.io.output.on('resize', onResize);
    this.io.output.write('\x1b[?1049h\x1b[?25l\x1b[H\x1b[2J');
    this.entered = true;
  }

  /** Gives the terminal back as it was found: idempotent, and safe from an exit handler. */
  leave(): void {
    if (!this.entered) return;
    this.entered = false;
    this.io.input.off('data', this.onData);
    this.io.input.setRawMode?.(false);
    this.io.input.pause();
    this.io.output.write('\x1b[0m\x1b[?25h\x1b[?1049l');
  }

  /**
   * Draws `lines` (each already fitted to the width; escapes for colour allowed) as the screen: the rows
   * that differ from the last frame are rewritten, the rest left alone; rows past the end are cleared.
   */
  draw(lines: string[]): void {
    const size = this.size;
    const resized = this.drawnSize === null || this.drawnSize.cols !== size.cols || this.drawnSize.rows !== size.rows;
    if (resized) this.previous = [];
    let out = resized ? '\x1b[H\x1b[2J' : '';
    const n = Math.min(size.rows, Math.max(lines.length, this.previous.length));
    for (let i = 0; i < n; i++) {
      const line = i < size.rows ? (lines[i] ?? '') : '';
      if (!resized && line === (this.previous[i] ?? '')) continue;
      out += `\x1b[${i + 1};1H\x1b[0m${line}\x1b[0m\x1b[K`;
    }
    this.previous = lines.slice(0, size.rows);
    this.drawnSize = size;
    if (out) this.io.output.write(out);
  }
}
