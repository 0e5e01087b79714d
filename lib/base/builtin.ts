import { createRequire } from 'node:module';

/**
 * One of Node's built-in modules, loaded on first use by a caller that keeps it (a verb that never
 * needs it does not pay for loading it). Through process.getBuiltinModule (Node >= 22.3) where there
 * is one, else a require() rooted anywhere: a built-in does not depend on where it is required from.
 */
export function builtin<T>(name: string): T {
  return (process.getBuiltinModule?.(name) ?? createRequire(process.execPath)(name)) as T;
}
