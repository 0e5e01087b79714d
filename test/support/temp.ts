/** A temporary directory for one test: made under the system's temp dir, removed when the test's code is done. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Runs `fn` with a fresh directory `<tmpdir>/<prefix>XXXXXX`, and removes it afterwards, whatever `fn` did. */
export function withTempDir<T>(prefix: string, fn: (dir: string) => T): T {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  try {
    return fn(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
