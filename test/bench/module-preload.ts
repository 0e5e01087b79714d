/**
 * `--import` preload (given through NODE_OPTIONS, so the supervisor a start spawns inherits it): registers
 * ./module-hooks.js for ES modules, and at exit writes the CommonJS modules of require.cache (which the
 * ESM hooks of Node 20 do not see) to $BENCH_MODULE_LOG_DIR/<pid>.cjs, with argv[1] in <pid>.argv.
 * It imports only node:module as an ES module (fs comes through require), so that the verb's own
 * `import … from 'node:fs'` still reaches the hook and is counted.
 */
import { createRequire, register } from 'node:module';

const dir = process.env.BENCH_MODULE_LOG_DIR;
if (dir) {
  const require = createRequire(import.meta.url);
  const fs = require('node:fs') as typeof import('node:fs');
  register('./module-hooks.js', import.meta.url);
  fs.writeFileSync(`${dir}/${process.pid}.argv`, (process.argv[1] ?? '') + '\n');
  const cache = require.cache;
  process.on('exit', () => {
    try {
      fs.appendFileSync(`${dir}/${process.pid}.cjs`, Object.keys(cache).join('\n') + '\n');
    } catch {}
  });
}
