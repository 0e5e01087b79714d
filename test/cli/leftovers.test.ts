/**
 * Issue 23, point 6 (docs/states.md, "A done run is final"): what the agent leaves running when it exits —
 * a background child, the children of a crashed agent — is stopped after a short grace and before `done`
 * is recorded, unless the run keeps it (--keep-children); the answer of a done run never changes, even
 * while a kept child goes on writing to the event log; and a kept child is still reachable by cancel.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { LONG, until } from '../support/wait.js';
import { pidAlive } from '../support/procs.js';
import { fileSha, recordOf, runDirOf } from '../support/registry.js';
import { makeBox } from '../support/box.js';
import { expectError, resultText, startShell, waitTerminal } from '../support/shell.js';

const b = makeBox('leftovers');

function pidIn(path: string): number {
  return Number(readFileSync(path, 'utf8').trim());
}

describe('what a run leaves running', () => {
  test('a background child, and the child of a crashed agent, are stopped after the grace, before the run is done; the answer never changes', async () => {
    const bg = join(b.dir, 'bg.pid');
    const crashed = join(b.dir, 'crashed.pid');
    startShell(b, 'l/bg', `echo answer; sh -c 'echo $$ > ${bg}; sleep 6; echo late' & while [ ! -s ${bg} ]; do sleep 0.02; done`);
    startShell(b, 'l/crash', `echo answer; sh -c 'echo $$ > ${crashed}; sleep 6; echo late' & while [ ! -s ${crashed} ]; do sleep 0.02; done; kill -9 $$`);
    const ends = waitTerminal(b, ['l/bg', 'l/crash']);
    for (const [name, file] of [
      ['l/bg', bg],
      ['l/crash', crashed],
    ] as const) {
      const a = ends[name];
      assert.equal(a.status, 'done', JSON.stringify(a));
      const child = pidIn(file);
      assert.equal(pidAlive(child), false, `${name}: the child the agent left (pid ${child}) was stopped before the run was done`);
      const rec = recordOf(b.registry, name);
      assert.equal(rec.eventBytesAtEnd, Buffer.byteLength('answer\n'), `${name}: the log's size at the end is recorded`);
      assert.equal(rec.leftovers, undefined, `${name}: nothing was left alive: ${JSON.stringify(rec.leftovers)}`);
      assert.equal(resultText(b, name), 'answer\n');
      // Started at least the grace (2 s) after the agent's output: the child got its chance to end by itself.
      assert.ok(
        Date.parse(rec.finishedAt) - Date.parse(rec.agentStartedAt) >= 1900,
        `${name}: done only after the grace: ${rec.agentStartedAt} → ${rec.finishedAt}`,
      );
    }
    assert.equal(ends['l/crash'].signal, 'SIGKILL', 'the crashed agent was killed');
  });

  test('a child that ends within the grace is waited for: what it wrote is part of the run, on disk before done', () => {
    startShell(b, 'l/soon', `echo answer; (sleep 1; echo soon) &`);
    const a = waitTerminal(b, ['l/soon'])['l/soon'];
    assert.equal(a.outcome, 'succeeded');
    // Read the moment the run is done: the child's line is in it already, and the record says where the log ends.
    assert.equal(resultText(b, 'l/soon'), 'answer\nsoon\n');
    assert.equal(recordOf(b.registry, 'l/soon').eventBytesAtEnd, Buffer.byteLength('answer\nsoon\n'));
  });

  test('--keep-children: the child lives on and writes, the done run answers the same; cancel stops the child; resumes keep the flag', async () => {
    const kept = join(b.dir, 'kept.pid');
    startShell(b, 'l/keep', `echo answer; sh -c 'echo $$ > ${kept}; while :; do echo late; sleep 0.1; done' & while [ ! -s ${kept} ]; do sleep 0.02; done`, [
      '--keep-children',
    ]);
    const a = waitTerminal(b, ['l/keep'])['l/keep'];
    assert.equal(a.status, 'done');
    const child = pidIn(kept);
    assert.ok(pidAlive(child), 'the child was kept');
    const dir = runDirOf(b.registry, 'l/keep');
    const rec = recordOf(b.registry, 'l/keep');
    assert.equal(rec.keepChildren, true);
    assert.ok(
      rec.leftovers.some((p: any) => p.pid === child && typeof p.startTime === 'string'),
      `the record keeps the child with its identity: ${JSON.stringify(rec.leftovers)}`,
    );
    const end = rec.eventBytesAtEnd;
    await until('the kept child writes past the end', () => statSync(join(dir, 'events.log')).size > end + 20, LONG);
    const recordSha = fileSha(join(dir, 'record.json'));
    const answer = resultText(b, 'l/keep');
    const log = readFileSync(join(dir, 'events.log'));
    assert.equal(answer, log.subarray(0, end).toString(), `the answer of the done run is its output up to its end (${end} of ${log.length} bytes)`);
    const search = b.run('search', ['--name', 'l/keep', '--pattern', 'late']);
    assert.equal(search.json?.ok, true, search.stdout);
    const said = search.json.matches.filter((m: any) => m.role === 'assistant');
    assert.equal(said.length, (answer.match(/late/g) ?? []).length, `search reads the done run up to its end: ${search.stdout}`);
    await until('the kept child writes more', () => statSync(join(dir, 'events.log')).size > log.length, LONG);
    assert.equal(resultText(b, 'l/keep'), answer, 'the same answer while the log grows');

    const c = b.run('cancel', ['--name', 'l/keep']);
    assert.equal(c.code, 0, `cancel reaches the kept child: ${c.stdout}`);
    assert.equal(c.json.previousStatus, 'done');
    assert.equal(c.json.status, 'done');
    assert.equal(c.json.outcome, 'succeeded');
    assert.ok(c.json.processesSignalled >= 1, c.stdout);
    assert.deepEqual(c.json.survivors, []);
    assert.equal(pidAlive(child), false, 'the kept child is stopped');
    assert.equal(fileSha(join(dir, 'record.json')), recordSha, 'the done record does not change');
    expectError(b, 'cancel', ['--name', 'l/keep'], 'E_NOT_RUNNING');

    // Resumes keep it, like the other options; --stop-children drops it.
    assert.equal(b.run('resume-subagent', ['--name', 'l/keep', '--prompt', 'echo again']).json?.ok, true);
    waitTerminal(b, ['l/keep']);
    assert.equal(recordOf(b.registry, 'l/keep', 2).keepChildren, true);
    assert.equal(b.run('resume-subagent', ['--name', 'l/keep', '--stop-children', '--prompt', 'echo third']).json?.ok, true);
    waitTerminal(b, ['l/keep']);
    assert.equal(recordOf(b.registry, 'l/keep', 3).keepChildren, undefined);
  });
});
