// One bundled file per verb (and one for the supervisor): a verb's start-up then loads one module
// instead of ~60, which is most of what stands between it and `node -e 0` (docs/benchmarks.md).
// Verbs are CommonJS, required by their CommonJS shims (bin/package.json): Node's ESM loader costs a
// verb start-up time that require() does not. Node's own compile cache (module.enableCompileCache, in
// the shims) keeps what V8 compiled of a bundle for the next run of the same Node.
import { build } from 'esbuild';
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const verbs = readdirSync('lib/verbs')
  .filter((f) => f.endsWith('.ts'))
  .map((f) => f.slice(0, -3));
// import() would bring the ESM loader back; esbuild turns it into require() when told it is unsupported.
const common = {
  bundle: true,
  platform: 'node',
  target: 'node22',
  legalComments: 'none',
  logLevel: 'warning',
  outdir: 'dist/bin',
  outExtension: { '.js': '.cjs' },
  format: 'cjs',
  supported: { 'dynamic-import': false },
  // import.meta.url (a file URL, made only where it is read: createRequire of lazy modules) and the
  // supervisor's bundle, which lies next to each verb's (lib/supervisor/spawn.ts): plain paths.
  banner: { js: 'var __bundle = { supervisor: __dirname + "/supervisor.cjs", get url() { return require("node:url").pathToFileURL(__filename).href; } };' },
  define: { __SUPERVISOR_ENTRY__: '__bundle.supervisor', 'import.meta.url': '__bundle.url' },
};
rmSync('dist/bin', { recursive: true, force: true });
await Promise.all([
  ...verbs.map((v) =>
    build({
      ...common,
      entryPoints: [{ in: `lib/verbs/${v}.ts`, out: v }],
    }),
  ),
  // The supervisor, one resident process per run, is CommonJS too: an ESM entry costs each one ~2 MB
  // more (the ESM loader and its threads).
  build({ ...common, entryPoints: [{ in: 'lib/supervisor/main.ts', out: 'supervisor' }] }),
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
    if (/[^\x00-\x7f]/.test(text))
      writeFileSync(
        file,
        text.replace(/[^\x00-\x7f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`),
      );
  }
}
