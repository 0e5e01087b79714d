import { readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempName } from './durable.js';
import { compareNames } from './store.js';
import { pathExists, statKey, statKeyMatches } from './stat-key.js';
import { RECORD_FORMAT } from './record.js';
import { escapeSeparators } from '../cli/output.js';
import { crc32 } from './crc32.js';

/**
 * The cache of finished runs behind the `status` listing (docs/design.md, "The status cache"). A run
 * whose latest record is `done` never changes again on its own, so the listing need not read, parse
 * and render its record every time: two cheap syscalls prove the rendered copy current — run N+1 does
 * not exist (runs are numbered without gaps), and every record 1..N of the name still has the inode,
 * size and ctime it had when it was read.
 *
 * Strictly a cache: a missing, unreadable, foreign or corrupt file is an empty cache, and deleting it
 * loses nothing. It is replaced whole by rename (not fsynced: losing it costs one slower listing), so
 * concurrent listings each read one complete file; the last writer wins, and every entry is proven on
 * its own anyway.
 *
 * Format: a header line with the CRC-32 of the rest (a damaged file is an empty cache, never broken
 * output); one line per name — name, run, queue ticket (0/1), the keys of its records
 * ("ino,size,ctimeSec,ctimeNsec" joined by ";"), and where its view lies in the views (start, end);
 * an empty line; then the views: each the exact JSON `status` prints for the run (U+2028/U+2029
 * escaped), in name order, joined by ",". A listing whose runs are all current thus finds its whole
 * `agents` array as one stretch of bytes, and prints it without decoding, parsing or even splitting
 * it. Names hold no tab or newline.
 */
const FILE = 'status-cache';
/** Bump when what an entry holds, or how a view is rendered, changes: older files are then ignored. */
const VERSION = `subagents status cache 3 record format ${RECORD_FORMAT} crc32 `;
/**
 * Only records whose timestamps are older than this (before the cache was opened) are remembered. A
 * change within the same clock tick as the stat that keyed a record could leave size and timestamps
 * as they were; a change after that stat is stamped later than the start of this process, so it can
 * never match a key this much older (1 s covers the coarsest timestamps of old filesystems).
 */
const SETTLED_MS = 2000;

export interface CachedView {
  name: string;
  /** The name's directory, and the run (its directory is nameDir/run). */
  nameDir: string;
  run: number;
  /** The view: JSON bytes views[start, end), U+2028/U+2029 escaped. Views of the same file follow each other, joined by ",". */
  views: Buffer;
  start: number;
  end: number;
  queueTicket: boolean;
}

/** Stat keys of records 1..N of a name, taken before they were read. */
export type Stamp = string[];

const TAB = 9;
const NL = 10;
const LOOKED = 1;
const KEPT = 2;

interface Entry {
  name: string;
  /** name, run, ticket and keys, joined by tabs. */
  meta: string;
  view: Buffer;
}

export class DoneCache {
  private readonly path: string;
  /** The lines of the names, as bytes, and the views. */
  private readonly data: Buffer;
  private readonly views: Buffer;
  /** name → its line's number; lines are data[starts[i], ends[i]) (without the newline). */
  private readonly index = new Map<string, number>();
  private readonly starts: number[] = [];
  private readonly ends: number[] = [];
  /** Per line: 0 not looked up, LOOKED, or KEPT (looked up and found current). */
  private readonly state: Uint8Array;
  /** New entries, by name. */
  private readonly learnt = new Map<string, Entry>();
  private readonly settledBefore = Date.now() - SETTLED_MS;

  constructor(registry: string) {
    this.path = join(registry, FILE);
    const d = (this.data = load(this.path));
    let i = 0;
    for (;;) {
      const nl = d.indexOf(NL, i);
      if (nl === -1 || nl === i) break;
      let tab = i;
      while (tab < nl && d[tab] !== TAB) tab++;
      if (tab === nl) break;
      // Names are ASCII (the name rule), so latin1 decodes them exactly, and fastest.
      this.index.set(d.toString('latin1', i, tab), this.starts.length);
      this.starts.push(i);
      this.ends.push(nl);
      i = nl + 1;
    }
    // A file whose lines do not end in the empty line is no cache at all.
    if (d[i] !== NL) this.index.clear();
    this.views = d.subarray(i + 1);
    this.state = new Uint8Array(this.starts.length);
  }

