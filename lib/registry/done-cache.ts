import { renameSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempName } from './durable.js';
import { compareNames, listNames } from './store.js';
import { statKey, type Key } from './stat-key.js';
import { RECORD_FORMAT } from './record.js';
import { escapeSeparators } from '../base/json-line.js';
import { SUM_DIGITS, readSummed, sumOf } from './checksum.js';
import { PRIVATE_FILE } from './private.js';
import { NO_MARK, readJournal, writerAlive, type JournalMark, type JournalNews, type OpenChange } from './journal.js';
import { bootId } from '../proc/identity.js';

/**
 * The cache of finished runs behind the `status` listing (docs/design.md, "The status cache"). A run
 * whose latest record is `done` never changes again on its own, and every change subagents makes to
 * one is named in the registry's journal (lib/registry/journal.ts): so a cached view is current while
 * the journal names no change of its name since the cache was written — proven for every run at once
 * by reading the journal's new lines, with no stat per run. The names themselves are the cache's too
 * while agents/ keeps the inode, size and times it had when they were read (a name appears or goes by
 * a rename in agents/, which moves its mtime and ctime).
 *
 * Strictly a cache: a missing, unreadable, foreign or corrupt file is an empty cache, and deleting it
 * loses nothing. It is replaced whole by rename (not fsynced: losing it costs one slower listing), so
 * concurrent listings each read one complete file; the last writer wins, and each proved what it wrote
 * (the journal mark it wrote was read before any record it cached). A file of another boot is no cache:
 * the journal is not fsynced, so a crash of the machine may have lost its last lines.
 *
 * The file is laid out so that a listing does as little as it can per name (numbers in the platform's
 * byte order, which the header names):
 *   the header line: VERSION and the checksum of everything after the line (lib/registry/checksum.ts),
 *     as 16 hex digits
 *   "<names> <entries> <bytes of the names> <bytes of the open changes>\n"
 *   "<boot id> <agents/ inode> <size> <ctime ms> <mtime ms> <settled 0|1> <journal inode> <mark> <tail>\n"
 *   the names of agents/ (all of them, cached or not), each ended by "\n", in name order
 *   the journal's open changes at the mark, each "<writer>\t<name>\n"
 *   zero bytes up to a multiple of 8 from the start of the file
 *   the entries, 7 uint32 each, in name order: the index of its name, run N, queue ticket (0/1), and
 *     where its view and its brief view start and end in the views
 *   the views: each the exact JSON `status` prints for the run (U+2028/U+2029 escaped), in name order,
 *     each followed by ","; then the brief views (`status --brief`), the same way
 * So opening the cache parses nothing per entry, a listing finds each listed name by comparing names in
 * place (names are ASCII, sorted the same way as the listing), and serves consecutive names as one
 * stretch of the views: with every run current, its whole `agents` array is one stretch of the file's
 * bytes, printed without decoding, parsing or even splitting it. Names hold no newline.
 */
const FILE = 'status-cache';
const ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1 ? 'LE' : 'BE';
/** Bump when what an entry holds, or how a view is rendered, changes: older files are then ignored. */
const VERSION = `subagents status cache 15 record format ${RECORD_FORMAT} ${ENDIAN} sum64 `;
const HEADER_BYTES = VERSION.length + SUM_DIGITS + 1;
/**
 * Only what is older than this (before the cache was opened) is kept: a record (a safety margin for
 * changes made outside subagents) and agents/'s own key. A change within the same clock tick as the
 * stat that keyed agents/ could leave its size and times as they were; a change after that stat is
 * stamped later than the start of this process, so it can never match a key this much older (1 s
 * covers the coarsest timestamps of old filesystems).
 */
const SETTLED_MS = 2000;
/** An entry's uint32 fields, in order. */
const NAME = 0;
const RUN = 1;
const TICKET = 2;
const VIEW_FROM = 3;
const VIEW_TO = 4;
const BRIEF_FROM = 5;
const BRIEF_TO = 6;
const ENTRY = 7;

/** Done runs of consecutive names served from the cache: the first name, and their views. */
export interface CachedView {
  name: string;
  /** The views: JSON bytes views[start, end), U+2028/U+2029 escaped, joined by ",". Views of the same file follow each other. */
  views: Buffer;
  start: number;
  end: number;
  /** Whether one of the runs holds a queue ticket. */
  queueTicket: boolean;
  /** The entry of the last name. */
  last: number;
}

