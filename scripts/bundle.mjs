// One bundled file per verb (and one for the supervisor): a verb's start-up then loads one module
// instead of ~30, which is most of what stands between it and `node -e 0` (docs/benchmarks.md).
// Each entry is bundled on its own with splitting, so the only chunks are the adapters it imports
// lazily: a verb loads a CLI's adapter — and that adapter's Node built-ins — only when it needs it.
import { build } from 'esbuild';
import { readdirSync, rmSync } from 'node:fs';

const verbs = readdirSync('lib/verbs').filter((f) => f.endsWith('.ts')).map((f) => f.slice(0, -3));
const entries = [...verbs.map((v) => [v, `lib/verbs/${v}.ts`]), ['supervisor', 'lib/supervisor/main.ts']];
rmSync('dist/bin', { recursive: true, force: true });
await Promise.all(
  entries.map(([out, entry]) =>
    build({
      entryPoints: [{ in: entry, out }],
      outdir: 'dist/bin',
      outExtension: { '.js': '.mjs' },
      bundle: true,
      splitting: true,
      chunkNames: `chunks/${out}/[name]-[hash]`,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      define: { __SUPERVISOR_ENTRY__: '"./supervisor.mjs"' },
      legalComments: 'none',
      logLevel: 'warning',
    }),
  ),
);
