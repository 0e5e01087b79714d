import { renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { readRegular } from '../base/regular.js';
import { join } from 'node:path';
import { tempName } from './durable.js';
import { compareNames } from './store.js';
import { probeKeys, statKey } from './stat-key.js';
import { RECORD_FORMAT } from './record.js';
import { escapeSeparators } from '../base/json-line.js';
import { crc32 } from './crc32.js';
import { PRIVATE_FILE } from './private.js';

/**
 * The cache of finished runs behind the `status` listing (docs/design.md, "The status cache"). A run
 * whose latest record is `done` never changes again on its own, so the listing need not read, parse
 * and render its record every time: stats prove the rendered copy current — every record 1..N of the
 * name still has the inode, size and ctime it had when it was read, and run N+1 does not exist (runs
 * are numbered without gaps).
 *
 * Strictly a cache: a missing, unreadable, foreign or corrupt file is an empty cache, and deleting it
 * loses nothing. It is replaced whole by rename (not fsynced: losing it costs one slower listing), so
 * concurrent listings each read one complete file; the last writer wins, and every entry is proven on
 * its own anyway.
 *
 * The file is laid out so that a listing does as little as it can per name (numbers in the platform's
 * byte order, which the header names):
 *   the header line: VERSION and the CRC-32 of everything after the line, as 10 digits
 *   "<entries> <probes> <bytes of the names> <bytes of the probes' paths>\n"
 *   the names, each ended by "\n", in name order
 *   zero bytes up to a multiple of 8 from the start of the file
 *   the entries, 8 uint32 each: where its name starts and ends in the names, run N, queue ticket
 *     (0/1), its first probe, where its probes' paths start, and where its view starts and ends in the
 *     views (integers, not float64: V8's interpreter boxes every float64 it loads, and a listing reads
 *     a dozen per name)
 *   the probes' keys, 4 float64 each: inode, size, ctime ms, mtime ms (lib/registry/stat-key.ts) — NaN
 *     for "must not exist"
 *   the probes' paths, relative to agents/, each ended by a NUL byte: an entry has N + 1 of them,
 *     "<name's directory>/<k>/record.json" for k = 1..N, then "<name's directory>/<N+1>"
 *   the views: each the exact JSON `status` prints for the run (U+2028/U+2029 escaped), in name order,
 *     joined by ","
 * So opening the cache parses nothing per name, a full listing proves every entry with one call
 * (probeKeys), finds each listed name by comparing bytes in place
 * (names are ASCII, sorted the same way as the listing), and serves consecutive names as one stretch of
 * the views: with every run current, its whole `agents` array is one stretch of the file's bytes,
 * printed without decoding, parsing or even splitting it. Names hold no newline.
 */
const FILE = 'status-cache';
const ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1 ? 'LE' : 'BE';
/** Bump when what an entry holds, or how a view is rendered, changes: older files are then ignored. */
const VERSION = `subagents status cache 10 record format ${RECORD_FORMAT} ${ENDIAN} crc32 `;
const HEADER_BYTES = VERSION.length + 10 + 1;
/**
 * Only records whose timestamps are older than this (before the cache was opened) are remembered. A
 * change within the same clock tick as the stat that keyed a record could leave size and timestamps
 * as they were; a change after that stat is stamped later than the start of this process, so it can
 * never match a key this much older (1 s covers the coarsest timestamps of old filesystems).
 */
const SETTLED_MS = 2000;
/** An entry's uint32 fields, in order (0 and 1, where its name starts and ends in the names, are written for the layout's sake). */
const RUN = 2;
const TICKET = 3;
const FIRST_PROBE = 4;
const PATHS_FROM = 5;
const VIEW_FROM = 6;
const VIEW_TO = 7;
const ENTRY = 8;
const KEY = 4;

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

/** What a fresh read of a name's latest run N proves it by: the keys of records 1..N, taken before they were read. */
export interface Stamp {
  /** 4 numbers a record, then 4 NaN for "no run N+1". */
  keys: number[];
  /** Their paths relative to agents/, each ended by a NUL. */
  paths: string;
}

const NL = 10;
const LOOKED = 1;
const KEPT = 2;

interface Entry {
  name: string;
  run: number;
  ticket: boolean;
  keys: ArrayLike<number>;
  paths: Uint8Array;
  view: Uint8Array;
}

export class DoneCache {
  private readonly path: string;
  /** agents/, which the probes' paths are relative to. */
  private readonly base: string;
  private count = 0;
  private entries: Uint32Array = new Uint32Array(0);
  private keys: Float64Array = new Float64Array(0);
  /** Entry i's name (ASCII): one decode and split of the names' bytes when the cache is opened. */
  private names: string[] = [];
  private paths: Buffer = Buffer.alloc(0);
  private views: Buffer = Buffer.alloc(0);
  /** Per probe: 1 once proven to hold. */
  private ok = new Uint8Array(0);
  private proven = false;
  /** Per entry: 0 not looked up, LOOKED, or KEPT (looked up and found current). */
  private state = new Uint8Array(0);
  /** Where the next lookup starts searching: listings look names up in order. */
  private cursor = 0;
  /** New entries, by name. */
  private readonly learnt = new Map<string, Entry>();
  private readonly settledBefore = Date.now() - SETTLED_MS;

  /** `all`: every name of the registry will be looked up, so every entry is proven at once. */
  constructor(
    registry: string,
    private readonly all: boolean,
  ) {
    this.path = join(registry, FILE);
    this.base = join(registry, 'agents');
    const d = load(this.path);
    if (d !== null) this.parse(d);
  }

  private parse(d: Buffer): void {
    const counts = d.indexOf(NL, HEADER_BYTES);
    const [e, p, n, b] = counts === -1 ? [] : d.toString('latin1', HEADER_BYTES, counts).split(' ').map(Number);
    if (![e, p, n, b].every((x) => Number.isSafeInteger(x) && x! >= 0)) return;
    const namesEnd = counts + 1 + n!;
    const tableStart = align(namesEnd);
    const keysStart = tableStart + 4 * ENTRY * e!;
    const keysEnd = keysStart + 8 * KEY * p!;
    const pathsEnd = keysEnd + b!;
    if (pathsEnd > d.length || (n! > 0 && d[namesEnd - 1] !== NL) || (b! > 0 && d[pathsEnd - 1] !== 0)) return;
    const names = n! > 0 ? d.toString('latin1', counts + 1, namesEnd - 1).split('\n') : [];
    if (names.length !== e) return;
    this.count = e!;
    this.names = names;
    this.entries = aligned(d, tableStart, keysStart, Uint32Array);
    this.keys = aligned(d, keysStart, keysEnd, Float64Array);
    this.paths = d.subarray(keysEnd, pathsEnd);
    this.views = d.subarray(pathsEnd);
    this.ok = new Uint8Array(p!);
    this.state = new Uint8Array(e!);
  }

  /**
   * The cached done run of a name, when it is provably current. When it directly follows `after` (the
   * listing's previous row, served from this cache) in the file, `after` is extended to it and returned.
   */
  lookup(name: string, after?: CachedView): CachedView | null {
    const i = this.find(name);
    if (i === -1) return null;
    this.state[i] = LOOKED;
    const t = this.entries;
    const e = ENTRY * i;
    const run = t[e + RUN]!;
    const first = t[e + FIRST_PROBE]!;
    const probes = run + 1;
    const pathsFrom = t[e + PATHS_FROM]!;
    const pathsTo = this.pathsEnd(i);
    const start = t[e + VIEW_FROM]!;
    const end = t[e + VIEW_TO]!;
    // A damaged file fails its checksum; these guard against a file that passes it and is still wrong.
    if (!(run >= 1 && first + probes <= this.ok.length && pathsFrom <= pathsTo && pathsTo <= this.paths.length && start < end && end <= this.views.length))
      return null;
    if (!this.proven) {
      if (this.all) {
        probeKeys(this.base, this.paths, this.keys, this.ok);
        this.proven = true;
      } else if (
        probeKeys(
          this.base,
          this.paths.subarray(pathsFrom, pathsTo),
          this.keys.subarray(KEY * first, KEY * (first + probes)),
          this.ok.subarray(first, first + probes),
        ) !== probes
      ) {
        return null;
      }
    }
    for (let k = first; k < first + probes; k++) if (this.ok[k] !== 1) return null;
    this.state[i] = KEPT;
    const ticket = t[e + TICKET] === 1;
    if (after?.views === this.views && after.last === i - 1 && after.end + 1 === start && this.views[after.end] === COMMA[0]) {
      after.end = end;
      after.last = i;
      after.queueTicket ||= ticket;
      return after;
    }
    return { name, views: this.views, start, end, queueTicket: ticket, last: i };
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

  /** Where entry i's probes' paths end: where the next entry's start. */
  private pathsEnd(i: number): number {
    return i + 1 < this.count ? this.entries[ENTRY * (i + 1) + PATHS_FROM]! : this.paths.length;
  }

  private nameOf(i: number): string {
    return this.names[i] ?? '';
  }

  /** What proves run `run` of the name whose directory is `dir` unchanged, taken before its records are read. Null when a record is missing. */
  stamp(dir: string, run: number): Stamp | null {
    if (!dir.startsWith(this.base + '/')) return null;
    const relative = dir.slice(this.base.length + 1);
    const keys: number[] = [];
    let paths = '';
    for (let k = 1; k <= run; k++) {
      const key = statKey(`${dir}/${k}/record.json`);
      if (key === null) return null;
      keys.push(...key);
      paths += `${relative}/${k}/record.json\0`;
    }
    keys.push(NaN, NaN, NaN, NaN);
    paths += `${relative}/${run + 1}\0`;
    return { keys, paths };
  }

  /** Remembers the view (the exact JSON status prints) of a done run read after `stamp`, once its records have settled. */
  remember(name: string, stamp: Stamp, queueTicket: boolean, view: string): void {
    const { keys } = stamp;
    for (let k = 0; k + KEY < keys.length; k += KEY) if (!(keys[k + 2]! < this.settledBefore)) return;
    this.learnt.set(name, {
      name,
      run: keys.length / KEY - 1,
      ticket: queueTicket,
      keys,
      paths: Buffer.from(stamp.paths, 'latin1'),
      view: Buffer.from(escapeSeparators(view)),
    });
  }

  /**
   * Writes the cache when it learnt or lost something. When every name of the registry was looked up
   * (`all`), the entries of names that were not (removed) go; otherwise they are kept as they were.
   */
  save(): void {
    const n = this.count;
    const keeps = (i: number) => this.state[i] === KEPT || (!this.all && this.state[i] === 0);
    let changed = this.learnt.size > 0;
    for (let i = 0; i < n && !changed; i++) changed = !keeps(i);
    if (!changed) return;
    const crc = crc32();
    if (!crc) return;
    const entries = [...this.learnt.values()];
    for (let i = 0; i < n; i++) {
      const t = this.entries.subarray(ENTRY * i, ENTRY * i + ENTRY);
      const name = this.nameOf(i);
      if (!keeps(i) || this.learnt.has(name)) continue;
      const first = t[FIRST_PROBE]!;
      entries.push({
        name,
        run: t[RUN]!,
        ticket: t[TICKET] === 1,
        keys: this.keys.subarray(KEY * first, KEY * (first + t[RUN]! + 1)),
        paths: this.paths.subarray(t[PATHS_FROM]!, this.pathsEnd(i)),
        view: this.views.subarray(t[VIEW_FROM]!, t[VIEW_TO]!),
      });
    }
    entries.sort((a, b) => compareNames(a.name, b.name));
    const probes = entries.reduce((sum, e) => sum + e.run + 1, 0);
    const names = Buffer.from(entries.map((e) => e.name + '\n').join(''), 'latin1');
    const pathBytes = entries.reduce((sum, e) => sum + e.paths.length, 0);
    const head = Buffer.concat([Buffer.from(`${entries.length} ${probes} ${names.length} ${pathBytes}\n`), names]);
    const pad = Buffer.alloc(align(HEADER_BYTES + head.length) - HEADER_BYTES - head.length);
    const table = new Uint32Array(ENTRY * entries.length);
    const keys = new Float64Array(KEY * probes);
    const paths: Uint8Array[] = [];
    const views: Uint8Array[] = [];
    let nameAt = 0;
    let probe = 0;
    let pathAt = 0;
    let viewAt = 0;
    entries.forEach((e, i) => {
      table.set([nameAt, nameAt + e.name.length, e.run, e.ticket ? 1 : 0, probe, pathAt, viewAt, viewAt + e.view.length], ENTRY * i);
      keys.set(e.keys, KEY * probe);
      nameAt += e.name.length + 1;
      probe += e.run + 1;
      paths.push(e.paths);
      pathAt += e.paths.length;
      views.push(e.view, COMMA);
      viewAt += e.view.length + 1;
    });
    // Offsets are uint32: a cache that would outgrow them (4 GB of views) is not written.
    if (viewAt > 0xffffffff || pathAt > 0xffffffff || probe > 0xffffffff) return;
    const body = Buffer.concat([head, pad, new Uint8Array(table.buffer), new Uint8Array(keys.buffer), ...paths, ...views]);
    const tmp = tempName(this.path);
    try {
      writeFileSync(tmp, Buffer.concat([Buffer.from(`${VERSION}${String(crc(body)).padStart(10, '0')}\n`), body]), { mode: PRIVATE_FILE });
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
  // node:zlib's CRC-32 arrived in Node 22.2; without it there is no cache.
  const crc = crc32();
  if (!crc) return null;
  let data: Buffer;
  try {
    data = readRegular(path);
  } catch {
    return null;
  }
  if (data.length < HEADER_BYTES || data[HEADER_BYTES - 1] !== NL) return null;
  const ok = data.toString('latin1', 0, HEADER_BYTES - 1) === VERSION + String(crc(data.subarray(HEADER_BYTES))).padStart(10, '0');
  return ok ? data : null;
}
