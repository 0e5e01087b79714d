// test-matrix: once — usage text and flag errors (our own parser), the same on every Node and process backend (scripts/test.sh).
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import type { Verb } from '../support/run.js';
import { settledTree } from '../support/registry.js';
import { makeBox } from '../support/box.js';
import { expectError } from '../support/shell.js';

const VERBS: Verb[] = ['start-subagent', 'resume-subagent', 'status', 'result', 'search', 'cancel', 'dash'];

describe('--help on every verb', () => {
  const b = makeBox('help');
  for (const verb of VERBS) {
    test(`${verb} --help prints usage text and exits 0`, () => {
      for (const args of [['--help'], ['--name', 'x', '-h']]) {
        const r = b.run(verb, args);
        assert.equal(r.code, 0, `${verb} ${args.join(' ')}: ${r.stdout}${r.stderr}`);
        assert.match(r.stdout, /^usage: /, `${verb} ${args.join(' ')}`);
        assert.match(r.stdout, /--name/);
        assert.equal(r.json, undefined, 'usage is text, not JSON');
        assert.equal(r.stderr, '');
      }
      assert.deepEqual(settledTree(b.dir), [], '--help creates nothing');
    });
  }
});

describe('flags every verb rejects', () => {
  const b = makeBox('flags');
  const base: Record<Verb, string[]> = {
    'start-subagent': ['--name', 'x', '--cli', 'shell', '--prompt', 'echo'],
    'resume-subagent': ['--name', 'x', '--prompt', 'echo'],
    status: [],
    result: ['--name', 'x'],
    search: ['--name', 'x', '--pattern', 'a'],
    cancel: ['--name', 'x'],
    dash: [],
  };
  for (const verb of VERBS) {
    test(`${verb}: E_ARG_UNKNOWN for an unknown flag and for a stray positional`, () => {
      const j = expectError(b, verb, [...base[verb], '--frobnicate'], 'E_ARG_UNKNOWN');
      assert.match(j.error, /--frobnicate/);
      expectError(b, verb, [...base[verb], 'stray'], 'E_ARG_UNKNOWN');
      expectError(b, verb, [...base[verb], '--frobnicate=1'], 'E_ARG_UNKNOWN');
      if (verb !== 'start-subagent' && verb !== 'resume-subagent') expectError(b, verb, [...base[verb], '--', 'x'], 'E_ARG_UNKNOWN');
      assert.deepEqual(settledTree(b.dir), []);
    });
  }
  test('a value flag at the end without its value is E_ARG_INVALID', () => {
    expectError(b, 'result', ['--name'], 'E_ARG_INVALID');
    expectError(b, 'status', ['--name'], 'E_ARG_INVALID');
    expectError(b, 'search', ['--name', 'x', '--pattern'], 'E_ARG_INVALID');
    expectError(b, 'cancel', ['--name', 'x', '--signal'], 'E_ARG_INVALID');
  });
  test('a switch given a value is E_ARG_INVALID', () => {
    expectError(b, 'status', ['--name', 'x', '--wait=yes'], 'E_ARG_INVALID');
    expectError(b, 'result', ['--name', 'x', '--json=1'], 'E_ARG_INVALID');
  });
  test('E_NAME_REQUIRED for result, search, cancel, resume-subagent', () => {
    expectError(b, 'result', [], 'E_NAME_REQUIRED');
    expectError(b, 'search', ['--pattern', 'x'], 'E_NAME_REQUIRED');
    expectError(b, 'cancel', [], 'E_NAME_REQUIRED');
    expectError(b, 'resume-subagent', ['--prompt', 'x'], 'E_NAME_REQUIRED');
    assert.deepEqual(settledTree(b.dir), []);
  });
});
