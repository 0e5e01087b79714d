import { test } from 'node:test';
import assert from 'node:assert/strict';
import { validateName, diagnoseName, encodeName, decodeName } from '../../lib/registry/names.js';
import { parseFlags } from '../../lib/cli/flags.js';
import { SubagentError } from '../../lib/base/errors.js';

function rule(name: string): string | undefined {
  try {
    validateName(name);
    return undefined;
  } catch (err) {
    assert.ok(err instanceof SubagentError);
    assert.equal(err.code, 'E_NAME_INVALID');
    return err.details.rule as string;
  }
}

test('the name rule accepts segments of [A-Za-z0-9._-] joined by /', () => {
  for (const ok of ['a', '007', '1e3', 'review/api-v2', 'a.b_c-d', '.hidden', 'x'.repeat(200)]) assert.equal(rule(ok), undefined, ok);
});

test('the name rule says which rule failed', () => {
  for (const [name, why] of [
    ['', 'empty'],
    ['x'.repeat(201), 'too-long'],
    ['a b', 'characters'],
    ['caf\u00e9', 'characters'],
    ['cafe\u0301', 'characters'],
    ['a\nb', 'characters'],
    ['a+b', 'characters'],
    ['/a', 'empty-segment'],
    ['a//b', 'empty-segment'],
    ['a/', 'empty-segment'],
    ['..', 'dot-segment'],
    ['a/../b', 'dot-segment'],
    ['.', 'dot-segment'],
    ['-x', 'leading-dash'],
    ['a/-x', 'leading-dash'],
  ] as Array<[string, string]>)
    assert.equal(rule(name), why);
});

test("validateName's one-expression fast path accepts exactly what the step-by-step rule accepts", () => {
  const ok = (f: (n: string) => string, n: string) => {
    try {
      f(n);
      return true;
    } catch {
      return false;
    }
  };
  const alphabet = ['a', 'Z', '0', '.', '_', '-', '/', '+', ' ', '\u00e9'];
  let seed = 1;
  const random = () => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed / 2147483648;
  };
  const samples = ['.', '..', '...', '.a', 'a.', 'a/.', 'a/..', 'a/...', '-', 'a/-b', 'a-/b', 'x'.repeat(200), 'x'.repeat(201)];
  for (let i = 0; i < 20000; i++)
    samples.push(Array.from({ length: Math.floor(random() * 9) }, () => alphabet[Math.floor(random() * alphabet.length)]).join(''));
  for (const n of samples) assert.equal(ok(validateName, n), ok(diagnoseName, n), JSON.stringify(n));
});

test('names map to one directory entry and back', () => {
  assert.equal(encodeName('a/b/c'), 'a+b+c');
  assert.equal(decodeName('a+b+c'), 'a/b/c');
  assert.equal(decodeName('.new-123'), '.new-123');
  assert.equal(decodeName('bad name'), null);
});

const spec = { string: ['name', 'prompt', 'file', 'watch'], boolean: ['json'], repeatable: ['file'], optionalValue: { watch: /^\d+$/ }, passthrough: true };

test('flag values are taken verbatim and stay strings', () => {
  const { values, passthrough } = parseFlags(
    ['--name', '007', '--prompt', '-x', '--file', 'a', '--file=b', '--json', '--', '--permission-mode', 'acceptEdits'],
    spec,
  );
  assert.equal(values.name, '007');
  assert.equal(values.prompt, '-x');
  assert.deepEqual(values.file, ['a', 'b']);
  assert.equal(values.json, true);
  assert.deepEqual(passthrough, ['--permission-mode', 'acceptEdits']);
  assert.equal(parseFlags(['--prompt', '1e3'], spec).values.prompt, '1e3');
  assert.equal(parseFlags(['--prompt=a=b'], spec).values.prompt, 'a=b');
});

test('optional values are taken only when they match', () => {
  assert.equal(parseFlags(['--watch', '5'], spec).values.watch, '5');
  assert.equal(parseFlags(['--watch', '--json'], spec).values.watch, '');
});

test('unknown flags, stray arguments, missing values and repeats are refused', () => {
  const code = (argv: string[]) => {
    try {
      parseFlags(argv, spec);
      return 'ok';
    } catch (err) {
      return (err as SubagentError).code + ':' + String((err as SubagentError).details.hint ?? '');
    }
  };
  assert.match(code(['--nmae', 'x']), /^E_ARG_UNKNOWN:did you mean --name/);
  assert.match(code(['stray']), /^E_ARG_UNKNOWN/);
  assert.match(code(['-n', 'x']), /^E_ARG_UNKNOWN/);
  assert.match(code(['--name']), /^E_ARG_INVALID/);
  assert.match(code(['--name', 'a', '--name', 'b']), /^E_ARG_INVALID/);
  assert.match(code(['--json=false']), /^E_ARG_INVALID/);
  assert.match(code(['--x', '--', 'y']), /^E_ARG_UNKNOWN/);
  assert.match(code(['--', 'y']), /^ok/);
  assert.match(code(['--name', 'a', '--']), /^ok/);
  assert.throws(() => parseFlags(['--', 'x'], { string: [], boolean: [] }), /does not take arguments/);
});
