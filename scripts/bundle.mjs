// One bundled file per verb (and one for the supervisor): a verb's start-up then loads one module
// instead of ~30, which is most of what stands between it and `node -e 0` (docs/benchmarks.md).
// Verbs are CommonJS, required by their CommonJS shims (bin/package.json): Node's ESM loader costs a
// verb ~10 ms of start-up that require() does not (docs/benchmarks.md). A CLI's adapter is imported
// lazily; esbuild inlines it behind an init function, so its code and its Node built-ins run only
// when a verb needs that CLI.
import { build } from 'esbuild';
import { readdirSync, rmSync } from 'node:fs';

const verbs = readdirSync('lib/verbs').filter((f) => f.endsWith('.ts')).map((f) => f.slice(0, -3));
const common = {
  outdir: 'dist/bin',
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
      outExtension: { '.js': '.cjs' },
      format: 'cjs',
      // lib/supervisor/spawn.ts finds the supervisor next to the verb through import.meta.url.
      define: { __SUPERVISOR_ENTRY__: '"./supervisor.mjs"', 'import.meta.url': '__import_meta_url' },
      banner: { js: 'var __import_meta_url = require("node:url").pathToFileURL(__filename).href;' },
    }),
  ),
  build({
    ...common,
    entryPoints: [{ in: 'lib/supervisor/main.ts', out: 'supervisor' }],
    outExtension: { '.js': '.mjs' },
    splitting: true,
    chunkNames: 'chunks/supervisor/[name]-[hash]',
    format: 'esm',
    define: { __SUPERVISOR_ENTRY__: '"./supervisor.mjs"' },
  }),
]);
