import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from '../support/paths.js';

// CONTRIBUTING.md, "Adding a verb", steps 2-4, held against every verb there is: the walk-through and
// the tree cannot part ways without this failing.

const verbs = readdirSync(join(ROOT, 'lib', 'verbs'))
  .filter((f) => f.endsWith('.ts'))
  .map((f) => f.slice(0, -3));
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { bin: Record<string, string> };
const guide = readFileSync(join(ROOT, 'CONTRIBUTING.md'), 'utf8');

test('there are verbs, and CONTRIBUTING.md walks through adding one', () => {
  assert.ok(verbs.length >= 6, verbs.join(', '));
  for (const step of [
    'lib/commands/<command>.ts',
    'lib/verbs/<verb>.ts',
    'bin/<verb>',
    '`bin`',
    'docs/verbs/<command>.md',
    'docs/schemas/',
    'lib/index.ts',
    'test/unit/verbs-contract.test.ts',
  ]) {
    assert.ok(guide.includes(step), `CONTRIBUTING.md names ${step}`);
  }
});

for (const verb of verbs) {
  test(`${verb}: a main(), an executable bin shim into its bundle, a package.json command and a docs page`, () => {
    const source = readFileSync(join(ROOT, 'lib', 'verbs', `${verb}.ts`), 'utf8');
    assert.match(
      source,
      /export function main\(\): Promise<void> \{\n\s+return runVerb\(USAGE, SPEC,/,
      'main() runs the verb through runVerb with its USAGE and SPEC',
    );
    const shim = join(ROOT, 'bin', verb);
    assert.ok(existsSync(shim), `bin/${verb} exists`);
    assert.ok((statSync(shim).mode & 0o111) !== 0, `bin/${verb} is executable`);
    assert.ok(readFileSync(shim, 'utf8').includes(`require("../dist/bin/${verb}.cjs").main();`), `bin/${verb} runs dist/bin/${verb}.cjs`);
    const commands = Object.entries(pkg.bin)
      .filter(([, path]) => path === `bin/${verb}`)
      .map(([c]) => c);
    assert.equal(commands.length, 1, `one package.json bin command runs bin/${verb}: ${commands.join(', ')}`);
    assert.ok(existsSync(join(ROOT, 'docs', 'verbs', `${commands[0]}.md`)), `docs/verbs/${commands[0]}.md exists`);
  });
}
