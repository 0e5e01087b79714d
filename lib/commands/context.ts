import { realpathSync, statSync, type Stats } from 'node:fs';
import { resolve } from 'node:path';
import { SubagentError, inRegistry } from '../base/errors.js';
import { locateRegistry } from '../registry/locate.js';
import { refuseForeign } from '../registry/private.js';

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
}

/** The caller's environment and directory, defaults filled in (before the registry is needed). */
export function callerOf(ctx: Context): { env: NodeJS.ProcessEnv; cwd: string } {
  return { env: ctx.env ?? process.env, cwd: ctx.cwd ?? process.cwd() };
}

/** Locates the registry once, at a command's entrance, after its options were checked. */
export function placeOf(ctx: Context): Place {
  const { env, cwd } = callerOf(ctx);
  const registry = locateRegistry(ctx.registry, env, cwd).path;
  refuseForeign(registry);
  return { registry, env, cwd };
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
