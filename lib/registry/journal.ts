import { closeSync, fstatSync, openSync, readSync, writeSync, constants } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { unwritable } from '../base/errors.js';
import { checkpoint } from '../base/checkpoint.js';
import { isAlive, selfIdentity } from '../proc/identity.js';
import { decodeName } from './names.js';
import { PRIVATE_FILE } from './private.js';

/**
 * The registry's journal of changes (docs/design.md, "The status cache"): lines that name each change
 * that could make a listing's cached view of a done run wrong, so that a listing proves thousands of
 * cached runs current by reading the journal's new lines instead of a stat per run.
 *
 * A writer appends `+` (a change is about to be published) before it publishes the change, and `-` (it
 * is published) after; both name the run's name and the writer (pid, start time, boot id, a sequence
 * number):
 *   "<+|-> <pid> <start time> <boot id> <seq> <name as in agents/> <FNV-1a of the rest, 8 hex>\n"
 * A listing reads the journal up to a mark before it reads any record. Of a change published after
 * that read, the `-` lies after the mark: the next listing reads the name again. Of a change whose `+`
 * lies before the mark and whose `-` does not (open), the listing reads the name and does not cache it
 * until its `-` comes, or its writer is gone (a writer killed between the two). Each line is one
 * write(2) with O_APPEND. A line that fails its checksum (a torn or damaged file) makes the listing
 * read every name; the `-` after a damaged `+` names the run again.
 *
 * What is journalled: a new run of an existing name (resume), every record write whose record was,
 * or becomes, `done` — the only runs a cache holds —, and each name subagent-prune takes runs from. The supervisor's progress and stall writes of its
 * live run are not: no cache holds a run that is not done, and what made it not done (a new run) was
 * journalled. A new or removed name changes agents/ itself, which the listing stats.
 */
export const JOURNAL = 'journal';

let seq = 0;

/** Runs `change` (the write that publishes it) between the two lines of a change of the run at `runDir` (<registry>/agents/<name>/<run>). */
export function journalled<T>(runDir: string, change: () => T): T {
  const nameDir = dirname(runDir);
  const path = join(dirname(dirname(nameDir)), JOURNAL);
  const self = selfIdentity();
  const id = `${self.pid} ${self.startTime} ${self.bootId} ${++seq} ${basename(nameDir)}`;
  // Without its `+` a change could hide behind a cache: it is not made.
  try {
    append(path, lineOf('+', id));
  } catch (err) {
    throw unwritable(dirname(path), err);
  }
  try {
    checkpoint('journal-begun');
    const done = change();
    checkpoint('journal-published');
    return done;
  } finally {
    try {
      append(path, lineOf('-', id));
    } catch {
      // The `+` stays open: listings read the name, uncached, until this process is gone.
    }
  }
}

function lineOf(op: '+' | '-', id: string): string {
  const body = `${op} ${id}`;
  return `${body} ${fnv(body)}\n`;
}

function append(path: string, line: string): void {
  const fd = openSync(path, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT, PRIVATE_FILE);
  try {
    const data = Buffer.from(line, 'latin1');
    if (writeSync(fd, data) !== data.length) throw new Error('short write to the journal');
  } finally {
    closeSync(fd);
  }
}

/** FNV-1a over the text's bytes (ASCII), as 8 hex digits: enough to tell a damaged line, with no zlib to load. */
function fnv(text: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return (h >>> 0).toString(16).padStart(8, '0');
}

/** A change begun and not seen ended: its writer (to ask whether it still lives) and its name. */
export interface OpenChange {
  /** "<pid> <start time> <boot id> <seq>" */
  writer: string;
  name: string;
}

/** Where a listing read the journal up to, to read on from there next time. */
export interface JournalMark {
  /** The journal's inode (0: there was none). */
  ino: number;
  /** The end of the last whole line read. */
  pos: number;
  /** The checksum of the (up to TAIL) bytes before `pos`: the same file, not one cut and written again. */
  tail: string;
}

export const NO_MARK: JournalMark = { ino: 0, pos: 0, tail: '' };

/** What the journal said since a mark. */
export interface JournalNews {
  mark: JournalMark;
  /** Names changed, or being changed, since the mark (the mark's open ones too). */
  touched: Set<string>;
  /** Changes still open (the mark's included), their writers alive or not known to be gone. */
  open: OpenChange[];
  /** Nothing is proven: the journal is not the one the mark was taken in (removed, replaced, cut), or a line is damaged. */
  lost: boolean;
}