/** A fresh read's record's ctime, taken after the read (the cache keeps only settled records). */
export interface Stamp {
  ctimeMs: number;
}

const NL = 10;
const LOOKED = 1;
const KEPT = 2;

interface Entry {
  name: string;
  run: number;
  ticket: boolean;
  view: Uint8Array;
  brief: Uint8Array;
}

/** The two views of a done run: the entry `status` prints, and what `status --brief` prints of it. */
export interface Views {
  full: string;
  brief: string;
}

/** What a cache file holds besides its entries. */
interface Saved {
  boot: string;
  agents: Key | null;
  settled: boolean;
  mark: JournalMark;
  open: OpenChange[];
}

export class DoneCache {
  private readonly path: string;
  private readonly registry: string;
  private count = 0;
  private entries: Uint32Array = new Uint32Array(0);
  /** The names of agents/ when the file was written (entry i's name is names[entries[5i]]). */
  private names: string[] = [];
  private views: Buffer = Buffer.alloc(0);
  private saved: Saved | null = null;
  /** Per entry: 0 not looked up, LOOKED, or KEPT (looked up and found current). */
  private state = new Uint8Array(0);
  /** How many entries are KEPT: when all are, save() need not look at each. */
  private kept = 0;
  /** Where the next lookup starts searching: listings look names up in order. */
  private cursor = 0;
  /** New entries, by name. */
  private readonly learnt = new Map<string, Entry>();
  private readonly startedAt = Date.now();
  private readonly boot: string;
  /** agents/'s key, taken before its names are read. */
  private readonly agents: Key | null;
  /** The names this listing read from agents/ (null: the file's were proven). */
  private readNames: string[] | null = null;
  private readonly news: JournalNews;
  /** Names with a change open: read, and not kept. */
  private readonly busy: Set<string>;

  /** `all`: every name of the registry will be looked up, so entries not looked up are gone. `brief`: lookups serve the brief views. */
  constructor(
    registry: string,
    private readonly all: boolean,
    private readonly brief = false,
  ) {
    this.registry = registry;
    this.path = join(registry, FILE);
    this.boot = bootId();
    // agents/ first, the names after (in names()); the journal before any record.
    this.agents = agentsKey(registry);
    const d = load(this.path);
    if (d !== null) this.parse(d);
    const saved = this.saved;
    this.news = readJournal(registry, saved?.mark ?? NO_MARK, saved?.open ?? [], writerAlive);
    this.busy = new Set(this.news.open.map((o) => o.name));
  }

  private parse(d: Buffer): void {
    const counts = d.indexOf(NL, HEADER_BYTES);
    const stateEnd = counts === -1 ? -1 : d.indexOf(NL, counts + 1);
    if (stateEnd === -1) return;
    const [n, e, nb, ob] = d.toString('latin1', HEADER_BYTES, counts).split(' ').map(Number);
    if (![n, e, nb, ob].every((x) => Number.isSafeInteger(x) && x! >= 0)) return;
    const st = d.toString('latin1', counts + 1, stateEnd).split(' ');
    if (st.length !== 9 || st[0] !== this.boot) return;
    const num = st.slice(1, 8).map(Number);
    if (!num.every((x) => Number.isFinite(x) && x >= 0)) return;
    const [ino, size, ctime, mtime, settled, jino, jpos] = num as [number, number, number, number, number, number, number];
    const namesStart = stateEnd + 1;
    const openStart = namesStart + nb!;
    const tableStart = align(openStart + ob!);
    const viewsStart = tableStart + 4 * ENTRY * e!;
    if (viewsStart > d.length || (nb! > 0 && d[openStart - 1] !== NL) || (ob! > 0 && d[openStart + ob! - 1] !== NL)) return;
    const names = nb! > 0 ? d.toString('latin1', namesStart, openStart - 1).split('\n') : [];
    if (names.length !== n) return;
    const open: OpenChange[] = [];
    if (ob! > 0) {
      for (const line of d.toString('latin1', openStart, openStart + ob! - 1).split('\n')) {
        const [writer, name] = line.split('\t');
        if (writer === undefined || name === undefined) return;
        open.push({ writer, name });
      }
    }
    this.saved = {
      boot: st[0],
      agents: ino > 0 ? [ino, size, ctime, mtime] : null,
      settled: settled === 1,
      mark: { ino: jino, pos: jpos, tail: st[8]! },
      open,
    };
    this.count = e!;
    this.names = names;
    this.entries = aligned(d, tableStart, viewsStart, Uint32Array);
    this.views = d.subarray(viewsStart);
    this.state = new Uint8Array(e!);
  }

