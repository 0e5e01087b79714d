// test-matrix: once — name validation (our own code, before any process), the same on every Node and process backend (scripts/test.sh).
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { makeBox } from '../support/box.js';
import { expectError, startShell, waitTerminal } from '../support/shell.js';

describe('hostile names are rejected with E_NAME_INVALID and nothing is created anywhere', () => {
  const b = makeBox('names');
  const hostile: Array<[string, string, string | null]> = [
    ['dot-dot', '..', 'dot-segment'],
    ['dot', '.', 'dot-segment'],
    ['traversal', 'a/../b', 'dot-segment'],
    ['deep traversal', '../../etc/passwd', 'dot-segment'],
    ['trailing dot segment', 'a/.', 'dot-segment'],
    ['leading dash', '-x', 'leading-dash'],
    ['dash segment', 'a/-x', 'leading-dash'],
    ['double slash', 'a//b', 'empty-segment'],
    ['absolute', '/a', 'empty-segment'],
    ['trailing slash', 'a/', 'empty-segment'],
    ['empty', '', 'empty'],
    ['newline', 'a\nb', 'characters'],
    ['escape', 'a\x1b[31mb', 'characters'],
    ['control char', 'a\x01b', 'characters'],
    ['DEL', 'a\x7fb', 'characters'],
    ['tab', 'a\tb', 'characters'],
    ['space', 'a b', 'characters'],
    ['backslash', 'a\\b', 'characters'],
    ['non-ASCII', 'caf\u00e9', 'characters'],
    ['decomposed non-ASCII', 'cafe\u0301', 'characters'],
    ['CJK', '\u540d\u524d', 'characters'],
    ['line separator', 'a\u2028b', 'characters'],
    ['plus', 'a+b', 'characters'],
    ['tilde', '~root', 'characters'],
    ['shell expansion', '$HOME', 'characters'],
    ['300 bytes', 'n'.repeat(300), 'too-long'],
    ['300 bytes in segments', Array.from({ length: 30 }, () => 'abcdefghi').join('/'), 'too-long'],
  ];
  // The other verbs share the rule; they are checked on one name of each kind.
  const EVERY_VERB = new Set(['traversal', 'leading dash', 'control char', '300 bytes']);
  for (const [label, name, rule] of hostile) {
    test(`${label}: ${JSON.stringify(name).slice(0, 40)}`, () => {
      const j = expectError(b, 'start-subagent', ['--name', name, '--cli', 'shell', '--prompt', 'touch pwned'], 'E_NAME_INVALID');
      assert.equal(typeof j.details.rule, 'string', 'details.rule says which rule failed');
      if (rule) assert.equal(j.details.rule, rule);
      if (rule === 'characters') assert.match(j.details.character, /^U\+[0-9A-F]{4,6}$/, 'details.character names the offending character');
      if (label === 'non-ASCII') assert.equal(j.details.character, 'U+00E9');
      if (EVERY_VERB.has(label)) {
        for (const verb of ['result', 'cancel'] as const) expectError(b, verb, ['--name', name], 'E_NAME_INVALID');
        expectError(b, 'search', ['--name', name, '--pattern', 'x'], 'E_NAME_INVALID');
        expectError(b, 'status', ['--name', name], 'E_NAME_INVALID');
        expectError(b, 'status', ['--wait-terminal', '--name', name], 'E_NAME_INVALID');
        expectError(b, 'resume-subagent', ['--name', name, '--prompt', 'touch pwned'], 'E_NAME_INVALID');
      }
      assert.deepEqual(readdirSync(b.dir), [], 'the sandbox (registry included) stays empty');
    });
  }

  const c = makeBox('names-ok');
  test('names at the limits are accepted: 200 bytes, segments with dots and dashes, "007"', () => {
    const ok = ['n'.repeat(200), 'a.b/c_d-e/f..g', '007', 'A/b/C', '.hidden', 'x-'];
    for (const name of ok) startShell(c, name, 'echo ok');
    const all = waitTerminal(c, ok);
    for (const name of ok) assert.equal(all[name]?.outcome, 'succeeded', name);
    const listed = c.run('status', []);
    assert.deepEqual(listed.json.agents.map((a: any) => a.name).sort(), [...ok].sort(), 'a plain listing shows every name');
    // Everything lives under the registry.
    assert.deepEqual(readdirSync(c.dir), ['registry']);
  });
});
