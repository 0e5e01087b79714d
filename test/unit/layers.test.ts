import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { ROOT } from '../support/paths.js';

// The layer rules of docs/design.md ("Layers"), read from its table and held against every import of
// lib/; and its code map, held against the files of lib/. The doc is the rule: change it, not this file.

const DESIGN = readFileSync(join(ROOT, 'docs', 'design.md'), 'utf8');

function section(title: string): string {
  const start = DESIGN.indexOf(`\n## ${title}\n`);
  assert.notEqual(start, -1, `docs/design.md has a "## ${title}" section`);
  const end = DESIGN.indexOf('\n## ', start + 1);
  return DESIGN.slice(start, end === -1 ? undefined : end);
}

/** Layer by place: a folder (`lib/runs/`) or a file (`lib/index.ts`), from the Layers table. */
function layers(): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of section('Layers').split('\n')) {
    const m = /^\| (\d+) \| ([^|]+) \|/.exec(line);
    if (!m) continue;
    for (const place of m[2]!.matchAll(/`([^`]+)`/g)) out.set(place[1]!, Number(m[1]));
  }
  return out;
}

function libFiles(dir = join(ROOT, 'lib')): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? libFiles(join(dir, e.name)) : e.name.endsWith('.ts') ? [relative(ROOT, join(dir, e.name))] : [],
  );
}

/** The place a file belongs to: the file itself when the table names it, else its top folder under lib/. */
function placeOf(file: string, table: Map<string, number>): string | null {
  if (table.has(file)) return file;
  const folder = file.split('/').slice(0, 2).join('/') + '/';
  return table.has(folder) ? folder : null;
}

/** Every relative import of a source text, static or dynamic, type-only or not. */
function importsOf(source: string): string[] {
  return [...source.matchAll(/(?:\bfrom\s+|\bimport\s*\(\s*|^\s*import\s+)'(\.{1,2}\/[^']+)'/gm)].map((m) => m[1]!);
}

interface Violation {
  file: string;
  imports: string;
  why: string;
}

/** The imports that cross the table: upward, sideways into another folder of the same layer, or out of lib/. */
function violations(files: Map<string, string>, table: Map<string, number>): Violation[] {
  const out: Violation[] = [];
  for (const [file, source] of files) {
    const from = placeOf(file, table);
    if (from === null) {
      out.push({ file, imports: '', why: 'the file is in no layer of the table' });
      continue;
    }
    for (const spec of importsOf(source)) {
      const target = relative(ROOT, resolve(ROOT, dirname(file), spec)).replace(/\.js$/, '.ts');
      if (!target.startsWith('lib/')) {
        out.push({ file, imports: target, why: 'imports from outside lib/' });
        continue;
      }
      const to = placeOf(target, table);
      if (to === null || to === from) continue;
      const a = table.get(from)!;
      const b = table.get(to)!;
      if (b > a) out.push({ file, imports: target, why: `layer ${a} (${from}) imports layer ${b} (${to})` });
      else if (b === a) out.push({ file, imports: target, why: `${from} and ${to} are both layer ${a}: neither imports the other` });
    }
  }
  return out;
}

/**
 * Inside lib/agents/ (docs/design.md, "Layers"): the folder of an adapter, `lib/agents/<cli>/`, imports
 * its own folder, `lib/agents/shared/` and `lib/agents/types.ts` (and the layers below), never another
 * adapter's folder nor the registry of adapters; `lib/agents/shared/` imports itself and `types.ts`.
 */
function adapterViolations(files: Map<string, string>): Violation[] {
  const out: Violation[] = [];
  for (const [file, source] of files) {
    const m = /^lib\/agents\/([^/]+)\//.exec(file);
    if (!m) continue;
    const folder = `lib/agents/${m[1]}/`;
    for (const spec of importsOf(source)) {
      const target = relative(ROOT, resolve(ROOT, dirname(file), spec)).replace(/\.js$/, '.ts');
      if (!target.startsWith('lib/agents/') || target.startsWith(folder) || target === 'lib/agents/types.ts') continue;
      if (folder !== 'lib/agents/shared/' && target.startsWith('lib/agents/shared/')) continue;
      out.push({ file, imports: target, why: `${folder} imports only its own folder, lib/agents/shared/ and lib/agents/types.ts` });
    }
  }
  return out;
}

test('an adapter imports no other adapter: lib/agents/<cli>/ takes only lib/agents/shared/ and lib/agents/types.ts', () => {
  const files = new Map(
    libFiles()
      .filter((f) => f.startsWith('lib/agents/'))
      .map((f) => [f, readFileSync(join(ROOT, f), 'utf8')]),
  );
  const found = adapterViolations(files);
  assert.deepEqual(found, [], `imports across adapters:\n${found.map((v) => `  ${v.file} → ${v.imports}: ${v.why}`).join('\n')}`);
});

test('the check of the adapters catches an adapter that imports another, or the registry, and shared code that imports an adapter', () => {
  const files = new Map([
    [
      'lib/agents/copilot/fake.ts',
      "import { x } from '../claude/stream.js';\nimport { y } from '../shared/tools.js';\nimport type { Z } from '../types.js';\nimport { w } from './usage.js';",
    ],
    ['lib/agents/qwen/fake.ts', "import { loadAdapter } from '../index.js';\nimport { nowIso } from '../../base/time.js';"],
    ['lib/agents/shared/fake.ts', "import { x } from '../claude/stream.js';\nimport { y } from './tools.js';"],
  ]);
  const found = adapterViolations(files).map((v) => `${v.file} → ${v.imports}`);
  assert.deepEqual(found, [
    'lib/agents/copilot/fake.ts → lib/agents/claude/stream.ts',
    'lib/agents/qwen/fake.ts → lib/agents/index.ts',
    'lib/agents/shared/fake.ts → lib/agents/claude/stream.ts',
  ]);
});

test('the Layers table of docs/design.md names every folder of lib/ and the ranks run from 0 up', () => {
  const table = layers();
  assert.ok(table.size >= 8, `the table was read: ${[...table.keys()].join(', ')}`);
  const folders = readdirSync(join(ROOT, 'lib'), { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => `lib/${e.name}/`);
  for (const f of folders) assert.ok(table.has(f), `${f} has a layer in docs/design.md`);
  for (const place of table.keys()) assert.ok(folders.includes(place) || libFiles().includes(place), `${place} (in the table) exists`);
  assert.ok([...table.values()].includes(0), 'a bottom layer, 0');
});

test('no file of lib/ imports across a layer (docs/design.md, "Layers")', () => {
  const table = layers();
  const files = new Map(libFiles().map((f) => [f, readFileSync(join(ROOT, f), 'utf8')]));
  assert.ok(files.size > 50, `lib/ was read: ${files.size} files`);
  const found = violations(files, table);
  assert.deepEqual(found, [], `imports across the layers:\n${found.map((v) => `  ${v.file} → ${v.imports}: ${v.why}`).join('\n')}`);
});

test('the check itself catches an upward import, a sideways one and a file in no layer', () => {
  const table = layers();
  const files = new Map([
    ['lib/registry/fake.ts', "import { start } from '../commands/start.js';\nimport type { X } from '../runs/observe.js';"],
    ['lib/cli/fake.ts', "const v = await import('../views/table.js');"],
    ['lib/base/fake.ts', "import { ok } from './time.js';"],
    ['lib/nowhere/fake.ts', "import { ok } from '../base/time.js';"],
  ]);
  const found = violations(files, table).map((v) => `${v.file} → ${v.imports}`);
  assert.deepEqual(found, [
    'lib/registry/fake.ts → lib/commands/start.ts',
    'lib/registry/fake.ts → lib/runs/observe.ts',
    'lib/cli/fake.ts → lib/views/table.ts',
    'lib/nowhere/fake.ts → ',
  ]);
});

test('the code map of docs/design.md names every file of lib/, and only files that exist', () => {
  const map = section('Code map');
  const named = new Set([...map.matchAll(/`(lib\/[^`]+\.ts)`/g)].map((m) => m[1]!));
  const files = libFiles();
  const missing = files.filter((f) => !named.has(f));
  assert.deepEqual(missing, [], `files of lib/ the code map does not name: ${missing.join(', ')}`);
  const gone = [...named].filter((f) => !files.includes(f));
  assert.deepEqual(gone, [], `the code map names files that do not exist: ${gone.join(', ')}`);
});
