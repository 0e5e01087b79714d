// Keeps docs/agents/adding.md true. For every adapter registered in lib/agents/index.ts, each thing the
// walk-through's checklist says exists is checked here (its files, its page, its place in the lists of
// CLIs, its fixtures and tests, its pin); the checklist and this file's checks must name the same things;
// the page's code examples must be the code as it is (so they compile: tsc builds that code); and the
// adapter interface documents every member, as the page's table of members names them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { loadAdapter } from '../../lib/agents/index.js';
import { CLI_NAMES, type AgentAdapter } from '../../lib/agents/types.js';
import { helpLines } from '../../lib/commands/options.js';
import { ROOT } from '../support/paths.js';

const GUIDE = 'docs/agents/adding.md';
/** The folder of lib/agents/ that holds the code adapters share, and no adapter. */
const SHARED = 'shared';
/** The CLIs the project itself provides (no foreign program, nothing captured, nothing to pin). */
const BUILT_IN = new Set<string>(['shell']);
/**
 * The adapters over a protocol that many agents speak (`acp`): external, but with no program, store,
 * fake setup or pin of their own — their agents are the pinned CLIs (each with its setup), and their
 * stand-in for the verbs is test/cli/acp.test.ts's tiny agent. The checklist's rows they skip.
 */
const PROTOCOL = new Set<string>(['acp']);
const NOT_FOR_PROTOCOL = new Set<string>(['lib/agents/<cli>/store.ts', 'test/cli/agent-clis.test.ts', 'test/fakes/env.ts', 'test/clis/pins.json']);

type For = 'every CLI' | 'external CLIs' | 'built-in CLIs';

function read(path: string): string {
  return readFileSync(join(ROOT, path), 'utf8');
}

function isFile(path: string): boolean {
  return existsSync(join(ROOT, path)) && statSync(join(ROOT, path)).isFile();
}

const escapeRegex = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const word = (w: string) => new RegExp(`(^|[^\\w-])${escapeRegex(w)}($|[^\\w-])`);

/** The first line of `path` that starts with `prefix`; fails when there is none. */
function rowOf(path: string, prefix: string): string {
  const row = read(path)
    .split('\n')
    .find((l) => l.startsWith(prefix));
  assert.ok(row, `${path} has no line starting with ${prefix}`);
  return row;
}

/** A section of the guide: from its `## title` line to the next `## `. */
function section(title: string): string {
  const text = read(GUIDE);
  const at = text.indexOf(`\n## ${title}\n`);
  assert.notEqual(at, -1, `${GUIDE} has no section "${title}"`);
  const end = text.indexOf('\n## ', at + 1);
  return text.slice(at, end === -1 ? undefined : end);
}

/** The body rows of the first table in `text`, split into cells. */
function tableRows(text: string): string[][] {
  const lines = text.split('\n');
  const start = lines.findIndex((l) => l.startsWith('|'));
  const rows: string[][] = [];
  for (const l of lines.slice(start + 2)) {
    if (!l.startsWith('|')) break;
    rows.push(
      l
        .slice(1, -1)
        .split(' | ')
        .map((c) => c.trim()),
    );
  }
  return rows;
}