  /**
   * Every name of the registry, sorted: the file's, when agents/ is as it was when they were read (and
   * that was settled), else read from agents/ now.
   */
  listedNames(): string[] {
    const s = this.saved;
    if (s?.settled && sameKey(s.agents, this.agents)) return this.names;
    this.readNames = listNames(this.registry);
    return this.readNames;
  }

  /**
   * The cached done run of a name, when it is proven current. When it directly follows `after` (the
   * listing's previous row, served from this cache) in the file, `after` is extended to it and returned.
   */
  lookup(name: string, after?: CachedView): CachedView | null {
    const i = this.find(name);
    if (i === -1) return null;
    if (this.state[i] === KEPT) this.kept--;
    this.state[i] = LOOKED;
    if (this.news.lost || this.news.touched.has(name)) return null;
    const e = ENTRY * i;
    const start = this.entries[e + this.fromAt]!;
    const end = this.entries[e + this.toAt]!;
    if (!this.sound(e, start, end)) return null;
    this.kept++;
    this.state[i] = KEPT;
    const ticket = this.entries[e + TICKET] === 1;
    if (after && after.last === i - 1 && this.joins(after, start)) {
      after.end = end;
      after.last = i;
      after.queueTicket ||= ticket;
      return after;
    }
    return { name, views: this.views, start, end, queueTicket: ticket, last: i };
  }

  /**
   * After `stretch` (a lookup's hit), the names from `names[from]` on that lookup would join to it, one
   * after the other: each the next entry's name, proven current, its view just after. Extends the stretch
   * over them and returns the index of the first name it did not take — what lookup would have done
   * name by name, in one pass (a listing of many done runs is mostly this).
   */
  extend(stretch: CachedView, names: readonly string[], from: number): number {
    if (stretch.views !== this.views || this.news.lost) return from;
    const t = this.entries;
    const touched = this.news.touched.size > 0 ? this.news.touched : null;
    const { fromAt, toAt } = this;
    let k = from;
    for (let i = stretch.last + 1; k < names.length && i < this.count; i++, k++) {
      const e = ENTRY * i;
      const name = names[k]!;
      if (this.names[t[e + NAME]!] !== name || touched?.has(name)) break;
      const start = t[e + fromAt]!;
      const end = t[e + toAt]!;
      if (!this.sound(e, start, end) || !this.joins(stretch, start)) break;
      if (this.state[i] !== KEPT) this.kept++;
      this.state[i] = KEPT;
      stretch.end = end;
      stretch.last = i;
      if (t[e + TICKET] === 1) stretch.queueTicket = true;
    }
    this.cursor = stretch.last + 1;
    return k;
  }

  /** Where an entry's view (full or brief, as this listing prints) starts and ends in the table. */
  private get fromAt(): number {
    return this.brief ? BRIEF_FROM : VIEW_FROM;
  }

  private get toAt(): number {
    return this.brief ? BRIEF_TO : VIEW_TO;
  }

  /** A damaged file fails its checksum; this guards against one that passes it and is still wrong. */
  private sound(e: number, start: number, end: number): boolean {
    return this.entries[e + RUN]! >= 1 && start < end && end <= this.views.length;
  }

  /** Whether a view starting at `start` comes right after `stretch` in the file (a comma between). */
  private joins(stretch: CachedView, start: number): boolean {
    return stretch.views === this.views && stretch.end + 1 === start && this.views[stretch.end] === COMMA[0];
  }

  /** The entry of a name, or -1. Listings look names up in ascending order: from where the last one stopped. */
  private find(name: string): number {
    let i = this.cursor;
    if (i > 0 && compareNames(this.nameOf(i - 1), name) >= 0) {
      // Out of order: the first entry not before the name, by bisection.
      let lo = 0;
      while (lo < i) {
        const mid = (lo + i) >>> 1;
        if (compareNames(this.nameOf(mid), name) < 0) lo = mid + 1;
        else i = mid;
      }
    }
    for (; i < this.count; i++) {
      const c = compareNames(this.nameOf(i), name);
      if (c < 0) continue;
      this.cursor = c === 0 ? i + 1 : i;
      return c === 0 ? i : -1;
    }
    this.cursor = i;
    return -1;
  }

