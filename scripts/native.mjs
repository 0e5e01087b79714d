// Builds the Node-API addon (lib/native/*.c → dist/bin/native.node) with the machine's C compiler
// against Node's own headers (Node-API: one build serves every Node of the same platform). Optional by
// design: without a compiler or the headers this warns, start-subagent spawns its supervisor through
// libuv as Node does and status proves its cache through fs (docs/design.md, "Starting a run" and "The
// status cache"), a few ms slower each.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';

const root = join(import.meta.dirname ?? new URL('.', import.meta.url).pathname, '..');
const out = join(root, 'dist', 'bin', 'native.node');
const native = join(root, 'lib', 'native');
const sources = readdirSync(native).filter((f) => f.endsWith('.c')).sort().map((f) => join(native, f));
// Node's installers put the headers at <prefix>/include/node (Debian's nodejs: /usr/include/node).
const includes = [join(dirname(dirname(process.execPath)), 'include', 'node'), '/usr/include/node', '/usr/local/include/node'].filter((d) => existsSync(join(d, 'node_api.h')));
const cc = process.env.CC || 'cc';

rmSync(out, { force: true });
if (includes.length === 0) {
  console.warn(`scripts/native.mjs: no node_api.h next to ${process.execPath}; start-subagent will spawn through libuv and status prove its cache through fs (a few ms slower)`);
} else {
  try {
    execFileSync(cc, ['-O2', '-Wall', '-Werror', '-shared', '-fPIC', '-fvisibility=hidden', `-I${includes[0]}`, '-o', out, ...sources], { stdio: ['ignore', 'inherit', 'inherit'] });
  } catch (err) {
    rmSync(out, { force: true });
    console.warn(`scripts/native.mjs: could not build ${out} with ${cc} (${err.message.split('\n')[0]}); start-subagent will spawn through libuv and status prove its cache through fs (a few ms slower)`);
  }
}