const codeSpan = (cell: string) => /^`([^`]+)`$/.exec(cell)?.[1] ?? null;

interface Check {
  for: For;
  check(cli: string, adapter: AgentAdapter): void | Promise<void>;
}

/** What each checklist row of the guide means, by its `where`. */
const CHECKS: Record<string, Check> = {
  'lib/agents/<cli>/index.ts': {
    for: 'external CLIs',
    async check(cli, adapter) {
      assert.ok(isFile(`lib/agents/${cli}/index.ts`));
      const mod = (await import(`../../lib/agents/${cli}/index.js`)) as Record<string, unknown>;
      assert.equal(mod[cli], adapter, `lib/agents/${cli}/index.ts exports the registered adapter as "${cli}"`);
    },
  },
  'lib/agents/<cli>/launch.ts': { for: 'external CLIs', check: (cli) => assert.ok(isFile(`lib/agents/${cli}/launch.ts`)) },
  'lib/agents/<cli>/stream.ts': { for: 'external CLIs', check: (cli) => assert.ok(isFile(`lib/agents/${cli}/stream.ts`)) },
  'lib/agents/<cli>/store.ts': { for: 'external CLIs', check: (cli) => assert.ok(isFile(`lib/agents/${cli}/store.ts`)) },
  'lib/agents/<cli>.ts': { for: 'built-in CLIs', check: (cli) => assert.ok(isFile(`lib/agents/${cli}.ts`)) },
  'lib/agents/names.ts': { for: 'every CLI', check: (cli) => assert.ok(read('lib/agents/names.ts').includes(`'${cli}'`), `lib/agents/names.ts lists ${cli}`) },
  'lib/agents/index.ts': {
    for: 'every CLI',
    check(cli) {
      const module = BUILT_IN.has(cli) ? `./${cli}.js` : `./${cli}/index.js`;
      assert.ok(
        loaders().some((l) => l.name === cli && l.module === module && l.export === cli),
        `lib/agents/index.ts loads ${cli} from ${module}`,
      );
    },
  },
  'docs/agents/<cli>.md': {
    for: 'every CLI',
    check(cli) {
      const page = read(`docs/agents/${cli}.md`);
      const adapter = BUILT_IN.has(cli) ? `lib/agents/${cli}.ts` : `lib/agents/${cli}/`;
      assert.ok(page.includes(`\`${adapter}\``), `docs/agents/${cli}.md names its adapter, ${adapter}`);
    },
  },
  'docs/contract.md': {
    for: 'every CLI',
    check(cli) {
      assert.ok(rowOf('docs/contract.md', '| `--cli` |').includes(`\`${cli}\``), 'the --cli row');
      assert.match(rowOf('docs/contract.md', '| `E_CLI_UNKNOWN` |'), word(cli), 'the E_CLI_UNKNOWN row');
    },
  },
  'docs/verbs/start-subagent.md': {
    for: 'every CLI',
    check: (cli) => assert.ok(rowOf('docs/verbs/start-subagent.md', '| `--cli CLI` |').includes(`\`${cli}\``)),
  },
  'docs/verbs/subagent-status.md': {
    for: 'every CLI',
    check: (cli) => assert.ok(rowOf('docs/verbs/subagent-status.md', '| `cli` |').includes(`\`${cli}\``)),
  },
  'docs/schemas/status.schema.json': {
    for: 'every CLI',
    check(cli) {
      const schema = JSON.parse(read('docs/schemas/status.schema.json')) as { $defs: { cli: { enum: string[] } } };
      assert.ok(schema.$defs.cli.enum.includes(cli));
    },
  },
  'lib/commands/options.ts': {
    for: 'every CLI',
    check(cli) {
      // The option lines of start-subagent --help are made from the options table (lib/commands/options.ts).
      const line = helpLines('start')
        .split('\n')
        .find((l) => l.includes('--cli CLI'));
      assert.ok(line, 'start-subagent --help has a --cli CLI line');
      assert.match(line, word(cli));
    },
  },
  'test/fixtures/agents/<cli>/': {
    for: 'external CLIs',
    check(cli) {
      const files = readdirSync(join(ROOT, 'test/fixtures/agents', cli));
      assert.ok(files.length > 0, `test/fixtures/agents/${cli}/ holds captured output`);
    },
  },
  'test/fixtures/agents/README.md': {
    for: 'external CLIs',
    check: (cli) => assert.ok(read('test/fixtures/agents/README.md').includes(`\n| \`${cli}/`), `a row for ${cli}/`),
  },
  'test/unit/<cli>-adapter.test.ts': {
    for: 'external CLIs',
    check(cli) {
      const text = read(`test/unit/${cli}-adapter.test.ts`);
      assert.ok(text.includes(`'fixtures', 'agents', '${cli}'`), `test/unit/${cli}-adapter.test.ts reads test/fixtures/agents/${cli}/`);
    },
  },
  'test/cli/agent-clis.test.ts': {
    for: 'external CLIs',
    check: (cli) => assert.ok(read('test/cli/agent-clis.test.ts').includes(`{ cli: '${cli}', fixture: '${cli}/`), `a CLIS row for ${cli}`),
  },
  'test/e2e/<cli>.test.ts': {
    for: 'external CLIs',
    check(cli) {
      const text = read(`test/e2e/${cli}.test.ts`);
      assert.match(text, /from '\.\.\/fakes\/[\w-]+\.js'/, 'it runs against a fake server of test/fakes/');
      assert.match(
        text,
        // A protocol adapter's agents are the pinned CLIs: it needs the one each test drives.
        new RegExp(`(requireCli|fakeWorld)\\(t, '${PROTOCOL.has(cli) ? '\\w+' : escapeRegex(cli)}'[,)]`),
        'it needs the pinned CLI (skip, or fail under CI), at each pinned version it runs',
      );
    },
  },
  'test/e2e/contract/<cli>.ts': {
    for: 'external CLIs',
    check(cli) {
      assert.ok(read(`test/e2e/contract/${cli}.ts`).includes(`cli: '${cli}'`), `test/e2e/contract/${cli}.ts holds ${cli}'s row`);
      assert.match(read('test/e2e/contract/rows.ts'), new RegExp(`from '\\./${escapeRegex(cli)}\\.js'`), `test/e2e/contract/rows.ts lists ${cli}'s row`);
    },
  },
  'test/fakes/env.ts': {
    for: 'external CLIs',
    check(cli) {
      const text = read('test/fakes/env.ts');
      assert.ok(text.includes(`export function ${cli}Setup(`), `${cli}Setup`);
      assert.match(rowOf('test/fakes/env.ts', 'export type CliName ='), new RegExp(`'${escapeRegex(cli)}'`));
    },
  },
  'test/clis/pins.json': {
    for: 'external CLIs',
    check(cli, adapter) {
      const pins = JSON.parse(read('test/clis/pins.json')) as Record<string, { package?: unknown; versions?: unknown }>;
      const pin = pins[cli];
      assert.ok(pin, `a "${cli}" entry`);
      assert.ok(typeof pin.package === 'string' && pin.package !== '', 'its npm package');
      assert.ok(Array.isArray(pin.versions) && pin.versions.length > 0 && pin.versions.every((v) => /^\d+\.\d+\.\d+/.test(String(v))), 'its exact versions');
      assert.equal(adapter.program, cli, 'install.sh installs the program named as the CLI (test/.clis/<cli>-<version>/node_modules/.bin/<cli>)');
    },
  },
};

