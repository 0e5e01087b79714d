// One bundled file per verb (and one for the supervisor): a verb's start-up then loads one module
// instead of ~30, which is most of what stands between it and `node -e 0` (docs/benchmarks.md).
// Each entry is bundled on its own with splitting, so the only chunks are the adapters it imports
// lazily: a verb loads a CLI's adapter — and that adapter's Node built-ins — only when it needs it.
import { build } from 'esbuild';
import { readdirSync, rmSync } from 'node:fs';
import { basename, join } from 'node:path';

const verbs = readdirSync('lib/verbs').filter((f) => f.endsWith('.ts')).map((f) => f.slice(0, -3));
const common = { bundle: true, platform: 'node', target: 'node20', legalComments: 'none', logLevel: 'warning' };
rmSync('dist/bin', { recursive: true, force: true });
await Promise.all([
  ...verbs.map((out) =>
    build({
      ...common,
      entryPoints: [{ in: `lib/verbs/${out}.ts`, out }],
      outdir: 'dist/bin',
      outExtension: { '.js': '.mjs' },
      splitting: true,
      chunkNames: `chunks/${out}/[name]-[hash]`,
      format: 'esm',
      define: { __SUPERVISOR_ENTRY__: '"./supervisor.cjs"' },
    }),
  ),
  bundleSupervisor(),
]);

/**
 * The supervisor, one resident process per run, is CommonJS: an ESM entry costs each one ~2 MB more
 * (the ESM loader and its threads). CommonJS has no splitting, so what it imports lazily (the
 * adapters) is bundled as files of their own, required when first used — as the verbs' chunks are.
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