  private nameOf(i: number): string {
    return this.names[this.entries[ENTRY * i + NAME]!] ?? '';
  }

  /** The ctime of a name's latest record (run `run` of the name whose directory is `dir`), taken after it was read. Null when it is missing. */
  stamp(dir: string, run: number): Stamp | null {
    const s = statSync(`${dir}/${run}/record.json`, { throwIfNoEntry: false });
    return s === undefined ? null : { ctimeMs: s.ctimeMs };
  }

  /** Remembers the view (the exact JSON status prints) of a done run read after `stamp`, unless a change of it is open or its record is too young. */
  remember(name: string, stamp: Stamp, queueTicket: boolean, run: number, views: Views): void {
    if (this.busy.has(name) || !(stamp.ctimeMs < this.startedAt - SETTLED_MS)) return;
    this.learnt.set(name, {
      name,
      run,
      ticket: queueTicket,
      view: Buffer.from(escapeSeparators(views.full)),
      brief: Buffer.from(escapeSeparators(views.brief)),
    });
  }

  /**
   * Writes the cache when it learnt or lost something, or the journal moved on. When every name of the
   * registry was looked up (`all`), the entries of names that were not (removed) go; otherwise they are
   * kept as they were, unless the journal named them.
   */
  save(): void {
    const n = this.count;
    const news = this.news;
    const unproven = (i: number) => news.lost || news.touched.has(this.nameOf(i));
    const keeps = (i: number) => this.state[i] === KEPT || (!this.all && this.state[i] === 0 && !unproven(i));
    const s = this.saved;
    // The names of agents/ as read under the key taken before: settled when that key is old enough.
    const names = this.readNames ?? this.names;
    const settled = this.readNames === null ? Boolean(s?.settled) : this.agents !== null && this.agents[2] < this.startedAt - SETTLED_MS;
    let changed =
      this.learnt.size > 0 ||
      s === null ||
      s.mark.pos !== news.mark.pos ||
      s.mark.ino !== news.mark.ino ||
      s.open.length !== news.open.length ||
      (this.readNames !== null && !(s.settled === settled && sameKey(s.agents, this.agents) && sameNames(this.names, this.readNames)));
    // An entry that is KEPT keeps its place: only a cache with others must look at each.
    for (let i = 0; i < n && !changed && this.kept < n; i++) changed = !keeps(i);
    if (!changed) return;
    const entries = [...this.learnt.values()];
    for (let i = 0; i < n; i++) {
      const name = this.nameOf(i);
      if (!keeps(i) || this.learnt.has(name)) continue;
      const t = this.entries.subarray(ENTRY * i, ENTRY * i + ENTRY);
      const views = this.views;
      entries.push({
        name,
        run: t[RUN]!,
        ticket: t[TICKET] === 1,
        view: views.subarray(t[VIEW_FROM]!, t[VIEW_TO]!),
        brief: views.subarray(t[BRIEF_FROM]!, t[BRIEF_TO]!),
      });
    }
    entries.sort((a, b) => compareNames(a.name, b.name));
    const index = new Map(names.map((x, i) => [x, i]));
    // An entry whose name is not among the names (a name read fresh that went since): not kept.
    const kept = entries.filter((x) => index.has(x.name));
    const nameBytes = Buffer.from(names.map((x) => x + '\n').join(''), 'latin1');
    const openBytes = Buffer.from(news.open.map((o) => `${o.writer}\t${o.name}\n`).join(''), 'latin1');
    const k = this.agents ?? [0, 0, 0, 0];
    const { mark } = news;
    const head = Buffer.from(
      `${names.length} ${kept.length} ${nameBytes.length} ${openBytes.length}\n${this.boot} ${k.join(' ')} ${settled ? 1 : 0} ${mark.ino} ${mark.pos} ${mark.tail}\n`,
      'latin1',
    );
    const before = HEADER_BYTES + head.length + nameBytes.length + openBytes.length;
    const pad = Buffer.alloc(align(before) - before);
    const table = new Uint32Array(ENTRY * kept.length);
    const views: Uint8Array[] = [];
    let viewAt = 0;
    kept.forEach((x, i) => {
      table.set([index.get(x.name)!, x.run, x.ticket ? 1 : 0, viewAt, viewAt + x.view.length], ENTRY * i);
      views.push(x.view, COMMA);
      viewAt += x.view.length + 1;
    });
    kept.forEach((x, i) => {
      table.set([viewAt, viewAt + x.brief.length], ENTRY * i + BRIEF_FROM);
      views.push(x.brief, COMMA);
      viewAt += x.brief.length + 1;
    });
    // Offsets are uint32: a cache that would outgrow them (4 GB of views) is not written.
    if (viewAt > 0xffffffff) return;
    const body = Buffer.concat([head, nameBytes, openBytes, pad, new Uint8Array(table.buffer), ...views]);
    // Where there is no checksum there is no cache.
    const sum = sumOf(body);
    if (sum === null) return;
    const tmp = tempName(this.path);
    try {
      writeFileSync(tmp, Buffer.concat([Buffer.from(`${VERSION}${sum}\n`), body]), { mode: PRIVATE_FILE });
      renameSync(tmp, this.path);
    } catch {
      // A registry we cannot write to (read-only, full) is listed all the same, only not faster.
      try {
        unlinkSync(tmp);
      } catch {
        /* never created */
      }
    }
  }
}

