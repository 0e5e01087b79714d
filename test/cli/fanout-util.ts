/**
 * Helpers of test/cli/fanout.test.ts: a strict little XML parser (a structural check of the JUnit
 * report that does not trust the writer), xmllint against the JUnit schema when it is installed, /proc scans by run marker,
 * and an async `until` that does not block the event loop (so concurrent pollers keep polling).
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, pidAlive } from '../helpers.js';

export interface XmlElement {
  name: string;
  attrs: Record<string, string>;
  children: XmlElement[];
  /** The element's own text (entities decoded, CDATA included), concatenated. */
  text: string;
}

const NAME = /^[A-Za-z_:][A-Za-z0-9_.:-]*/;

function decodeEntities(raw: string, where: string): string {
  if (raw.includes('<')) throw new Error(`XML: "<" in ${where}`);
  return raw.replace(/&([^;]*);?/g, (all, ent: string) => {
    if (!all.endsWith(';')) throw new Error(`XML: a bare "&" in ${where}: ${JSON.stringify(raw.slice(0, 80))}`);
    switch (ent) {
      case 'amp':
        return '&';
      case 'lt':
        return '<';
      case 'gt':
        return '>';
      case 'quot':
        return '"';
      case 'apos':
        return "'";
    }
    const m = /^#(x[0-9A-Fa-f]+|[0-9]+)$/.exec(ent);
    if (!m) throw new Error(`XML: unknown entity &${ent}; in ${where}`);
    const code = m[1]!.startsWith('x') ? parseInt(m[1]!.slice(1), 16) : parseInt(m[1]!, 10);
    return String.fromCodePoint(code);
  });
}

/**
 * Parses a whole XML document strictly enough to catch an unescaped `<`, `&` or quote, a mismatched
 * or unclosed tag, a duplicate attribute, text outside the root or a second root. Returns the root.
 */
