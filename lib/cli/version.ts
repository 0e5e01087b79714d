import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The package's name in its package.json: what `--version` looks for above this file. */
const PACKAGE = 'subagents';

/**
 * The installed package's version, read from its package.json when `--version` asks (never at an
 * ordinary start): the nearest one above this file that is ours — from the bundle (dist/bin/*.cjs) and
 * from the library (dist/lib/…) alike.
 */
export function packageVersion(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    try {
      const p = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: unknown; version?: unknown };
      if (p.name === PACKAGE && typeof p.version === 'string') return p.version;
    } catch {
      /* no package.json here, or not ours: look further up */
    }
    const up = dirname(dir);
    if (up === dir) throw new Error(`the package.json of ${PACKAGE} was not found above ${fileURLToPath(import.meta.url)}`);
    dir = up;
  }
}
