/**
 * Issue 27, point 1: runs that follow runs (`--after`, a batch line's `after`), through the real
 * executables — recorded at once and waiting visibly (`waitingFor`), started when each run it follows has
 * ended, `dependency-failed` down the graph when one did not succeed, a DAG in one batch file, and what is
 * refused at start (an unknown name, a cycle) changing nothing. Gated shell scripts: nothing sleeps.
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { makeBox } from '../support/box.js';
import { recordOf } from '../support/registry.js';
import { until } from '../support/wait.js';
import { assertError, assertOk } from '../support/run.js';
import { byName, expectError, gate, open, resultText, startShell, statusOf, untilStatus, waitTerminal } from '../support/shell.js';

const box = makeBox('after');

/** Writes a batch file of these lines and starts it with --cli shell; the output line. */
function batch(file: string, lines: object[], extra: string[] = []): any {
  writeFileSync(join(box.dir, file), lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
  return box.run('start-subagent', ['--batch', file, '--cli', 'shell', ...extra]);
}

/** When a run's agent started and when it ended, from its record (ms since the epoch). */
function times(name: string): { agentStartedAt: number; finishedAt: number } {
  const r = recordOf(box.registry, name);
  return { agentStartedAt: Date.parse(r.agentStartedAt), finishedAt: Date.parse(r.finishedAt) };
}

describe('--after', () => {
  test('a three-level DAG from one batch file, its lines in any order: started in order, the second level in parallel', async () => {
    const g = (n: string) => join(box.dir, `gate-dag-${n}`);
    const r = batch('dag.jsonl', [
      { name: 'dag/merge', prompt: 'echo merged', after: ['dag/review-a', 'dag/review-b', 'dag/review-c'] },
      { name: 'dag/review-a', prompt: `${gate(g('reviews'))}; echo a`, after: 'dag/plan' },
      { name: 'dag/review-b', prompt: `${gate(g('reviews'))}; echo b`, after: 'dag/plan' },
      { name: 'dag/review-c', prompt: `${gate(g('reviews'))}; echo c`, after: 'dag/plan' },
      { name: 'dag/plan', prompt: `${gate(g('plan'))}; echo plan` },
    ]);
    const out = assertOk(r, 'the batch');
    // Listed in file order, every one recorded at once.
    assert.deepEqual(
      out.started.map((s: any) => [s.line, s.name, s.status]),
      [
        [1, 'dag/merge', 'scheduled'],
        [2, 'dag/review-a', 'scheduled'],
        [3, 'dag/review-b', 'scheduled'],
        [4, 'dag/review-c', 'scheduled'],
        [5, 'dag/plan', 'scheduled'],
      ],
    );
    await untilStatus(box, 'dag/plan', (a) => a.status === 'running', 'plan running');
    // Waiting, visibly: scheduled, with the names still waited for, and in the table.
    const waiting = byName(assertOk(box.run('status', ['--prefix', 'dag'])).agents);
    for (const n of ['a', 'b', 'c']) {
      assert.equal(waiting[`dag/review-${n}`].status, 'scheduled');
      assert.deepEqual(waiting[`dag/review-${n}`].waitingFor, ['dag/plan']);
    }
    assert.equal(waiting['dag/merge'].status, 'scheduled');
    assert.deepEqual(waiting['dag/merge'].waitingFor, ['dag/review-a', 'dag/review-b', 'dag/review-c']);
    assert.deepEqual(waiting['dag/plan'].waitingFor, []);
    const table = box.run('status', ['--prefix', 'dag', '--format', 'table']).stdout;
    assert.match(table, /dag\/review-a\s+shell\s+after dag\/plan/);
    open(g('plan'));
    // The second level runs side by side: all three running at once, held at their gate.
    for (const n of ['a', 'b', 'c']) await untilStatus(box, `dag/review-${n}`, (a) => a.status === 'running', `review-${n} running`);
    const merge = statusOf(box, 'dag/merge');
    assert.equal(merge.status, 'scheduled');
    assert.deepEqual(merge.waitingFor, ['dag/review-a', 'dag/review-b', 'dag/review-c']);
    open(g('reviews'));
    const done = waitTerminal(box, ['dag/merge', 'dag/review-a', 'dag/review-b', 'dag/review-c', 'dag/plan']);
    for (const a of Object.values(done)) {
      assert.equal(a.outcome, 'succeeded', JSON.stringify(a));
      assert.deepEqual(a.waitingFor, []);
    }
    assert.equal(resultText(box, 'dag/merge'), 'merged\n');
    const plan = times('dag/plan');
    const reviews = ['a', 'b', 'c'].map((n) => times(`dag/review-${n}`));
    for (const rv of reviews) assert.ok(rv.agentStartedAt >= plan.finishedAt, 'a review started after the plan ended');
    assert.ok(times('dag/merge').agentStartedAt >= Math.max(...reviews.map((rv) => rv.finishedAt)), 'the merge started after every review ended');
    assert.deepEqual(recordOf(box.registry, 'dag/merge').after, ['dag/review-a', 'dag/review-b', 'dag/review-c']);
  });

  test('a failed first step: dependency-failed down the graph, naming which; --after-any follows regardless', () => {
    const out = assertOk(
      batch('fail.jsonl', [
        { name: 'fail/plan', prompt: 'exit 3' },
        { name: 'fail/review', prompt: 'echo never', after: 'fail/plan' },
        { name: 'fail/merge', prompt: 'echo never', after: ['fail/review'] },
        { name: 'fail/cleanup', prompt: 'echo cleaned', after: 'fail/merge', afterAny: true },
      ]),
    );
    assert.equal(out.started.length, 4);
    const done = waitTerminal(box, ['fail/plan', 'fail/review', 'fail/merge', 'fail/cleanup']);
    assert.equal(done['fail/plan'].reason, 'exit-code');
    for (const [name, after] of [
      ['fail/review', 'fail/plan'],
      ['fail/merge', 'fail/review'],
    ] as const) {
      const a = done[name];
      assert.equal(a.status, 'done');
      assert.equal(a.outcome, 'failed');
      assert.equal(a.reason, 'dependency-failed');
      assert.equal(a.exitCode, null);
      assert.equal(a.agentPid, null, 'never started');
      assert.match(a.error, new RegExp(`"${after}" run 1 failed`));
    }
    assert.match(done['fail/review'].error, /\(exit-code\)/);
    assert.match(done['fail/merge'].error, /\(dependency-failed\)/);
    assert.equal(done['fail/cleanup'].outcome, 'succeeded');
    assert.equal(resultText(box, 'fail/cleanup'), 'cleaned\n');
  });

  test('--after on start and resume: a name already done is no wait; a resume follows a run', async () => {
    const g = join(box.dir, 'gate-flags');
    startShell(box, 'flags/first', `${gate(g)}; echo first`);
    startShell(box, 'flags/done', 'echo done');
    waitTerminal(box, ['flags/done']);
    const line = startShell(box, 'flags/second', 'echo second', ['--after', 'flags/first,flags/done']);
    assert.equal(line.status, 'scheduled');
    await untilStatus(box, 'flags/second', (a) => a.waitingFor.length === 1, 'the done name dropped');
    assert.deepEqual(statusOf(box, 'flags/second').waitingFor, ['flags/first']);
    const resumed = assertOk(box.run('resume-subagent', ['--name', 'flags/done', '--prompt', 'echo again', '--after', 'flags/second']));
    assert.equal(resumed.run, 2);
    open(g);
    const done = waitTerminal(box, ['flags/first', 'flags/second', 'flags/done']);
    assert.equal(done['flags/second'].outcome, 'succeeded');
    assert.equal(done['flags/done'].outcome, 'succeeded');
    assert.equal(done['flags/done'].run, 2);
    assert.ok(times('flags/second').agentStartedAt >= times('flags/first').finishedAt);
    assert.ok(Date.parse(recordOf(box.registry, 'flags/done', 2).agentStartedAt) >= times('flags/second').finishedAt);
  });

  test('refused at start, changing nothing: an unknown name, a name of another registry, a cycle', () => {
    startShell(box, 'ref/known', 'echo known');
    waitTerminal(box, ['ref/known']);
    const unknown = expectError(
      box,
      'start-subagent',
      ['--cli', 'shell', '--name', 'ref/new', '--prompt', 'x', '--after', 'ref/known,ref/nope'],
      'E_NAME_NOT_FOUND',
    );
    assert.equal(unknown.details.name, 'ref/nope');
    // A name of another registry is not one of this one's.
    const other = { SUBAGENT_DIR: join(box.dir, 'other-registry') };
    assertOk(box.run('start-subagent', ['--cli', 'shell', '--name', 'ref/elsewhere', '--prompt', 'true'], { env: other }));
    waitTerminal(box, ['ref/elsewhere'], { env: other });
    expectError(box, 'start-subagent', ['--cli', 'shell', '--name', 'ref/new', '--prompt', 'x', '--after', 'ref/elsewhere'], 'E_NAME_NOT_FOUND');
    const self = expectError(box, 'start-subagent', ['--cli', 'shell', '--name', 'ref/new', '--prompt', 'x', '--after', 'ref/new'], 'E_ARG_INVALID');
    assert.deepEqual(self.details.cycle, ['ref/new', 'ref/new']);
    expectError(box, 'resume-subagent', ['--name', 'ref/known', '--prompt', 'x', '--after', 'ref/known'], 'E_ARG_INVALID');
    expectError(box, 'start-subagent', ['--cli', 'shell', '--name', 'ref/new', '--prompt', 'x', '--after', 'bad//name'], 'E_NAME_INVALID');
  });

  test('a batch whose lines make a cycle: those lines refused, with what follows them; the rest started', () => {
    const r = batch('cycle.jsonl', [
      { name: 'cyc/a', prompt: 'echo a', after: 'cyc/c' },
      { name: 'cyc/b', prompt: 'echo b', after: 'cyc/a' },
      { name: 'cyc/c', prompt: 'echo c', after: 'cyc/b' },
      { name: 'cyc/d', prompt: 'echo d', after: 'cyc/a' },
      { name: 'cyc/free', prompt: 'echo free' },
    ]);
    const out = assertError(r, 'E_BATCH_INCOMPLETE');
    assert.deepEqual(
      out.started.map((s: any) => s.name),
      ['cyc/free'],
    );
    assert.deepEqual(
      out.failed.map((f: any) => [f.line, f.name, f.code]),
      [
        [1, 'cyc/a', 'E_ARG_INVALID'],
        [2, 'cyc/b', 'E_ARG_INVALID'],
        [3, 'cyc/c', 'E_ARG_INVALID'],
        [4, 'cyc/d', 'E_NAME_NOT_FOUND'],
      ],
    );
    assert.match(out.failed[0].error, /cycle/);
    for (const n of ['cyc/a', 'cyc/b', 'cyc/c', 'cyc/d']) assert.equal(statusOf(box, n), undefined, `${n} not recorded`);
    waitTerminal(box, ['cyc/free']);
  });

  test('a cancel of a waiting run ends it at once, cancelled before its start; what it followed goes on', async () => {
    const g = join(box.dir, 'gate-cancel');
    startShell(box, 'can/first', `${gate(g)}; echo first`);
    startShell(box, 'can/waiting', 'echo never', ['--after', 'can/first']);
    await untilStatus(box, 'can/first', (a) => a.status === 'running', 'first running');
    const c = assertOk(box.run('cancel', ['--name', 'can/waiting']));
    assert.equal(c.previousStatus, 'scheduled');
    const a = waitTerminal(box, ['can/waiting'])['can/waiting'];
    assert.equal(a.outcome, 'cancelled');
    assert.equal(a.endReason, 'cancelled-before-start');
    assert.deepEqual(a.waitingFor, []);
    assert.equal(statusOf(box, 'can/first').status, 'running');
    open(g);
    assert.equal(waitTerminal(box, ['can/first'])['can/first'].outcome, 'succeeded');
  });

  test('a waiting run whose supervisor was killed is unknown; revived, it waits again for what it still waited for', async () => {
    const g = join(box.dir, 'gate-revive');
    startShell(box, 'rev/first', `${gate(g)}; echo first`);
    startShell(box, 'rev/waiting', 'echo followed', ['--after', 'rev/first']);
    const waiting = await untilStatus(box, 'rev/waiting', (a) => a.status === 'scheduled' && a.pid !== null, 'waiting, its supervisor known');
    process.kill(waiting.pid, 'SIGKILL');
    await untilStatus(box, 'rev/waiting', (a) => a.status === 'unknown', 'unknown');
    const revived = assertOk(box.run('resume-subagent', ['--revive', '--name', 'rev/waiting']));
    assert.equal(revived.revived.length, 1);
    const again = await untilStatus(box, 'rev/waiting', (a) => a.run === 2 && a.status === 'scheduled', 'run 2 waiting');
    assert.deepEqual(again.waitingFor, ['rev/first']);
    assert.equal(statusOf(box, 'rev/first').status, 'running');
    open(g);
    const done = waitTerminal(box, ['rev/first', 'rev/waiting']);
    assert.equal(done['rev/waiting'].outcome, 'succeeded');
    assert.equal(resultText(box, 'rev/waiting'), 'followed\n');
    assert.ok(Date.parse(recordOf(box.registry, 'rev/waiting', 2).agentStartedAt) >= Date.parse(recordOf(box.registry, 'rev/first').finishedAt));
  });

  test('with a concurrency limit: a waiting run holds no place in the queue, and queues once it may start', async () => {
    const g = join(box.dir, 'gate-queue');
    const env = { SUBAGENT_DIR: join(box.dir, 'queued-registry') };
    assertOk(box.run('start-subagent', ['--cli', 'shell', '--name', 'q/first', '--prompt', `${gate(g)}; echo first`, '--max-concurrent', '1'], { env }));
    assertOk(box.run('start-subagent', ['--cli', 'shell', '--name', 'q/follows', '--prompt', 'echo follows', '--after', 'q/first'], { env }));
    assertOk(box.run('start-subagent', ['--cli', 'shell', '--name', 'q/later', '--prompt', `${gate(g)}; echo later`], { env }));
    const listing = await until('q/first running', async () => {
      const agents = byName(assertOk(await box.runAsync('status', [], { env })).agents);
      return agents['q/first']?.status === 'running' && agents['q/later']?.queued ? agents : null;
    });
    assert.equal(listing['q/follows'].queued, false, 'a waiting run is not queued');
    assert.deepEqual(listing['q/follows'].waitingFor, ['q/first']);
    assert.equal(listing['q/later'].queuePosition, 1, 'the run started after it is first in line');
    open(g);
    const done = waitTerminal(box, ['q/first', 'q/follows', 'q/later'], { env });
    for (const a of Object.values(done)) assert.equal(a.outcome, 'succeeded');
    // One at a time: the one that followed started after q/later, which was in line before it asked.
    const later = Date.parse(recordOf(env.SUBAGENT_DIR, 'q/later').finishedAt);
    assert.ok(Date.parse(recordOf(env.SUBAGENT_DIR, 'q/follows').agentStartedAt) >= later);
  });
});
