// One bundled file per verb (and one for the supervisor): a verb's start-up then loads one module
// instead of ~30, which is most of what stands between it and `node -e 0` (docs/benchmarks.md).
import { build } from 'esbuild';
import { readdirSync } from 'node:fs';

const verbs = readdirSync('lib/verbs').filter((f) => f.endsWith('.ts')).map((f) => f.slice(0, -3));
await build({
  entryPoints: [...verbs.map((v) => ({ in: `lib/verbs/${v}.ts`, out: v })), { in: 'lib/supervisor/main.ts', out: 'supervisor' }],
  outdir: 'dist/bin',
  outExtension: { '.js': '.mjs' },
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  define: { __SUPERVISOR_ENTRY__: '"./supervisor.mjs"' },
  legalComments: 'none',
  logLevel: 'warning',
});
