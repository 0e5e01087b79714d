// One bundled file per verb (and one for the supervisor): a verb's start-up then loads one module
// instead of ~30, which is most of what stands between it and `node -e 0` (docs/benchmarks.md).
// Verbs are CommonJS, required by their CommonJS shims (bin/package.json): Node's ESM loader costs a
// verb ~10 ms of start-up that require() does not (docs/benchmarks.md). A CLI's adapter is imported
// lazily; esbuild inlines it behind an init function, so its code and its Node built-ins run only
// when a verb needs that CLI.
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
rmSync('dist/bin', { recursive: true, force: true });
await Promise.all([
  ...verbs.map((v) =>
    build({
      ...common,
      entryPoints: [{ in: `lib/verbs/${v}.ts`, out: v }],
      outdir: 'dist/bin',
      outExtension: { '.js': '.cjs' },
      format: 'cjs',
      // lib/supervisor/spawn.ts finds the supervisor next to the verb through import.meta.url.
      define: { __SUPERVISOR_ENTRY__: '"./supervisor.cjs"', __NATIVE_ADDON__: '"./native.node"', 'import.meta.url': '__import_meta_url' },
      banner: { js: 'var __import_meta_url = require("node:url").pathToFileURL(__filename).href;' },
    }),
  ),
  bundleSupervisor(),
  // bin/<verb> loads its bundle through this, with the V8 code cache scripts/code-cache.mjs makes.
  build({ ...common, entryPoints: [{ in: 'lib/cli/load-verb.ts', out: 'load' }], outdir: 'dist/bin', outExtension: { '.js': '.cjs' }, format: 'cjs' }),
]);
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

/**
 * The supervisor, one resident process per run, is CommonJS: an ESM entry costs each one ~2 MB more
 * (the ESM loader and its threads). CommonJS has no splitting, so what it imports lazily (the
 * adapters) is bundled as files of their own, required when first used: a run loads only its own CLI's adapter.
 */
async function bundleSupervisor() {
  const lazy = new Map();
  const splitLazy = {
    name: 'split-lazy',
    setup(b) {
      b.onResolve({ filter: /^\./ }, (a) => {
        if (a.kind !== 'dynamic-import') return undefined;
        const name = basename(a.path, '.js');
        lazy.set(name, join(a.resolveDir, `${name}.ts`));
        return { path: `./chunks/supervisor/${name}.cjs`, external: true };
      });
    },
  };
  // import() would bring the ESM loader back; esbuild turns it into require() when told it is unsupported.
  const cjs = { ...common, outdir: 'dist/bin', outExtension: { '.js': '.cjs' }, format: 'cjs', supported: { 'dynamic-import': false } };
  await build({ ...cjs, entryPoints: [{ in: 'lib/supervisor/main.ts', out: 'supervisor' }], plugins: [splitLazy] });
  await build({ ...cjs, entryPoints: [...lazy].map(([name, path]) => ({ in: path, out: `chunks/supervisor/${name}` })) });
}
