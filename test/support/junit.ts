/**
 * JUnit reports (`status --junit`): a strict little XML parser (a structural check of the report that
 * does not trust the writer), xmllint against the JUnit schema when it is installed, and the checks
 * every report must pass.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { FIXTURES } from './paths.js';

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
export const JUNIT_XSD = join(FIXTURES, 'junit.xsd');

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

/**
 * Asserts the JUnit file is what CI dashboards read: valid against test/fixtures/junit.xsd (xmllint,
 * which test/fault/setup.sh installs) and, always, the strict JS parser plus the schema's rules the
 * parser alone would not check (the timestamp form). Returns its root.
 */
export function checkJunit(t: { diagnostic(msg: string): void }, file: string): XmlElement {
  assert.ok(existsSync(file), `${file} was written`);
  const v = validateJunit(file);
  if (v === null)
    t.diagnostic(
      'xmllint is not installed (bash test/fault/setup.sh, or apt-get install -y libxml2-utils): the schema was not checked, only the JS structural checks ran',
    );
  else assert.ok(v.ok, `${file} is not valid against the JUnit schema: ${v.why}`);
  const root = parseXml(readFileSync(file, 'utf8'));
  assert.equal(root.name, 'testsuites');
  const suites = root.children.filter((c) => c.name === 'testsuite');
  assert.equal(suites.length, 1);
  assert.match(suites[0]!.attrs.timestamp ?? '', /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/, 'timestamp: an xs:dateTime without fraction or zone');
  for (const c of findAll(root, 'testcase')) assert.match(c.attrs.time ?? '', /^\d+(\.\d+)?$/, 'testcase time: seconds');
  return root;
}
