/**
 * The Nodes the bench measures (the main one first on PATH, the others of SUBAGENT_BENCH_NODES) and the
 * fast paths' environments: the plain paths, all on but one.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, realpathSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';

import { log, problems } from './setup.js';
import { ROOT, cleanEnv, useNode, which, q } from './util.js';

export interface NodeBin {
  exec: string;
  version: string;
  /** a short tag for file names: v24 */
  tag: string;
}

function nodeAt(path: string): NodeBin | null {
  let exec = resolve(path);
  try {
    if (statSync(exec).isDirectory()) exec = join(exec, 'node');
    statSync(exec);
  } catch {
    return null;
  }
  const r = spawnSync(exec, ['-p', 'process.version'], { encoding: 'utf8', env: cleanEnv() });
  const version = r.stdout?.trim() ?? '';
  if (r.status !== 0 || !/^v\d+/.test(version)) return null;
  return { exec, version, tag: version.split('.')[0]! };
}

const onPath = which('node');
export const MAIN: NodeBin = (onPath && nodeAt(onPath)) || nodeAt(process.execPath)!;
if (!onPath) problems.push(`no \`node\` on PATH: the bench measures the Node running it (${process.execPath})`);
useNode(MAIN.exec);
export const mainIsSelf = (() => {
  try {
    return realpathSync(MAIN.exec) === realpathSync(process.execPath);
  } catch {
    return false;
  }
})();
export const OTHERS: NodeBin[] = [];
for (const p of (process.env.SUBAGENT_BENCH_NODES ?? '')
  .split(':')
  .map((s) => s.trim())
  .filter(Boolean)) {
  const n = nodeAt(p);
  if (!n) problems.push(`SUBAGENT_BENCH_NODES: \`${p}\` is not a Node that runs (skipped)`);
  else if (n.version === MAIN.version || OTHERS.some((o) => o.version === n.version))
    log(`SUBAGENT_BENCH_NODES: ${p} is ${n.version}, already measured (skipped)`);
  else OTHERS.push(n);
}
log(`main Node: ${MAIN.version} (${MAIN.exec}); beside it: ${OTHERS.map((o) => o.version).join(', ') || 'none (SUBAGENT_BENCH_NODES unset)'}`);

// ------------------------------------------------------------------------------------- fast paths

/** The fast paths lib/base/fast-paths.ts names (read from its source: the bench does not import the product). */
export const FAST_PATHS: string[] = (() => {
  try {
    const m = /export type FastPath\s*=\s*([^;]+);/.exec(readFileSync(join(ROOT, 'lib/base/fast-paths.ts'), 'utf8'));
    return m ? [...m[1]!.matchAll(/'([a-z0-9-]+)'/g)].map((x) => x[1]!) : [];
  } catch {
    return [];
  }
})();
if (!FAST_PATHS.length) problems.push('no fast path found in lib/base/fast-paths.ts (`export type FastPath = …`): the A/B section has nothing to turn off');
/** SUBAGENT_FAST_PATHS=0: every fast path off, the plain paths. */
export const PLAIN: Record<string, string> = { SUBAGENT_FAST_PATHS: '0' };
/** Every fast path on but one. */
export const without = (fp: string): Record<string, string> => ({ SUBAGENT_FAST_PATHS: FAST_PATHS.filter((x) => x !== fp).join(',') || '0' });
export const shellEnv = (env: Record<string, string>) =>
  Object.entries(env)
    .map(([k, v]) => `${k}=${q(v)} `)
    .join('');