  /** The cached done run of a name (whose directory is `dir`), when it is provably current. */
  lookup(name: string, dir: string): CachedView | null {
    const line = this.index.get(name);
    if (line === undefined) return null;
    this.state[line] = LOOKED;
    // Fields found and digits read in place, allocating nothing but the paths: this runs once per listed name.
    const d = this.data;
    const end = this.ends[line]!;
    const run = digits(d, this.starts[line]! + name.length + 1, end);
    let at = digitsNext;
    const ticket = d[at];
    at += 2;
    if (!(run >= 1) || d[at - 1] !== TAB) return null;
    for (let k = 1; k <= run; k++) {
      let to = at;
      while (to < end && d[to] !== 0x3b && d[to] !== TAB) to++;
      if (to === end || (d[to] === TAB) !== (k === run) || !statKeyMatches(`${dir}/${k}/record.json`, d, at, to)) return null;
      at = to + 1;
    }
    const start = digits(d, at, end);
    const stop = digits(d, digitsNext, end);
    if (digitsNext !== end + 1 || !(start < stop && stop <= this.views.length)) return null;
    if (pathExists(`${dir}/${run + 1}`)) return null;
    this.state[line] = KEPT;
    return { name, nameDir: dir, run, views: this.views, start, end: stop, queueTicket: ticket === 0x31 };
  }

  /** Keys of records 1..run of a name, to take before reading them. Null when one is missing. */
  stamp(dir: string, run: number): Stamp | null {
    const keys: Stamp = [];
    for (let k = 1; k <= run; k++) {
      const key = statKey(`${dir}/${k}/record.json`);
      if (key === null) return null;
      keys.push(key);
    }
    return keys;
  }

  /** Remembers the view (the exact JSON status prints) of a done run read after `stamp`, once its records have settled. */
  remember(name: string, stamp: Stamp, queueTicket: boolean, view: string): void {
    for (const key of stamp) {
      const [, , sec, nsec] = key.split(',');
      if (!(Number(sec) * 1000 + Number(nsec) / 1e6 < this.settledBefore)) return;
    }
    this.learnt.set(name, { name, meta: `${name}\t${stamp.length}\t${queueTicket ? 1 : 0}\t${stamp.join(';')}`, view: Buffer.from(escapeSeparators(view)) });
  }

  /**
   * Writes the cache when it learnt or lost something. `complete`: every name of the registry was
   * looked up, so the lines of names that were not (removed) go; otherwise they are kept as they were.
   */
  save(complete: boolean): void {
    const n = this.starts.length;
    const keeps = (i: number) => this.state[i] === KEPT || (!complete && this.state[i] === 0);
    let changed = this.learnt.size > 0;
    for (let i = 0; i < n && !changed; i++) changed = !keeps(i);
    if (!changed) return;
    const crc = crc32();
    if (!crc) return;
    const entries = [...this.learnt.values()];
    for (const [name, i] of this.index) {
      if (!keeps(i) || this.learnt.has(name)) continue;
      // The line up to its view's place (the last two fields), and its view.
      const line = this.data.toString('latin1', this.starts[i], this.ends[i]);
      const fields = line.split('\t');
      entries.push({ name, meta: fields.slice(0, 4).join('\t'), view: this.views.subarray(Number(fields[4]), Number(fields[5])) });
    }
    entries.sort((a, b) => compareNames(a.name, b.name));
    const lines: string[] = [];
    let at = 0;
    for (const e of entries) {
      lines.push(`${e.meta}\t${at}\t${at + e.view.length}\n`);
      at += e.view.length + 1;
    }
    const views: Buffer[] = [];
    for (const e of entries) views.push(e.view, COMMA);
    const body = Buffer.concat([Buffer.from(lines.join('') + '\n', 'latin1'), ...views]);
    const tmp = tempName(this.path);
    try {
      writeFileSync(tmp, Buffer.concat([Buffer.from(`${VERSION}${crc(body)}\n`), body]));
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

const COMMA = Buffer.from(',');

/** Where the field after the last number `digits` read starts (a variable, not an object: it runs thrice per listed name). */
let digitsNext = 0;

/** The decimal number at data[from…] up to the next tab or `end`; NaN when it is none. */
function digits(data: Buffer, from: number, end: number): number {
  let value = 0;
  let at = from;
  for (; at < end && data[at] !== TAB; at++) {
    const digit = data[at]! - 0x30;
    if (digit < 0 || digit > 9) {
      digitsNext = end + 2;
      return NaN;
    }
    value = value * 10 + digit;
  }
  digitsNext = at + 1;
  return at === from || at - from > 15 ? NaN : value;
}

const EMPTY = Buffer.alloc(0);

/** The cache's lines and views when the file is ours and whole; anything else is an empty cache. */
function load(path: string): Buffer {
  // CRC-32 arrived in Node 20.15; without it there is no cache.
  const crc = crc32();
  if (!crc) return EMPTY;
  let data: Buffer;
  try {
    data = readFileSync(path);
  } catch {
    return EMPTY;
  }
  const nl = data.indexOf(NL);
  if (nl === -1 || data.toString('latin1', 0, nl) !== VERSION + crc(data.subarray(nl + 1))) return EMPTY;
  return data.subarray(nl + 1);
}