/** agents/'s key, or null when it cannot be had (then the names are always read). */
function agentsKey(registry: string): Key | null {
  try {
    return statKey(join(registry, 'agents'));
  } catch {
    return null;
  }
}

function sameKey(a: Key | null, b: Key | null): boolean {
  return a !== null && b !== null && a[0] === b[0] && a[1] === b[1] && a[2] === b[2] && a[3] === b[3];
}

function sameNames(a: string[], b: string[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

const COMMA = Buffer.from(',');

/**
 * A JSON array's items as the pieces of one line, for writev(2): an item read fresh is its JSON text
 * (U+2028/U+2029 escaped, as every output line has them), a stretch of views the cache proved current is
 * the cache file's own bytes — consecutive stretches of one file joined into one piece — never decoded,
 * parsed, split or copied; the items are joined by ",". Byte for byte what JSON.stringify would make of
 * the same items (test/cli/status-cache.test.ts holds the two together).
 */
export function spliceViews(items: ReadonlyArray<string | CachedView>): Buffer[] {
  const pieces: Array<string | Buffer> = [];
  let views: Buffer | null = null;
  let from = 0;
  let to = 0;
  const flush = () => {
    if (views) pieces.push(views.subarray(from, to));
    views = null;
  };
  items.forEach((item, i) => {
    if (typeof item !== 'string' && item.views === views && item.start === to + 1 && item.views[to] === COMMA[0]) {
      to = item.end;
      return;
    }
    flush();
    if (i > 0) pieces.push(',');
    if (typeof item === 'string') pieces.push(item);
    else ({ views, start: from, end: to } = item);
  });
  flush();
  return pieces.map((p) => (typeof p === 'string' ? Buffer.from(escapeSeparators(p)) : p));
}

/** The values of a stretch of views: the views parsed, for a caller that wants objects, not bytes. */
export function parseViews(stretch: CachedView): unknown[] {
  return JSON.parse(`[${stretch.views.toString('utf8', stretch.start, stretch.end)}]`) as unknown[];
}

function align(at: number): number {
  return Math.ceil(at / 8) * 8;
}

/** data[from, to) as numbers: in place when aligned (a file read whole is), else copied. */
function aligned<T extends Uint32Array | Float64Array>(
  data: Buffer,
  from: number,
  to: number,
  type: { new (b: ArrayBufferLike, at?: number, n?: number): T; BYTES_PER_ELEMENT: number },
): T {
  const bytes = data.subarray(from, to);
  const size = type.BYTES_PER_ELEMENT;
  if (bytes.byteOffset % size === 0) return new type(bytes.buffer, bytes.byteOffset, bytes.length / size);
  return new type(new Uint8Array(bytes).buffer);
}

/** The whole file when it is ours and whole (its header line checked); anything else is no cache. */
function load(path: string): Buffer | null {
  // Read into the checksum's own memory (where there is none, there is no cache).
  let read: { data: Buffer; sum: string } | null;
  try {
    read = readSummed(path, HEADER_BYTES);
  } catch {
    return null;
  }
  if (!read) return null;
  const { data, sum } = read;
  if (data.length < HEADER_BYTES || data[HEADER_BYTES - 1] !== NL) return null;
  return data.toString('latin1', 0, HEADER_BYTES - 1) === VERSION + sum ? data : null;
}
