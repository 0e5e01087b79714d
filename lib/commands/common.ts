import { accessSync, constants, realpathSync, statSync } from 'node:fs';
import { delimiter, isAbsolute, join, resolve } from 'node:path';
import { SubagentError } from '../base/errors.js';
import { locateRegistry } from '../registry/locate.js';
import { validateName } from '../registry/names.js';
import { observeLatest, type Observation } from '../runs/observe.js';

/** What every command needs to know about where it runs. */
export interface Context {
  registry?: string | undefined;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
}

let lastResolved: string | null = null;

/** Resolves the registry, and remembers it so that even an error line names the registry it was about. */
export function resolveRegistry(ctx: Context): string {
  lastResolved = locateRegistry(ctx.registry, ctx.env ?? process.env, ctx.cwd ?? process.cwd()).path;
  return lastResolved;
}

export function resolvedRegistry(): string | null {
  return lastResolved;
}

export function notFound(name: string, registry: string): SubagentError {
  return new SubagentError('E_NAME_NOT_FOUND', `no run named "${name}" in ${registry}`, {
    name,
    registry,
    hint: 'list the names with subagent-status; check --registry / SUBAGENT_DIR if you expected another registry',
  });
}

/** The latest run of a name, observed; E_NAME_NOT_FOUND when the name does not exist. */
export function requireLatest(registry: string, name: string): Observation {
  validateName(name);
  const o = observeLatest(registry, name);
  if (!o) throw notFound(name, registry);
  return o;
}

export function resolveCwd(dir: string | undefined, callerCwd: string): string {
  const path = resolve(callerCwd, dir ?? '.');
  let st;
  try {
    st = statSync(path);
  } catch {
    throw new SubagentError('E_CWD_INVALID', `the working directory ${path} does not exist`, { cwd: path, hint: 'pass an existing directory to --cwd' });
  }
  if (!st.isDirectory()) throw new SubagentError('E_CWD_INVALID', `${path} is not a directory`, { cwd: path, hint: 'pass a directory to --cwd' });
  return realpathSync(path);
}

/** Finds a program on PATH the way execvp would; null when it is not there. */
export function findOnPath(program: string, env: NodeJS.ProcessEnv): string | null {
  const candidates = isAbsolute(program) || program.includes('/') ? [program] : (env.PATH ?? '').split(delimiter).filter(Boolean).map((d) => join(d, program));
  for (const c of candidates) {
    try {
      accessSync(c, constants.X_OK);
      if (statSync(c).isFile()) return c;
    } catch {
      /* next */
    }
  }
  return null;
}

export function envValue(env: NodeJS.ProcessEnv, ...keys: string[]): string | undefined {
  for (const k of keys) {
    const v = env[k];
    if (v !== undefined && v !== '') return v;
  }
  return undefined;
}