export function parseXml(xml: string): XmlElement {
  let i = 0;
  const stack: XmlElement[] = [];
  let root: XmlElement | null = null;
  if (xml.startsWith('<?xml')) {
    const end = xml.indexOf('?>');
    if (end < 0) throw new Error('XML: unterminated declaration');
    i = end + 2;
  }
  for (const ch of xml) {
    const c = ch.codePointAt(0)!;
    if ((c < 0x20 && c !== 0x9 && c !== 0xa && c !== 0xd) || c === 0xfffe || c === 0xffff) throw new Error(`XML: forbidden character U+${c.toString(16)}`);
  }
  while (i < xml.length) {
    const lt = xml.indexOf('<', i);
    const text = xml.slice(i, lt < 0 ? xml.length : lt);
    if (text) {
      if (text.includes(']]>')) throw new Error('XML: "]]>" in text');
      const decoded = decodeEntities(text, 'text');
      if (stack.length) stack[stack.length - 1]!.text += decoded;
      else if (decoded.trim()) throw new Error(`XML: text outside the root: ${JSON.stringify(decoded.slice(0, 80))}`);
    }
    if (lt < 0) break;
    i = lt;
    if (xml.startsWith('<!--', i)) {
      const end = xml.indexOf('-->', i + 4);
      if (end < 0) throw new Error('XML: unterminated comment');
      i = end + 3;
      continue;
    }
    if (xml.startsWith('<![CDATA[', i)) {
      if (!stack.length) throw new Error('XML: CDATA outside the root');
      const end = xml.indexOf(']]>', i + 9);
      if (end < 0) throw new Error('XML: unterminated CDATA');
      stack[stack.length - 1]!.text += xml.slice(i + 9, end);
      i = end + 3;
      continue;
    }
    if (xml.startsWith('</', i)) {
      const m = NAME.exec(xml.slice(i + 2));
      if (!m) throw new Error(`XML: bad end tag at ${i}`);
      const close = xml.indexOf('>', i);
      if (close < 0 || xml.slice(i + 2 + m[0].length, close).trim() !== '') throw new Error(`XML: bad end tag </${m[0]}`);
      const open = stack.pop();
      if (!open || open.name !== m[0]) throw new Error(`XML: </${m[0]}> closes <${open?.name ?? 'nothing'}>`);
      i = close + 1;
      continue;
    }
    const m = NAME.exec(xml.slice(i + 1));
    if (!m) throw new Error(`XML: bad tag at ${i}: ${JSON.stringify(xml.slice(i, i + 40))}`);
    const el: XmlElement = { name: m[0], attrs: {}, children: [], text: '' };
    i += 1 + m[0].length;
    let selfClosing = false;
    for (;;) {
      const ws = /^\s*/.exec(xml.slice(i))![0];
      i += ws.length;
      if (xml.startsWith('/>', i)) {
        selfClosing = true;
        i += 2;
        break;
      }
      if (xml[i] === '>') {
        i += 1;
        break;
      }
      if (!ws) throw new Error(`XML: attributes of <${el.name}> need white space between them`);
      const a = /^([A-Za-z_:][A-Za-z0-9_.:-]*)\s*=\s*(["'])/.exec(xml.slice(i));
      if (!a) throw new Error(`XML: bad attribute in <${el.name}>: ${JSON.stringify(xml.slice(i, i + 40))}`);
      i += a[0].length;
      const end = xml.indexOf(a[2]!, i);
      if (end < 0) throw new Error(`XML: unterminated attribute ${a[1]}`);
      if (a[1]! in el.attrs) throw new Error(`XML: duplicate attribute ${a[1]} in <${el.name}>`);
      el.attrs[a[1]!] = decodeEntities(xml.slice(i, end), `attribute ${a[1]} of <${el.name}>`);
      i = end + 1;
    }
    if (stack.length) stack[stack.length - 1]!.children.push(el);
    else if (root) throw new Error('XML: a second root element');
    else root = el;
    if (!selfClosing) stack.push(el);
  }
  if (stack.length) throw new Error(`XML: <${stack[stack.length - 1]!.name}> is never closed`);
  if (!root) throw new Error('XML: no root element');
  return root;
}

/** Every descendant element named `name`, in document order. */
export function findAll(el: XmlElement, name: string): XmlElement[] {
  const out: XmlElement[] = [];
  const walk = (e: XmlElement) => {
    for (const c of e.children) {
      if (c.name === name) out.push(c);
      walk(c);
    }
  };
  walk(el);
  return out;
}

let cachedXmllint: string | null | undefined;
/** The JUnit schema the reports are validated against (see its header for where its rules come from). */
export const JUNIT_XSD = join(ROOT, 'test', 'fixtures', 'junit.xsd');

/** The path of xmllint, or null when it is not installed (test/fault/setup.sh installs it). */
function findXmllint(): string | null {
  if (cachedXmllint === undefined) {
    const w = spawnSync('sh', ['-c', 'command -v xmllint'], { encoding: 'utf8' });
    cachedXmllint = w.status === 0 ? w.stdout.trim() : null;
  }
  return cachedXmllint;
}

/** `xmllint --schema junit.xsd FILE`: null when xmllint is missing; else its verdict (ok, and why not). */
export function validateJunit(file: string): { ok: boolean; why: string } | null {
  const bin = findXmllint();
  if (!bin) return null;
  const r = spawnSync(bin, ['--noout', '--schema', JUNIT_XSD, file], { encoding: 'utf8' });
  return { ok: r.status === 0, why: r.stderr };
}

/** Run ids (SUBAGENT_RUN_ID) of the live processes carrying `marker` (`KEY=value`) in their environment, with their pids. */
export function liveRunIds(marker: string): Map<string, number[]> {
  const out = new Map<string, number[]>();
  for (const e of readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    let env: string[];
    try {
      env = readFileSync(`/proc/${e}/environ`, 'latin1').split('\0');
    } catch {
      continue;
    }
    if (!env.includes(marker)) continue;
    const id = env.find((v) => v.startsWith('SUBAGENT_RUN_ID='));
    if (!id || !pidAlive(Number(e))) continue;
    const k = id.slice('SUBAGENT_RUN_ID='.length);
    out.set(k, [...(out.get(k) ?? []), Number(e)]);
  }
  return out;
}

/** Like helpers.until, but the condition is async (a verb run with runAsync), so the event loop keeps turning. */
export async function untilAsync<T>(what: string, fn: () => Promise<T | undefined | null | false>, timeoutMs = 90_000, everyMs = 50): Promise<T> {
  const end = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > end) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? `; last error: ${(last as Error).message}` : ''}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** The largest number of [start, end] intervals covering one instant (an end at t comes before a start at t). */
export function maxOverlap(intervals: Array<{ start: number; end: number }>): number {
  const ev = intervals.flatMap((iv) => [
    { t: iv.start, d: 1 },
    { t: iv.end, d: -1 },
  ]);
  ev.sort((a, b) => a.t - b.t || a.d - b.d);
  let cur = 0;
  let max = 0;
  for (const e of ev) {
    cur += e.d;
    max = Math.max(max, cur);
  }
  return max;
}
