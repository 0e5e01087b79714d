import { existsSync, readFileSync, renameSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as zlib from 'node:zlib';
import { tempName } from './durable.js';
import { RECORD_FORMAT } from './record.js';

/**
 * The cache of finished runs behind the `status` listing (docs/design.md, "The status cache"). A run
 * whose latest record is `done` never changes again on its own, so the listing need not read, parse
 * and render its record every time: two cheap syscalls prove the rendered copy current — run N+1 does
 * not exist (runs are numbered without gaps), and every record 1..N of the name still has the inode,
 * size, mtime and ctime it had when it was read.
 *
 * Strictly a cache: a missing, unreadable, foreign or corrupt file is an empty cache, and deleting it
 * loses nothing. It is replaced whole by rename (not fsynced: losing it costs one slower listing), so
 * concurrent listings each read one complete file; the last writer wins, and every entry is proven on
 * its own anyway.
 *
 * Format: a header line with the CRC-32 of the rest (a damaged file is an empty cache, never broken
 * output), then one line per name: name, run, queue ticket (0/1), the keys of its records
 * ("ino,size,mtimeMs,ctimeMs" joined by ";"), and its rendered view — JSON without the closing brace,
 * so the listing can append the fields that are not the record's. JSON text holds no raw tab or
 * newline, and names hold neither.
 */
const FILE = 'status-cache';
/** Bump when what an entry holds, or how a view is rendered, changes: older files are then ignored. */
const VERSION = `subagents status cache 2 record format ${RECORD_FORMAT} crc32 `;
/**
 * Only records whose timestamps are older than this (before the cache was opened) are remembered. A
 * change within the same clock tick as the stat that keyed a record could leave size and timestamps
 * as they were; a change after that stat is stamped later than the start of this process, so it can
 * never match a key this much older (1 s covers the coarsest timestamps of old filesystems).
 */
const SETTLED_MS = 2000;

export interface CachedView {
  name: string;
  /** The run's directory. */
  dir: string;
  /** The view as JSON, without its closing brace. */
  view: string;
  queueTicket: boolean;
}

/** Stat keys of records 1..N of a name, taken before they were read. */
export type Stamp = string[];

export class DoneCache {
  private readonly path: string;
  private readonly text: string;
  /** name → [start, end) of its line in `text`. */
  private readonly lines = new Map<string, [number, number]>();
  /** Names whose line was looked up, and those of them found current. */
  private readonly looked = new Set<string>();
  private readonly kept = new Set<string>();
  /** New lines, by name. */
  private readonly learnt = new Map<string, string>();
  private readonly settledBefore = Date.now() - SETTLED_MS;

  constructor(registry: string) {
    this.path = join(registry, FILE);
    this.text = load(this.path);
    for (let i = 0; i < this.text.length; ) {
      const nl = this.text.indexOf('\n', i);
      const tab = this.text.indexOf('\t', i);
      if (nl === -1 || tab === -1 || tab > nl) break;
      this.lines.set(this.text.slice(i, tab), [i, nl]);
      i = nl + 1;
    }
  }

  /** The cached done run of a name (whose directory is `dir`), when it is provably current. */
  lookup(name: string, dir: string): CachedView | null {
    const at = this.lines.get(name);
    if (at === undefined) return null;
    this.looked.add(name);
    // Fields found with indexOf, not split: this runs once per listed name.
    const t = this.text;
    const t1 = at[0] + name.length;
    const t2 = t.indexOf('\t', t1 + 1);
    const t3 = t.indexOf('\t', t2 + 1);
    const t4 = t.indexOf('\t', t3 + 1);
    if (t4 === -1 || t4 > at[1]) return null;
    const run = Number(t.slice(t1 + 1, t2));
    const keys = run === 1 ? [t.slice(t3 + 1, t4)] : t.slice(t3 + 1, t4).split(';');
    if (!(run >= 1) || keys.length !== run) return null;
    for (let k = 0; k < run; k++) if (keyOf(`${dir}/${k + 1}/record.json`) !== keys[k]) return null;
    if (existsSync(`${dir}/${run + 1}`)) return null;
    this.kept.add(name);
    return { name, dir: `${dir}/${run}`, view: t.slice(t4 + 1, at[1]), queueTicket: t[t2 + 1] === '1' };
  }

  /** Keys of records 1..run of a name, to take before reading them. Null when one is missing. */
  stamp(dir: string, run: number): Stamp | null {
    const keys: Stamp = [];
    for (let k = 1; k <= run; k++) {
      const key = keyOf(`${dir}/${k}/record.json`);
      if (key === null) return null;
      keys.push(key);
    }
    return keys;
  }

  /**
   * Remembers the rendered view (JSON without its closing brace) of a done run read after `stamp`,
   * once its records have settled.
   */
  remember(name: string, stamp: Stamp, queueTicket: boolean, view: string): void {
    for (const key of stamp) {
      const [, , mtime, ctime] = key.split(',').map(Number);
      if (!(mtime! < this.settledBefore && ctime! < this.settledBefore)) return;
    }
    this.learnt.set(name, `${name}\t${stamp.length}\t${queueTicket ? 1 : 0}\t${stamp.join(';')}\t${view}`);
  }

  /**
   * Writes the cache when it learnt or lost something. `complete`: every name of the registry was
   * looked up, so the lines of names that were not (removed) go; otherwise they are kept as they were.
   */
  save(complete: boolean): void {
    const out: string[] = [];
    for (const [name, [a, b]] of this.lines) {
      if (this.kept.has(name) || (!complete && !this.looked.has(name))) out.push(this.text.slice(a, b));
    }
    if ((out.length === this.lines.size && this.learnt.size === 0) || !zlib.crc32) return;
    out.push(...this.learnt.values());
    const body = Buffer.from(out.map((l) => l + '\n').join(''));
    const tmp = tempName(this.path);
    try {
      writeFileSync(tmp, Buffer.concat([Buffer.from(`${VERSION}${zlib.crc32(body)}\n`), body]));
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

function keyOf(path: string): string | null {
  const s = statSync(path, { throwIfNoEntry: false });
  return s === undefined ? null : `${s.ino},${s.size},${s.mtimeMs},${s.ctimeMs}`;
}

/** The cache's lines when the file is ours and whole; anything else is an empty cache. */
function load(path: string): string {
  // zlib.crc32 arrived in Node 20.15; without it there is no cache.
  if (!zlib.crc32) return '';
  let data: Buffer;
  try {
    data = readFileSync(path);
  } catch {
    return '';
  }
  const nl = data.indexOf(10);
  if (nl === -1 || data.toString('latin1', 0, nl) !== VERSION + zlib.crc32(data.subarray(nl + 1))) return '';
  return data.toString('utf8', nl + 1);
}
