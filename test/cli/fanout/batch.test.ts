/**
 * Issue 4, fan-out at scale, through the real executables: `start-subagent --batch` (many starts from
 * JSON lines, a file or stdin; each bad line reported by its number, the good ones started).
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { makeBox } from '../../support/box.js';
import { expectError, resultText, statusOf, waitTerminal } from '../../support/shell.js';

const bBatch = makeBox('fan-batch');

describe('batch start', () => {
  test('a batch file with bad lines starts the rest and reports each failure by line', () => {
    const b = bBatch;
    writeFileSync(join(b.dir, 'p4.sh'), 'echo from-prompt-file\n');
    const lines = [
      JSON.stringify({ name: 'bt/one', prompt: 'echo one' }), // 1
      '{"name": "bt/broken", "prompt": ', // 2: bad JSON
      JSON.stringify({ name: 'bt/two', prompt: 'echo two' }), // 3
      JSON.stringify({ name: 'bt/bad name', prompt: 'echo x' }), // 4: bad name
      '', // 5: skipped
      '// a comment', // 6: skipped
      JSON.stringify({ name: 'bt/three', promptFile: 'p4.sh' }), // 7
      JSON.stringify({ name: 'bt/four', prompt: 'echo four', colour: 'red' }), // 8: unknown field
    ];
    writeFileSync(join(b.dir, 'batch.jsonl'), lines.join('\n') + '\n');
    const r = b.run('start-subagent', ['--batch', 'batch.jsonl', '--cli', 'shell']);
    assert.equal(r.code, 1, r.stdout + r.stderr);
    assert.equal(r.stdout.split('\n').length, 2, 'one line');
    assert.equal(r.json.ok, false);
    assert.equal(r.json.code, 'E_BATCH_INCOMPLETE');
    assert.equal(r.json.error, '3 of 6 batch lines did not start');
    assert.equal(r.json.registry, b.registry);
    assert.equal(typeof r.json.details?.hint, 'string');
    assert.deepEqual(
      r.json.started.map((s: any) => [s.line, s.name, s.cli]),
      [
        [1, 'bt/one', 'shell'],
        [3, 'bt/two', 'shell'],
        [7, 'bt/three', 'shell'],
      ],
    );
    for (const s of r.json.started) {
      assert.ok(Number.isInteger(s.pid) && s.pid > 0);
      assert.equal(s.run, 1);
    }
    assert.deepEqual(
      r.json.failed.map((f: any) => [f.line, f.code]),
      [
        [2, 'E_ARG_INVALID'],
        [4, 'E_NAME_INVALID'],
        [8, 'E_ARG_UNKNOWN'],
      ],
    );
    for (const f of r.json.failed) assert.ok(typeof f.error === 'string' && f.error.length > 0, JSON.stringify(f));
    assert.equal(r.json.failed[0].name, null);
    assert.equal(r.json.failed[1].name, 'bt/bad name');
    assert.match(r.json.failed[2].error, /colour/);

    const all = waitTerminal(b, ['bt/one', 'bt/two', 'bt/three']);
    for (const n of ['bt/one', 'bt/two', 'bt/three']) {
      assert.equal(all[n].outcome, 'succeeded');
      assert.equal(all[n].cli, 'shell', 'the --cli default applied');
    }
    assert.equal(resultText(b, 'bt/three'), 'from-prompt-file\n');
    const names = b.run('status', []).json.agents.map((a: any) => a.name);
    assert.deepEqual(names, ['bt/one', 'bt/three', 'bt/two'], 'the failed lines created nothing');
  });

  test('--batch - reads stdin; an all-good batch is ok:true exit 0; a line overrides the defaults', () => {
    const b = bBatch;
    const sub = join(b.dir, 'sub');
    mkdirSync(sub, { recursive: true });
    const input = [
      JSON.stringify({ name: 'st/a', prompt: 'echo a; pwd' }),
      JSON.stringify({ name: 'st/b', prompt: 'echo "$#:$1"', args: ['x y'], cwd: b.dir }),
    ].join('\n');
    const r = b.run('start-subagent', ['--batch', '-', '--cli', 'shell', '--cwd', 'sub'], { input });
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.equal(r.json.ok, true);
    assert.deepEqual(r.json.failed, []);
    assert.deepEqual(
      r.json.started.map((s: any) => [s.line, s.name]),
      [
        [1, 'st/a'],
        [2, 'st/b'],
      ],
    );
    waitTerminal(b, ['st/a', 'st/b']);
    assert.equal(resultText(b, 'st/a'), `a\n${realpathSync(sub)}\n`, 'the --cwd default applied');
    assert.equal(resultText(b, 'st/b'), '1:x y\n');
    assert.equal(statusOf(b, 'st/b').cwd, b.dir, "the line's cwd wins");

    // stdin with one bad line (an existing name) and one good: the good one starts.
    const r2 = b.run('start-subagent', ['--batch', '-', '--cli', 'shell'], {
      input: `${JSON.stringify({ name: 'st/a', prompt: 'echo again' })}\n${JSON.stringify({ name: 'st/c', prompt: 'echo c' })}\n`,
    });
    assert.equal(r2.code, 1);
    assert.equal(r2.json.code, 'E_BATCH_INCOMPLETE');
    assert.deepEqual(
      r2.json.failed.map((f: any) => [f.line, f.name, f.code]),
      [[1, 'st/a', 'E_NAME_EXISTS']],
    );
    assert.deepEqual(
      r2.json.started.map((s: any) => s.name),
      ['st/c'],
    );
    waitTerminal(b, ['st/c']);

    // --batch with --name is refused before anything starts.
    expectError(b, 'start-subagent', ['--batch', '-', '--name', 'x'], 'E_ARG_INVALID', { input: JSON.stringify({ name: 'st/z', prompt: 'echo z' }) });
  });
});