const TAIL = 256;

/**
 * The journal from `since` on; `open`: the changes open at the mark. `alive` is asked only of the
 * changes still open after reading, which is rare (a change takes milliseconds).
 */
export function readJournal(registry: string, since: JournalMark, open: OpenChange[], alive: (writer: string) => boolean): JournalNews {
  const path = join(registry, JOURNAL);
  const opened = new Map(open.map((o) => [o.writer, o.name]));
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch {
    // No journal: nothing was ever journalled here, or it was removed (then the mark's file is gone).
    return settle({ mark: NO_MARK, touched: new Set(), open: [], lost: since.ino !== 0 }, opened, alive);
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) return settle({ mark: NO_MARK, touched: new Set(), open: [], lost: true }, opened, alive);
    const moved = since.ino !== 0 && (since.ino !== st.ino || since.pos > st.size);
    if (!moved && since.pos > 0) {
      const start = Math.max(0, since.pos - TAIL);
      const bytes = readFrom(fd, start, st.size);
      if (bytes.length >= since.pos - start && fnv(bytes.toString('latin1', 0, since.pos - start)) === since.tail)
        return settle(scan(bytes, since.pos - start, start, st.ino, opened), opened, alive);
    }
    // From the start: a journal new since the mark, or another file under the name, or this one cut and
    // written again (its bytes before the mark differ) — then nothing is proven.
    const news = scan(readFrom(fd, 0, st.size), 0, 0, st.ino, opened);
    if (since.pos > 0) news.lost = true;
    return settle(news, opened, alive);
  } finally {
    closeSync(fd);
  }
}

function readFrom(fd: number, start: number, end: number): Buffer {
  const data = Buffer.allocUnsafe(Math.max(0, end - start));
  let got = 0;
  while (got < data.length) {
    const n = readSync(fd, data, got, data.length - got, start + got);
    if (n === 0) break;
    got += n;
  }
  return data.subarray(0, got);
}

/** The whole lines of bytes[at…] (the file's bytes from `base` on): a line being appended is left for the next read. */
function scan(bytes: Buffer, at: number, base: number, ino: number, opened: Map<string, string>): JournalNews {
  const touched = new Set<string>();
  let lost = false;
  let end = at;
  for (;;) {
    const nl = bytes.indexOf(10, end);
    if (nl === -1) break;
    const line = parseLine(bytes.toString('latin1', end, nl));
    end = nl + 1;
    if (line === null) {
      lost = true;
      continue;
    }
    touched.add(line.name);
    if (line.op === '+') opened.set(line.writer, line.name);
    else opened.delete(line.writer);
  }
  // The bytes before the mark, as the next read takes them (bytes starts at most TAIL before `at`).
  const pos = base + end;
  return { mark: { ino, pos, tail: fnv(bytes.toString('latin1', Math.max(0, pos - TAIL) - base, end)) }, touched, open: [], lost };
}

function parseLine(line: string): { op: string; writer: string; name: string } | null {
  const sum = line.lastIndexOf(' ');
  if (sum === -1 || fnv(line.slice(0, sum)) !== line.slice(sum + 1)) return null;
  const parts = line.slice(0, sum).split(' ');
  if (parts.length !== 6 || (parts[0] !== '+' && parts[0] !== '-')) return null;
  const name = decodeName(parts[5]!);
  if (name === null) return null;
  return { op: parts[0], writer: `${parts[1]} ${parts[2]} ${parts[3]} ${parts[4]}`, name };
}

/** Every open change's name is touched; of them, those whose writer is gone are closed (it can change nothing any more). */
function settle(news: JournalNews, opened: Map<string, string>, alive: (writer: string) => boolean): JournalNews {
  for (const [writer, name] of opened) {
    news.touched.add(name);
    if (alive(writer)) news.open.push({ writer, name });
  }
  return news;
}

/**
 * Whether the writer of a change ("<pid> <start time> <boot id> <seq>") is alive, by its identity. A
 * writer of another boot is gone — or on another machine (a registry shared with job nodes), whose
 * processes cannot be asked: its change is closed all the same, as it ends with its `-` unless the
 * writer dies between publishing and appending it (docs/reliability.md, "Known limits").
 */
export function writerAlive(writer: string): boolean {
  const [pid, startTime, bootId] = writer.split(' ');
  return isAlive({ pid: Number(pid), startTime: startTime ?? '', bootId: bootId ?? '' });
}
