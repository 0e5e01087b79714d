import { existsSync, realpathSync, statSync, type Stats } from 'node:fs';
import { resolve } from 'node:path';
import { SubagentError, inRegistry, isErrno, unreadable } from '../base/errors.js';
import { locateRegistry } from '../registry/locate.js';
import { refuseForeign } from '../registry/private.js';
import { prepareRegistry, trustOf, type Found, type Trust } from '../registry/trust.js';

/**
 * Where a command runs: every options object may hold it (docs/library.md, "Context"). The verbs
 * leave `env` and `cwd` out (the process's own) and pass `registry` from --registry.
 */
export interface Context {
  /** The registry directory, like --registry (relative: against `cwd`); default SUBAGENT_DIR, the nearest .subagents/ above `cwd`, else `cwd`/.subagents. */
  registry?: string | undefined;
  /** The environment the SUBAGENT_* defaults come from, and that a started run inherits (default process.env). */
  env?: NodeJS.ProcessEnv | undefined;
  /** The caller's directory: registry discovery and relative paths start here (default process.cwd()). */
  cwd?: string | undefined;
}

/** A Context with its defaults filled in and its registry located: what a command works with. */
export interface Place {
  registry: string;
  env: NodeJS.ProcessEnv;
  cwd: string;
  /** How the registry was found: named (`flag`, `env`) or discovered (`ancestor`, `cwd`). */
  found: Found;
  /** Adopts a registry named explicitly (writes its marker): called once a run is published in it. */
  adopt: () => void;
}

/** The caller's environment and directory, defaults filled in (before the registry is needed). */
export function callerOf(ctx: Context): { env: NodeJS.ProcessEnv; cwd: string } {
  return { env: ctx.env ?? process.env, cwd: ctx.cwd ?? process.cwd() };
}

/**
 * Locates the registry once, at a command's entrance, after its options were checked. A registry
 * named explicitly (--registry, SUBAGENT_DIR) must be a directory, and must exist unless the command
 * `creates` it (a start): a typo in SUBAGENT_DIR is an error, not "no runs yet". A command that
 * creates (a start) or writes into it (a resume, when it exists) prepares it (lib/registry/trust.ts):
 * created private with its marker, adopted when named, or refused when another user could have planted
 * something in it.
 */
export function placeOf(ctx: Context, use: 'read' | 'write' | 'create' = 'read'): Place {
  const { env, cwd } = callerOf(ctx);
  const { path: registry, source } = locateRegistry(ctx.registry, env, cwd);
  if (source === 'flag' || source === 'env') checkNamed(registry, source, use === 'create');
  refuseForeign(registry);
  const found: Found = source === 'env' && env.SUBAGENT_RUN_ID ? 'inherited' : source;
  const adoption = use === 'create' || (use === 'write' && existsSync(registry)) ? prepareRegistry(registry, found) : null;
  return { registry, env, cwd, found, adopt: adoption ?? (() => undefined) };
}

/** Whether the place's registry may run hooks (docs/security.md). */
export function trustOfPlace(p: Place): Trust {
  return trustOf(p.registry, p.found);
}

/** A run's own --on-end into a registry that runs no hooks would never run: refused before anything is written. */
export function refuseUntrustedHook(p: Place, onEnd: string | null | undefined): void {
  if (!onEnd) return;
  const t = trustOfPlace(p);
  if (t.trusted) return;
  throw new SubagentError('E_REGISTRY_UNTRUSTED', `--on-end would never run in ${p.registry}: ${t.reason}`, { path: p.registry, hint: t.hint ?? '' });
}

function checkNamed(registry: string, source: 'flag' | 'env', creates: boolean): void {
  const by = source === 'flag' ? '--registry' : 'SUBAGENT_DIR';
  let st: Stats;
  try {
    st = statSync(registry);
  } catch (err) {
    // A start creates it (and says E_REGISTRY_UNWRITABLE when it cannot); a reader is told what is wrong:
    // missing, or there but unreadable (a symlink loop, no permission on the way).
    if (creates) return;
    if (!isErrno(err, 'ENOENT')) throw unreadable(registry, err);
    throw new SubagentError('E_REGISTRY_NOT_FOUND', `the registry ${registry} (${by}) does not exist`, {
      path: registry,
      hint: `check the path given by ${by}; a registry is created by the first start-subagent into it`,
    });
  }
  if (!st.isDirectory()) {
    throw new SubagentError('E_REGISTRY_NOT_DIRECTORY', `the registry ${registry} (${by}) is not a directory`, {
      path: registry,
      hint: `point ${by} at a registry directory (or at a path where start-subagent may create one)`,
    });
  }
}

/**
 * Runs a command's work in its registry: whatever goes wrong names the registry it went wrong in (an
 * error line's `details.registry`), without a module-global channel from the commands to the verbs.
 */
export async function inRegistryOf<T>(registry: string, work: () => Promise<T> | T): Promise<T> {
  try {
    return await work();
  } catch (err) {
    throw inRegistry(err, registry);
  }
}

/** The directory a run works in: `dir` (relative: against the caller's), which must exist; its real path. */
export function resolveCwd(dir: string | undefined, callerCwd: string): string {
  const path = resolve(callerCwd, dir ?? '.');
  let st: Stats;
  try {
    st = statSync(path);
  } catch {
    throw new SubagentError('E_CWD_INVALID', `the working directory ${path} does not exist`, { cwd: path, hint: 'pass an existing directory to --cwd' });
  }
  if (!st.isDirectory()) throw new SubagentError('E_CWD_INVALID', `${path} is not a directory`, { cwd: path, hint: 'pass a directory to --cwd' });
  return realpathSync(path);
}
