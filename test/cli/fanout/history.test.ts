/**
 * Issue 4, fan-out at scale, through the real executables: run history — `status --runs`, and
 * `result --run K` / `--since K`.
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { assertError } from '../../support/run.js';
import { makeBox } from '../../support/box.js';
import { startShell, waitTerminal } from '../../support/shell.js';

const bHist = makeBox('fan-hist');

describe('run history', () => {
  test('--runs lists every run; result --run K and --since K', () => {
    const b = bHist;
    startShell(b, 'h/conv', 'echo answer-1');
    waitTerminal(b, ['h/conv']);
    for (const k of [2, 3]) {
      const r = b.run('resume-subagent', ['--name', 'h/conv', '--prompt', k === 3 ? 'echo answer-3; exit 2' : '\n# step two\necho answer-2']);
      assert.equal(r.code, 0, r.stdout + r.stderr);
      assert.equal(r.json.run, k);
      waitTerminal(b, ['h/conv']);
    }
    const h = b.run('status', ['--name', 'h/conv', '--runs']);
    assert.equal(h.code, 0, h.stdout);
    assert.equal(h.json.name, 'h/conv');
    assert.equal(h.json.runs.length, 3);
    assert.deepEqual(
      h.json.runs.map((r: any) => [r.run, r.status, r.outcome, r.cli, r.exitCode]),
      [
        [1, 'done', 'succeeded', 'shell', 0],
        [2, 'done', 'succeeded', 'shell', 0],
        [3, 'done', 'failed', 'shell', 2],
      ],
    );
    assert.deepEqual(
      h.json.runs.map((r: any) => r.promptHead),
      ['echo answer-1', '# step two', 'echo answer-3; exit 2'],
      'the first non-empty line',
    );
    assert.deepEqual(
      h.json.runs.map((r: any) => r.promptBytes),
      [13, 25, 21],
    );
    for (const r of h.json.runs) assert.ok(Date.parse(r.finishedAt) >= Date.parse(r.startedAt));
    assertError(b.run('status', ['--name', 'h/conv', '--name', 'h/other', '--runs']), 'E_ARG_INVALID');

    assert.equal(b.run('result', ['--name', 'h/conv', '--run', '2']).stdout, 'answer-2\n');
    const r2 = b.run('result', ['--name', 'h/conv', '--run', '2', '--json']);
    assert.equal(r2.json.run, 2);
    assert.equal(r2.json.lastAssistantText, 'answer-2\n');
    assert.equal(r2.json.outcome, 'succeeded');
    assertError(b.run('result', ['--name', 'h/conv', '--run', '4']), 'E_RUN_NOT_FOUND');
    assertError(b.run('result', ['--name', 'h/conv', '--since', 'abc']), 'E_ARG_INVALID');
    assertError(b.run('result', ['--name', 'h/conv', '--since', '1', '--run', '2']), 'E_ARG_INVALID');

    const s1 = b.run('result', ['--name', 'h/conv', '--since', '1', '--json']);
    assert.equal(s1.code, 0, s1.stdout);
    assert.equal(s1.json.since, 1);
    assert.equal(s1.json.latestRun, 3);
    assert.deepEqual(
      s1.json.runs.map((r: any) => [r.run, r.outcome, r.exitCode, r.lastAssistantText]),
      [
        [2, 'succeeded', 0, 'answer-2\n'],
        [3, 'failed', 2, 'answer-3\n'],
      ],
    );
    const s0 = b.run('result', ['--name', 'h/conv', '--since', '0', '--json']);
    assert.deepEqual(
      s0.json.runs.map((r: any) => r.lastAssistantText),
      ['answer-1\n', 'answer-2\n', 'answer-3\n'],
    );
    const s3 = b.run('result', ['--name', 'h/conv', '--since', '3', '--json']);
    assert.deepEqual(s3.json.runs, []);
    const plain = b.run('result', ['--name', 'h/conv', '--since', '1']);
    assert.equal(plain.code, 0);
    assert.equal(plain.stdout, '[subagents: run 2, done succeeded]\nanswer-2\n[subagents: run 3, done failed]\nanswer-3\n');
  });
});
