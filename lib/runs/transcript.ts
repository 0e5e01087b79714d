import { closeSync, fstatSync, readSync } from 'node:fs';
import { isErrno } from '../base/errors.js';
import { openRegular, readRegular } from '../base/regular.js';
import { join } from 'node:path';
import type { AgentAdapter, AgentRun, Message, RunOptions } from '../agents/types.js';
import { LineFollower } from '../base/lines.js';
import type { RunRecord } from '../registry/record.js';
import { FILES } from '../registry/store.js';

/**
 * The normalised transcript of a run, read from its captured files: the prompt (role user), then what
 * the adapter makes of the event log. Items are yielded as they are read, so a 50 MB log is never held
 * whole. For the `shell` CLI the output is one assistant message, yielded line by line (`line` set).
 */
export interface TranscriptItem {
  run: number;
  index: number;
  role: Message['role'];
  text: string;
  tool?: Message['tool'];
  line?: number;
  /** Set when the message belongs to a child sub-agent whose lines the parent's stream carries. */
  childId?: string;
}

/**
 * Opens a run of `record` for reading its event log: with the adapter's reader of its stream, or — for a
 * person's turn in the CLI's own session (subagent-attach) — of its store's format.
 */
export function openRunOf(adapter: AgentAdapter, record: Pick<RunRecord, 'attached'>, run: RunOptions = {}): AgentRun {
  return record.attached && adapter.interactive ? adapter.interactive.open(run) : adapter.open(run);
}

/** Yields the run's transcript; returns how many lines of its event log were skipped (see skippedLines). */
export function forEachItem(dir: string, record: RunRecord, adapter: AgentAdapter, visit: (item: TranscriptItem) => void): number {
  const run = record.run;
  const prompt = readRegular(join(dir, FILES.prompt)).toString('utf8');
  if (adapter.stream === 'text') {
    prompt.split('\n').forEach((text, line) => {
      visit({ run, index: 0, role: 'user', text, line: line + 1 });
    });
    let line = 0;
    const follower = new LineFollower(join(dir, FILES.events), (text) => visit({ run, index: 1, role: 'assistant', text, line: ++line }), 0, logEnd(record));
    follower.flush();
    return follower.cutLines;
  }
  // A person's turn (subagent-attach) has no prompt of ours: its prompts are the person's, in the log.
  if (!record.attached) visit({ run, index: 0, role: 'user', text: prompt });
  let index = 0;
  const opened = openRunOf(adapter, record, {
    onMessage: (m) =>
      visit({ run, index: ++index, role: m.role, text: m.text, ...(m.tool ? { tool: m.tool } : {}), ...(m.childId ? { childId: m.childId } : {}) }),
  });
  return parseLog(dir, opened, record);
}

/**
 * Where a run's event log ends for its readers: for a done run, where it stood when the end was recorded
 * (what a process left behind appended later is not the run's: its answer never changes); else its end.
 */
export function logEnd(record: RunRecord): number {
  return record.status === 'done' && typeof record.eventBytesAtEnd === 'number' ? record.eventBytesAtEnd : Infinity;
}

/**
 * Feeds a run's whole event log to the run its adapter opened, streamed. Returns the lines skipped: those
 * the adapter could not read as events (noise, a torn last line) and those dropped for being over-long.
 */
export function parseLog(dir: string, run: AgentRun, record: RunRecord): number {
  const follower = new LineFollower(join(dir, FILES.events), (line) => run.line(line), 0, logEnd(record));
  follower.flush();
  run.end();
  return skippedLines(run, follower);
}

/** The run's `skippedLines` as far as `follower` has read. */
export function skippedLines(run: AgentRun, follower: LineFollower): number {
  return run.state.skippedLines + follower.cutLines;
}

export interface Answer {
  /** The last thing the agent said (for shell: its output, decoded as UTF-8); null when it has said nothing (yet). */
  text: string | null;
  /** The same as bytes: for shell its output exactly as written (invalid UTF-8 kept), else the UTF-8 of `text`. */
  raw: Buffer | null;
  truncated: boolean;
  bytes: number;
  /** Event-log lines skipped while reading the answer (0 for shell, whose answer is its raw output). */
  skippedLines: number;
}

export const RESULT_MAX_BYTES = 1024 * 1024;

/** The run's final answer: the adapter's last assistant text, or for `shell` the tail of its stdout. */
export function lastAnswer(dir: string, adapter: AgentAdapter, record: RunRecord): Answer {
  if (adapter.stream === 'text') {
    const out = tail(join(dir, FILES.events), RESULT_MAX_BYTES, logEnd(record));
    return out.bytes === 0 ? { ...out, text: null, raw: null } : out;
  }
  const run = openRunOf(adapter, record);
  const skipped = parseLog(dir, run, record);
  const text = run.state.lastAssistantText;
  return { text, raw: text === null ? null : Buffer.from(text), truncated: false, bytes: text === null ? 0 : Buffer.byteLength(text), skippedLines: skipped };
}

function tail(path: string, max: number, end: number): Answer {
  let fd: number;
  try {
    fd = openRegular(path);
  } catch (err) {
    if (!isErrno(err, 'ENOENT')) throw err;
    return { text: '', raw: null, truncated: false, bytes: 0, skippedLines: 0 };
  }
  try {
    const size = Math.min(fstatSync(fd).size, end);
    const start = Math.max(0, size - max);
    const buf = Buffer.alloc(size - start);
    let got = 0;
    while (got < buf.length) {
      const n = readSync(fd, buf, got, buf.length - got, start + got);
      if (n <= 0) break;
      got += n;
    }
    let body = buf.subarray(0, got);
    if (start > 0) {
      // Start at a line boundary so the cut never splits a character or a line.
      const nl = body.indexOf(10);
      if (nl !== -1 && nl < body.length - 1) body = body.subarray(nl + 1);
    }
    return { text: body.toString('utf8'), raw: body, truncated: start > 0, bytes: size, skippedLines: 0 };
  } finally {
    closeSync(fd);
  }
}

/** The first line of a run's prompt, at most 120 characters: how a run is named in lists. */
export function promptHead(dir: string): string {
  let fd: number;
  try {
    fd = openRegular(join(dir, FILES.prompt));
  } catch {
    return '';
  }
  try {
    const buf = Buffer.alloc(512);
    const n = readSync(fd, buf, 0, buf.length, 0);
    const first =
      buf
        .subarray(0, n)
        .toString('utf8')
        .replace(/\uFFFD+$/, '')
        .split('\n')
        .find((l) => l.trim() !== '') ?? '';
    return first.length > 120 ? first.slice(0, 119) + '…' : first;
  } finally {
    closeSync(fd);
  }
}
