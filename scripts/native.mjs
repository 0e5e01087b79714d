// Builds the posix_spawn addon (lib/native/spawn.c → dist/bin/spawn.node) with the machine's C compiler
// against Node's own headers (Node-API: one build serves every Node of the same platform). Optional by
// design: without a compiler or the headers this warns, and start-subagent spawns its supervisor
// through libuv as Node does, a few ms slower (docs/design.md, "Starting a run").
import { execFileSync } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';

const root = join(import.meta.dirname ?? new URL('.', import.meta.url).pathname, '..');
const out = join(root, 'dist', 'bin', 'spawn.node');
const source = join(root, 'lib', 'native', 'spawn.c');
// Node's installers put the headers at <prefix>/include/node (Debian's nodejs: /usr/include/node).
const includes = [join(dirname(dirname(process.execPath)), 'include', 'node'), '/usr/include/node', '/usr/local/include/node'].filter((d) => existsSync(join(d, 'node_api.h')));
const cc = process.env.CC || 'cc';

rmSync(out, { force: true });
if (includes.length === 0) {
  console.warn(`scripts/native.mjs: no node_api.h next to ${process.execPath}; start-subagent will spawn through libuv (a few ms slower)`);
} else {
  try {
    execFileSync(cc, ['-O2', '-Wall', '-Werror', '-shared', '-fPIC', '-fvisibility=hidden', `-I${includes[0]}`, '-o', out, source], { stdio: ['ignore', 'inherit', 'inherit'] });
  } catch (err) {
    rmSync(out, { force: true });
    console.warn(`scripts/native.mjs: could not build ${out} with ${cc} (${err.message.split('\n')[0]}); start-subagent will spawn through libuv (a few ms slower)`);
  }
}
