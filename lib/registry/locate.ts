import { existsSync, realpathSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

export const REGISTRY_DIRNAME = '.subagents';

export interface RegistryLocation {
  path: string;
  source: 'flag' | 'env' | 'ancestor' | 'cwd';
}

/** `--registry` > SUBAGENT_DIR (or OPENCODE_PSA_DIR) > nearest ancestor holding .subagents/ > ./.subagents/ */
export function locateRegistry(explicit: string | undefined, env: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): RegistryLocation {
  if (explicit !== undefined && explicit !== '') return { path: canonical(resolve(cwd, explicit)), source: 'flag' };
  const fromEnv = env.SUBAGENT_DIR || env.OPENCODE_PSA_DIR;
  if (fromEnv) return { path: canonical(resolve(cwd, fromEnv)), source: 'env' };
  let dir = canonical(cwd);
  for (;;) {
    const candidate = join(dir, REGISTRY_DIRNAME);
    if (isDir(candidate)) return { path: canonical(candidate), source: 'ancestor' };
    const up = dirname(dir);
    if (up === dir) break;
    dir = up;
  }
  return { path: join(canonical(cwd), REGISTRY_DIRNAME), source: 'cwd' };
}

/** A symlinked path and its target are the same registry: resolve what exists of the path. */
function canonical(path: string): string {
  if (existsSync(path)) {
    try {
      return realpathSync(path);
    } catch {
      return path;
    }
  }
  const parent = dirname(path);
  if (parent === path) return path;
  return join(canonical(parent), path.slice(parent.length + (parent.endsWith('/') ? 0 : 1)));
}

function isDir(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}
