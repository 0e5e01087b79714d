import { existsSync, lstatSync, realpathSync, statSync, type Stats } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';

export const REGISTRY_DIRNAME = '.subagents';

export interface RegistryLocation {
  path: string;
  source: 'flag' | 'env' | 'ancestor' | 'cwd';
  /** Ancestors' `.subagents` passed over on the way up: another user's, or a symlink of another user's (never followed). */
  skipped?: string[];
}

/**
 * `--registry` > SUBAGENT_DIR (or OPENCODE_PSA_DIR) > nearest ancestor holding .subagents/ > ./.subagents/.
 *
 * Walking up stops where git's discovery does (docs/security.md): at a filesystem boundary, after the
 * user's home, and before a directory of SUBAGENT_CEILING_DIRECTORIES (a colon-separated list of
 * absolute paths, like GIT_CEILING_DIRECTORIES). A `.subagents` that another user owns — or a symlink
 * another user planted, or one that leads to another user's directory — is passed over, not followed
 * and not failed on: a shared directory above you cannot stop your start nor send it elsewhere.
 */
export function locateRegistry(explicit: string | undefined, env: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): RegistryLocation {
  if (explicit !== undefined && explicit !== '') return { path: canonical(resolve(cwd, explicit)), source: 'flag' };
  const fromEnv = env.SUBAGENT_DIR || env.OPENCODE_PSA_DIR;
  if (fromEnv) return { path: canonical(resolve(cwd, fromEnv)), source: 'env' };
  const uid = process.getuid?.();
  const home = env.HOME ? canonical(resolve(env.HOME)) : null;
  const ceilings = new Set(
    (env.SUBAGENT_CEILING_DIRECTORIES ?? '')
      .split(':')
      .filter((d) => isAbsolute(d))
      .map((d) => canonical(resolve(d))),
  );
  const skipped: string[] = [];
  const start = canonical(cwd);
  let dir = start;
  let dev = statOf(dir)?.dev;
  for (;;) {
    const candidate = join(dir, REGISTRY_DIRNAME);
    const verdict = inspect(candidate, uid);
    if (verdict === 'use') return { path: canonical(candidate), source: 'ancestor', ...(skipped.length ? { skipped } : {}) };
    if (verdict === 'skip') skipped.push(candidate);
    if (dir === home) break;
    const up = dirname(dir);
    if (up === dir || ceilings.has(up)) break;
    const upDev = statOf(up)?.dev;
    if (upDev === undefined || upDev !== dev) break;
    dev = upDev;
    dir = up;
  }
  return { path: join(start, REGISTRY_DIRNAME), source: 'cwd', ...(skipped.length ? { skipped } : {}) };
}

/** A `.subagents` found on the way up: ours to use, another user's to pass over, or nothing there. */
function inspect(candidate: string, uid: number | undefined): 'use' | 'skip' | 'none' {
  let l: Stats;
  try {
    l = lstatSync(candidate);
  } catch {
    return 'none';
  }
  const mine = (st: Stats) => uid === undefined || st.uid === uid;
  if (l.isDirectory()) return mine(l) ? 'use' : 'skip';
  if (!l.isSymbolicLink()) return 'none';
  if (!mine(l)) return 'skip';
  const target = statOf(candidate);
  if (!target?.isDirectory()) return 'none';
  return mine(target) ? 'use' : 'skip';
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

function statOf(path: string): Stats | null {
  try {
    return statSync(path);
  } catch {
    return null;
  }
}
