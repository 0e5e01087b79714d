/**
 * A real pseudo-terminal for the view tests: a private tmux server (its socket lives in the test's own
 * sandbox directory, so no other tmux session is ever touched), one session per command, captured with
 * `capture-pane`. Each command runs from a small script that exports exactly the environment the test
 * gives it and, once the command has exited, writes its exit status to a "done" file.
 *
 * Note: tmux moves the screen into its scrollback when a program erases the display from the top-left
 * corner (ED at 0,0), so an in-place redraw from the first row leaves copies of earlier frames in the
 * history: judge redraws by the visible screen and the cursor, not by `-S -`.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { LONG, until } from './wait.js';

export const HAVE_TMUX = spawnSync('tmux', ['-V'], { encoding: 'utf8' }).status === 0;

function q(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

export interface PaneRun {
  session: string;
  doneFile: string;
}

export class Tmux {
  readonly socket: string;
  private readonly conf: string;
  private n = 0;
  private started = false;

  constructor(
    private readonly dir: string,
    private readonly env: NodeJS.ProcessEnv,
  ) {
    this.socket = join(dir, 'tmux.sock');
    this.conf = join(dir, 'tmux.conf');
    // No status bar (the pane is the whole window); a dead pane stays to be captured.
    writeFileSync(this.conf, 'set -g remain-on-exit on\nset -g status off\nset -g history-limit 10000\n');
  }

  private tmux(args: string[]): { status: number | null; stdout: string; stderr: string } {
    const env: NodeJS.ProcessEnv = { ...this.env, LANG: 'C.UTF-8', LC_ALL: 'C.UTF-8' };
    delete env.TMUX;
    delete env.TMUX_PANE;
    const r = spawnSync('tmux', ['-u', '-S', this.socket, '-f', this.conf, ...args], { env, encoding: 'utf8', timeout: 30_000 });
    if (r.error) throw r.error;
    return { status: r.status, stdout: r.stdout, stderr: r.stderr };
  }

  /**
   * Runs `argv` in a new cols×rows terminal with `env` (exported as given; keys set to undefined are
   * unset). Returns at once; `waitDone` waits for the command's exit status.
   */
  run(argv: string[], o: { cols: number; rows: number; env: Record<string, string | undefined>; cwd: string }): PaneRun {
    const id = `p${++this.n}`;
    const script = join(this.dir, `${id}.sh`);
    const doneFile = join(this.dir, `${id}.done`);
    const lines = ['#!/bin/sh', `cd ${q(o.cwd)} || exit 99`];
    for (const [k, v] of Object.entries(o.env)) lines.push(v === undefined ? `unset ${k}` : `export ${k}=${q(v)}`);
    lines.push(argv.map(q).join(' '));
    lines.push(`echo $? > ${q(doneFile + '.tmp')} && mv ${q(doneFile + '.tmp')} ${q(doneFile)}`);
    // Keep the pane alive (and its screen as the command left it) until the server is killed: a dead
    // pane gets tmux's "Pane is dead" note, which can scroll the top row away.
    lines.push('exec sleep 86400');
    writeFileSync(script, lines.join('\n') + '\n', { mode: 0o755 });
    const r = this.tmux(['new-session', '-d', '-s', id, '-x', String(o.cols), '-y', String(o.rows), `sh ${q(script)}`]);
    if (r.status !== 0) throw new Error(`tmux new-session failed: ${r.stderr}`);
    this.started = true;
    return { session: id, doneFile };
  }

  /** Waits for the command to exit; returns its exit status. */
  async waitDone(p: PaneRun, timeoutMs = LONG): Promise<number> {
    await until(`the command in tmux session ${p.session} exits`, () => existsSync(p.doneFile), timeoutMs, 25);
    return Number(readFileSync(p.doneFile, 'utf8').trim());
  }

  /**
   * The pane's text, one string per terminal row (trailing blank rows and tmux's own "Pane is dead"
   * note dropped). `escapes`: keep colour/attribute escapes (-e); `joined`: wrapped rows joined into
   * the line the program wrote (-J); `history`: the scrollback too (-S -).
   */
  capture(p: PaneRun, o: { escapes?: boolean; joined?: boolean; history?: boolean } = {}): string[] {
    const args = ['capture-pane', '-p', '-t', p.session];
    if (o.escapes) args.push('-e');
    if (o.joined) args.push('-J');
    if (o.history) args.push('-S', '-');
    const r = this.tmux(args);
    if (r.status !== 0) throw new Error(`tmux capture-pane failed: ${r.stderr}`);
    const rows = r.stdout.split('\n');
    const dead = rows.findIndex((l) => /^Pane is dead/.test(l.replace(/\x1b\[[0-9;]*m/g, '')));
    const kept = dead >= 0 ? rows.slice(0, dead) : rows;
    while (kept.length && kept[kept.length - 1]!.replace(/\x1b\[[0-9;]*m/g, '').trim() === '') kept.pop();
    return kept;
  }

  /**
   * Types into the pane: `keys` as tmux names them (`Enter`, `Escape`, `Up`, `j`…), or with `literal`
   * the text itself, character by character.
   */
  send(p: PaneRun, keys: string[], o: { literal?: boolean } = {}): void {
    const r = this.tmux(['send-keys', '-t', p.session, ...(o.literal ? ['-l'] : []), ...keys]);
    if (r.status !== 0) throw new Error(`tmux send-keys failed: ${r.stderr}`);
  }

  /** Resizes the pane's window to cols×rows, as a person resizing the terminal. */
  resize(p: PaneRun, cols: number, rows: number): void {
    const r = this.tmux(['resize-window', '-t', p.session, '-x', String(cols), '-y', String(rows)]);
    if (r.status !== 0) throw new Error(`tmux resize-window failed: ${r.stderr}`);
  }

  /** `#{cursor_y}` and friends of the pane. */
  display(p: PaneRun, format: string): string {
    const r = this.tmux(['display-message', '-p', '-t', p.session, format]);
    if (r.status !== 0) throw new Error(`tmux display-message failed: ${r.stderr}`);
    return r.stdout.trim();
  }

  /** Ends this test's own tmux server (by its private socket). */
  close(): void {
    if (!this.started) return;
    this.tmux(['kill-server']);
    this.started = false;
  }
}

/** Colour and attribute escapes removed. */
export function plain(s: string): string {
  return s.replace(/\x1b\[[0-9;]*m/g, '');
}