/** The loaders of lib/agents/index.ts, as written. */
function loaders(): Array<{ name: string; module: string; export: string }> {
  const out = [];
  for (const m of read('lib/agents/index.ts').matchAll(/^\s+(\w+): async \(\) => \(await import\('([^']+)'\)\)\.(\w+),$/gm)) {
    out.push({ name: m[1]!, module: m[2]!, export: m[3]! });
  }
  return out;
}

test('lib/agents/index.ts registers exactly CLI_NAMES, and lib/agents/ holds no adapter it does not register', () => {
  assert.deepEqual(
    loaders()
      .map((l) => l.name)
      .sort(),
    [...CLI_NAMES].sort(),
  );
  for (const e of readdirSync(join(ROOT, 'lib/agents'), { withFileTypes: true })) {
    if (e.isDirectory() && e.name === SHARED) continue;
    if (e.isDirectory())
      assert.ok((CLI_NAMES as readonly string[]).includes(e.name) && !BUILT_IN.has(e.name), `lib/agents/${e.name}/ is a registered external CLI`);
    else if (!['index.ts', 'names.ts', 'types.ts'].includes(e.name))
      assert.ok(BUILT_IN.has(e.name.replace(/\.ts$/, '')), `lib/agents/${e.name} is a built-in adapter`);
  }
});

test(`the checklist of ${GUIDE} and this test name the same things`, () => {
  const rows = tableRows(section('Checklist'));
  const listed = rows.map(([, where, forWhom]) => {
    const path = codeSpan(where ?? '');
    assert.ok(path, `a checklist row's "where" is one path in backquotes: ${where}`);
    return [path, forWhom];
  });
  assert.deepEqual(Object.fromEntries(listed), Object.fromEntries(Object.entries(CHECKS).map(([where, c]) => [where, c.for])));
});

for (const cli of CLI_NAMES) {
  test(`${cli}: everything ${GUIDE} says an adapter has`, async () => {
    const adapter = await loadAdapter(cli);
    assert.equal(adapter.cli, cli);
    const kind: For = BUILT_IN.has(cli) ? 'built-in CLIs' : 'external CLIs';
    for (const [where, c] of Object.entries(CHECKS)) {
      if (c.for !== 'every CLI' && c.for !== kind) continue;
      if (PROTOCOL.has(cli) && NOT_FOR_PROTOCOL.has(where)) continue;
      try {
        await c.check(cli, adapter);
      } catch (err) {
        throw new Error(`${cli}: ${where.replaceAll('<cli>', cli)}: ${(err as Error).message}`);
      }
    }
  });
}

test(`the code examples of ${GUIDE} are the code (so they compile: tsc builds it)`, () => {
  const text = read(GUIDE);
  const blocks = [...text.matchAll(/<!-- (file|in): (\S+) -->\n```ts\n([\s\S]*?)```\n/g)];
  assert.ok(blocks.length >= 2, 'the guide shows an adapter and its registration');
  assert.equal(blocks.length, (text.match(/```ts\n/g) ?? []).length, 'every ts block says which file it comes from');
  for (const [, how, path, code] of blocks) {
    const file = read(path!);
    if (how === 'file') assert.equal(code, file, `${GUIDE} shows ${path} as it is`);
    else for (const line of code!.split('\n').filter((l) => l.trim())) assert.ok(file.split('\n').includes(line), `${path} has the line ${line}`);
  }
});

/** Every interface of lib/agents/types.ts, with its members and whether each has a doc comment. */
function interfaces(): Map<string, Map<string, boolean>> {
  const source = ts.createSourceFile('types.ts', read('lib/agents/types.ts'), ts.ScriptTarget.Latest, true);
  const out = new Map<string, Map<string, boolean>>();
  for (const s of source.statements) {
    if (!ts.isInterfaceDeclaration(s)) continue;
    const members = new Map<string, boolean>();
    for (const m of s.members) members.set(m.name!.getText(source), ts.getJSDocCommentsAndTags(m).length > 0);
    out.set(s.name.text, members);
  }
  return out;
}

test('every member of the adapter interface and of the types it uses has a doc comment', () => {
  const all = interfaces();
  assert.ok(all.has('AgentAdapter') && all.size >= 8, 'the interfaces of lib/agents/types.ts');
  const bare = [...all].flatMap(([name, members]) => [...members].filter(([, doc]) => !doc).map(([m]) => `${name}.${m}`));
  assert.deepEqual(bare, []);
});

test(`${GUIDE}'s table of the interface has a row per member of AgentAdapter`, () => {
  const members = [...interfaces().get('AgentAdapter')!.keys()];
  const rows = tableRows(section('3. The interface')).map(([m]) => codeSpan(m ?? ''));
  assert.deepEqual(rows, members);
});
