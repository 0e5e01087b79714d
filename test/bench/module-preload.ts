/**
 * `--import` preload (given through NODE_OPTIONS, so the supervisor a start spawns inherits it): registers
 * ./module-hooks.js for ES modules, and at exit writes the CommonJS modules of require.cache (which the
 * ESM hooks of Node 20 do not see) and the built-ins they require to $BENCH_MODULE_LOG_DIR/<pid>.cjs,
 * with argv[1] in <pid>.argv.
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
  // Built-ins a CommonJS module requires (the supervisor is one) are in no cache; count them here.
  const Module = require('node:module') as typeof import('node:module') & { prototype: { require: (id: string) => unknown } };
  const builtins = new Set<string>();
  const load = Module.prototype.require;
  Module.prototype.require = function (this: unknown, id: string) {
    if (Module.isBuiltin(id)) builtins.add(id.startsWith('node:') ? id : `node:${id}`);
    return load.call(this, id);
  };
  process.on('exit', () => {
    try {
      fs.appendFileSync(`${dir}/${process.pid}.cjs`, [...Object.keys(cache), ...builtins].join('\n') + '\n');
    } catch {}
  });
}
