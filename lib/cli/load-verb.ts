import { readFileSync, statSync, writeFileSync, renameSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Script } from 'node:vm';

/**
 * Loads a verb's bundle (dist/bin/<verb>.cjs) the way require() would, but hands V8 the code cache that
 * `make build` made for it (<verb>.cjs.cache): compiling a 100+ KiB bundle, and the functions a verb runs,
 * is the largest piece of a verb's start-up that is ours (docs/benchmarks.md). Node 20 has no compile
 * cache of its own for user code (module.enableCompileCache is Node 22).
 *
 * A cache is only a cache: one that is missing, made for another bundle (its header names the bundle's
 * size and mtime, since V8 itself checks little more than the source's length), or rejected by V8
 * (another Node version, other V8 flags) is ignored, and the bundle compiles as it always did.
 */
export function loadVerb(dir: string, verb: string): { main(): unknown } {
  const file = `${dir}/${verb}.cjs`;
  const source = readFileSync(file, 'utf8');
  const cachedData = cacheFor(file);
  const script = new Script(wrapCommonJs(source), { filename: file, cachedData });
  const mod = { exports: {} as { main(): unknown } };
  (script.runInThisContext() as (...a: unknown[]) => void).call(mod.exports, mod.exports, createRequire(file), mod, file, dir);
  // The build's training runs (scripts/code-cache.mjs) write the cache once the verb has done its work,
  // so that it holds the functions the verb really ran, not only its top level.
  if (process.env.SUBAGENT_BUILD_CODE_CACHE === '1') process.once('exit', () => writeCache(file, script));
  return mod.exports;
}

/** What require() does to a CommonJS file before compiling it (Module.wrap). */
export function wrapCommonJs(source: string): string {
  return `(function (exports, require, module, __filename, __dirname) { ${source}\n});`;
}

function header(file: string): string {
  const s = statSync(file);
  return `subagents-code-cache ${process.version} ${s.size} ${s.mtimeMs}\n`;
}

/** The verb's code cache, when its header says it was made for this bundle by this Node. */
export function cacheFor(file: string): Buffer | undefined {
  let data: Buffer;
  try {
    data = readFileSync(`${file}.cache`);
  } catch {
    return undefined;
  }
  const nl = data.indexOf(10);
  if (nl === -1 || data.toString('latin1', 0, nl + 1) !== header(file)) return undefined;
  return data.subarray(nl + 1);
}

function writeCache(file: string, script: Script): void {
  const tmp = `${file}.cache.tmp-${process.pid}`;
  writeFileSync(tmp, Buffer.concat([Buffer.from(header(file), 'latin1'), script.createCachedData()]));
  renameSync(tmp, `${file}.cache`);
}
