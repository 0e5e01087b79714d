import type { DatabaseSync } from 'node:sqlite';
import { builtin } from './builtin.js';

type Sqlite = typeof import('node:sqlite');

let loaded: Sqlite | null | undefined;

/**
 * Node's own SQLite (`node:sqlite`), loaded on first use; null on a Node without it (before 22.13 it
 * needs --experimental-sqlite). Loading it emits an ExperimentalWarning on the Nodes where it is still
 * experimental (22, 24): that one warning is not printed, since a verb's stderr is for its own words.
 */
function sqlite(): Sqlite | null {
  if (loaded !== undefined) return loaded;
  const emit = process.emitWarning;
  process.emitWarning = ((warning: string | Error, ...rest: unknown[]) => {
    if (/SQLite/.test(typeof warning === 'string' ? warning : warning.message)) return;
    return (emit as (...a: unknown[]) => void).call(process, warning, ...rest);
  }) as typeof process.emitWarning;
  try {
    loaded = builtin<Sqlite>('node:sqlite');
  } catch {
    loaded = null;
  } finally {
    process.emitWarning = emit;
  }
  return loaded ?? null;
}

/**
 * A SQLite database opened read-only (another program's store, read while it may be writing it), or null
 * when this Node has no SQLite or the file cannot be opened as one. The caller closes it.
 */
export function openReadOnly(path: string): DatabaseSync | null {
  const s = sqlite();
  if (s === null) return null;
  try {
    return new s.DatabaseSync(path, { readOnly: true });
  } catch {
    return null;
  }
}
