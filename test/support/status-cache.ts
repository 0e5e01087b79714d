/**
 * The status cache and the journal as an outsider sees them on disk (lib/registry/done-cache.ts,
 * lib/registry/journal.ts), to doctor and to damage them. The cache file: a header line ending in the
 * checksum of the rest (lib/registry/checksum.ts) as 16 hex digits; "<names> <entries> <name bytes> <open change bytes>"; a line of
 * state (boot id, agents/'s key, the journal's mark); the names, one a line; the open changes; zero
 * bytes up to a multiple of 8; 7 uint32 an entry (name index, run, ticket, view start and end, brief
 * view start and end); the views.
 */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { endianness } from 'node:os';
import { join } from 'node:path';
import { SUM_DIGITS, sumOf } from '../../lib/registry/checksum.js';

const ENTRY = 7;

interface Layout {
  data: Buffer;
  header: number;
  names: string[];
  entries: number;
  table: number;
  views: number;
  field(i: number, k: number): number;
}

function layout(registry: string): Layout {
  const data = Buffer.from(readFileSync(join(registry, 'status-cache')));
  const header = data.indexOf(10) + 1;
  const countsEnd = data.indexOf(10, header);
  const stateEnd = data.indexOf(10, countsEnd + 1);
  const [count, entries, nameBytes, openBytes] = data.toString('latin1', header, countsEnd).split(' ').map(Number) as [number, number, number, number];
  const names = data
    .toString('latin1', stateEnd + 1, stateEnd + 1 + nameBytes)
    .split('\n')
    .slice(0, -1);
  assert.equal(names.length, count);
  const table = Math.ceil((stateEnd + 1 + nameBytes + openBytes) / 8) * 8;
  const at = (i: number, k: number) => table + 4 * ENTRY * i + 4 * k;
  const field = (i: number, k: number) => (endianness() === 'LE' ? data.readUInt32LE(at(i, k)) : data.readUInt32BE(at(i, k)));
  return { data, header, names, entries, table, views: table + 4 * ENTRY * entries, field };
}

/** The names whose done run the cache holds. */
export function cachedNames(registry: string): string[] {
  const l = layout(registry);
  return Array.from({ length: l.entries }, (_, i) => l.names[l.field(i, 0)]!);
}

/**
 * Rewrites the (full) view of one name in the cache file, keeping its length, with a correct checksum:
 * what a stale cache would say. A listing that shows the edit was served from the cache.
 */
export function doctorView(registry: string, name: string, edit: (view: string) => string): void {
  const l = layout(registry);
  const i = Array.from({ length: l.entries }, (_, e) => e).find((e) => l.names[l.field(e, 0)] === name);
  assert.ok(i !== undefined, `${name} is in the cache`);
  const [start, end] = [l.views + l.field(i, 3), l.views + l.field(i, 4)];
  const edited = Buffer.from(edit(l.data.toString('utf8', start, end)));
  assert.equal(edited.length, end - start, 'the doctored view keeps its length');
  edited.copy(l.data, start);
  l.data.write(sumOf(l.data.subarray(l.header))!, l.header - 1 - SUM_DIGITS, 'latin1');
  writeFileSync(join(registry, 'status-cache'), l.data);
}

/** FNV-1a (32 bits) as 8 hex digits: the journal's line checksum. */
function fnv(text: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return (h >>> 0).toString(16).padStart(8, '0');
}

/** A well-formed journal line naming `name` ("a/b" as in agents/: "a+b"), as a writer (pid 1 of another boot) would append it. */
export function journalLine(op: '+' | '-', name: string, seq = 1): string {
  const body = `${op} 1 1 00000000-0000-4000-8000-000000000000 ${seq} ${name.replaceAll('/', '+')}`;
  return `${body} ${fnv(body)}\n`;
}
