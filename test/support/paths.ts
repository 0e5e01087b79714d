/** Where things are: the repository, its executables, the test fixtures. */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root: the first directory above this file with the project's package.json (so it works from test/ and from dist/test/). */
function findRoot(): string {
  const here = fileURLToPath(import.meta.url);
  for (let dir = dirname(here); ; ) {
    const pkg = join(dir, 'package.json');
    if (existsSync(pkg)) {
      try {
        if ((JSON.parse(readFileSync(pkg, 'utf8')) as { name?: unknown }).name === 'subagents') return dir;
      } catch {
        /* not ours; keep walking up */
      }
    }
    const up = dirname(dir);
    if (up === dir) throw new Error(`test/support/paths: no subagents package.json above ${here}`);
    dir = up;
  }
}

export const ROOT = findRoot();
/** The executables (bin/<verb>, each loading dist/bin/<verb>.cjs). */
export const BIN = join(ROOT, 'bin');
export const FIXTURES = join(ROOT, 'test', 'fixtures');
/** A stand-in agent that can ignore signals, detach children and write pid files (test/fixtures/fake-agent.mjs). */
export const FAKE_AGENT = join(FIXTURES, 'fake-agent.mjs');
