// Makes the V8 code cache of every verb (dist/bin/<verb>.cjs.cache, read by lib/cli/load-verb.ts): each
// verb does its real work once, on a throw-away registry with the built-in shell CLI, and writes the
// cache of what it compiled as it exits. Then every cache is checked to be accepted by this Node.
// A failure here only costs speed, never correctness: it warns and leaves the verbs without a cache.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Script } from 'node:vm';

const root = join(import.meta.dirname ?? new URL('.', import.meta.url).pathname, '..');
const distBin = join(root, 'dist', 'bin');
const area = mkdtempSync(join(tmpdir(), 'subagents-code-cache-'));
const registry = join(area, 'registry');
const env = { ...process.env, SUBAGENT_BUILD_CODE_CACHE: '1' };
for (const k of Object.keys(env)) if (/^(SUBAGENT_(?!BUILD_CODE_CACHE)|OPENCODE_PSA_)/.test(k)) delete env[k];

const verb = (name, ...args) => execFileSync(process.execPath, [join(root, 'bin', name), '--registry', registry, ...args], { env, cwd: area, stdio: ['ignore', 'pipe', 'pipe'] });
const verbs = ['start-subagent', 'status', 'result', 'search', 'resume-subagent', 'cancel'];
try {
  for (const v of verbs) rmSync(join(distBin, `${v}.cjs.cache`), { force: true });
  // The last run of a verb writes its cache, so each verb's commonest path runs last.
  verb('start-subagent', '--cli', 'shell', '--name', 'b', '--prompt', 'sleep 30');
  verb('cancel', '--name', 'b');
  verb('status', '--wait-terminal', '--name', 'b');
  verb('start-subagent', '--cli', 'shell', '--name', 'a', '--prompt', 'echo trained');
  verb('status', '--wait-terminal', '--name', 'a');
  verb('resume-subagent', '--name', 'a', '--prompt', 'echo again');
  verb('status', '--wait-terminal', '--name', 'a');
  verb('result', '--name', 'a');
  verb('search', '--name', 'a', '--pattern', 'train|again');
  verb('status');
  const { cacheFor, wrapCommonJs } = await import(join(root, 'dist', 'lib', 'cli', 'load-verb.js'));
  const missing = [];
  for (const v of verbs) {
    const file = join(distBin, `${v}.cjs`);
    const cachedData = cacheFor(file);
    if (cachedData && !new Script(wrapCommonJs(readFileSync(file, 'utf8')), { filename: file, cachedData }).cachedDataRejected) continue;
    missing.push(v);
    rmSync(`${file}.cache`, { force: true });
  }
  if (missing.length) console.warn(`scripts/code-cache.mjs: no usable code cache for ${missing.join(', ')}; those verbs start a little slower`);
} catch (err) {
  console.warn(`scripts/code-cache.mjs: could not make the code caches (${err.message.split('\n')[0]}); the verbs start a little slower`);
} finally {
  rmSync(area, { recursive: true, force: true, maxRetries: 10 });
}
