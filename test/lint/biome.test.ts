import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { ROOT } from '../support/paths.js';

// `make lint` inside `make test`: Biome's formatter and linter (biome.json) over lib/, test/ and scripts/,
// checking only — `make format` writes the fixes. A test here, so that its verdict is counted with the rest.

test('biome ci: every source file is formatted, and no lint rule of biome.json is broken', () => {
  const r = spawnSync(process.execPath, [join(ROOT, 'node_modules', '@biomejs', 'biome', 'bin', 'biome'), 'ci', '--colors=off', '--max-diagnostics=50'], {
    cwd: ROOT,
    encoding: 'utf8',
    timeout: 120_000,
  });
  assert.equal(r.error, undefined, `biome could not run: ${r.error?.message}`);
  assert.equal(r.status, 0, `biome ci found problems (run make format, then fix what is left):\n${r.stdout}\n${r.stderr}`);
  assert.match(r.stdout + r.stderr, /Checked \d+ files?/, 'biome checked files');
});
