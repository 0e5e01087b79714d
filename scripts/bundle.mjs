// One bundled file per verb (and one for the supervisor): a verb's start-up then loads one module
// instead of ~30, which is most of what stands between it and `node -e 0` (docs/benchmarks.md).
// Verbs are CommonJS, required by their CommonJS shims (bin/package.json): Node's ESM loader costs a
// verb ~10 ms of start-up that require() does not (docs/benchmarks.md). A CLI's adapter is imported
// lazily, and (but for the tiny built-in shell) bundled as a chunk of its own, dist/bin/chunks/<cli>.cjs,
// required when first used: the verbs and the supervisor load only the adapter of the CLI they touch,
// and a verb's bundle is not 60 KiB of other CLIs' code longer (its source is read and held by every
// run of it: ~2 ms of a status listing).
import { build } from 'esbuild';
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';

const verbs = readdirSync('lib/verbs').filter((f) => f.endsWith('.ts')).map((f) => f.slice(0, -3));
const common = {
  bundle: true,
  platform: 'node',
  target: 'node20',
  legalComments: 'none',
  logLevel: 'warning',
};
/** What a verb's bundle knows of where it lies (see the defines below). */
const BUNDLE_BANNER =
  'var __bundle = { supervisor: __dirname + "/supervisor.cjs", addon: __dirname + "/native.node", get url() { return require("node:url").pathToFileURL(__filename).href; } };';
/** The adapters imported lazily (import('./x.js')) by any bundle: name → source. */
const lazy = new Map();
/** Adapters small and common enough to stay in the bundles: the default CLI. */
const INLINE = new Set(['shell']);
const splitLazy = {
  name: 'split-lazy',
  setup(b) {
    b.onResolve({ filter: /^\./ }, (a) => {
      if (a.kind !== 'dynamic-import') return undefined;
      const name = basename(a.path, '.js');
      if (INLINE.has(name)) return undefined;
      lazy.set(name, join(a.resolveDir, `${name}.ts`));
      return { path: `./chunks/${name}.cjs`, external: true };
    });
  },
};
// import() would bring the ESM loader back; esbuild turns it into require() when told it is unsupported.
const cjs = { ...common, outdir: 'dist/bin', outExtension: { '.js': '.cjs' }, format: 'cjs', supported: { 'dynamic-import': false }, plugins: [splitLazy] };
rmSync('dist/bin', { recursive: true, force: true });
await Promise.all([
  ...verbs.map((v) =>
    build({
      ...cjs,
      entryPoints: [{ in: `lib/verbs/${v}.ts`, out: v }],
      // The supervisor's bundle and the addon lie next to the verb's (lib/supervisor/spawn.ts, lib/native/addon.ts):
      // plain paths, not URLs — import.meta.url (a file URL made at start-up, ~0.2 ms) only where it is read.
      define: { __SUPERVISOR_ENTRY__: '__bundle.supervisor', __NATIVE_ADDON__: '__bundle.addon', 'import.meta.url': '__bundle.url' },
      banner: { js: BUNDLE_BANNER },
    }),
  ),
  // The supervisor, one resident process per run, is CommonJS too: an ESM entry costs each one ~2 MB
  // more (the ESM loader and its threads).
  build({ ...cjs, entryPoints: [{ in: 'lib/supervisor/main.ts', out: 'supervisor' }] }),
  // bin/<verb> loads its bundle through this, with the V8 code cache scripts/code-cache.mjs makes.
  build({ ...common, entryPoints: [{ in: 'lib/cli/load-verb.ts', out: 'load' }], outdir: 'dist/bin', outExtension: { '.js': '.cjs' }, format: 'cjs' }),
]);
// One chunk per split adapter, shared by every bundle. Each has its own copy of what it imports
// (errors.ts: SubagentError is recognised across copies by a brand).
await build({ ...cjs, plugins: [], entryPoints: [...lazy].map(([name, path]) => ({ in: path, out: `chunks/${name}` })) });
asciiOnly('dist/bin');

/**
 * esbuild escapes non-ASCII characters in strings and regexes (charset ascii), but keeps the comments it
 * keeps (on class fields) as they are. One such character makes V8 hold a verb's whole source as a
 * two-byte string (twice the memory, and slower to scan), so they are escaped too: in a comment an
 * escape is as good as the character.
 */
function asciiOnly(dir) {
  for (const entry of readdirSync(dir, { recursive: true })) {
    if (!entry.endsWith('.cjs')) continue;
    const file = join(dir, entry);
    const text = readFileSync(file, 'utf8');
    if (/[^\x00-\x7f]/.test(text)) writeFileSync(file, text.replace(/[^\x00-\x7f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`));
  }
}
