/**
 * Issue 27, point 2: follow-ups queued to a busy run (`resume-subagent --queue`), through the real
 * executables — answered at once with their position, run in order in the same session as the name's
 * next runs, shown in status (`queuedPrompts`), dropped with `subagent-cancel --queued`, stopped by a run
 * that did not succeed (unless `--after-any`), and nothing lost or run twice when supervisors are killed.
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { makeBox } from '../support/box.js';
import { recordOf } from '../support/registry.js';
import { isStopped, untilGone } from '../support/procs.js';
import { until } from '../support/wait.js';
import { assertError, assertOk } from '../support/run.js';
import { gate, open, resultText, startShell, statusOf, untilStatus, waitTerminal } from '../support/shell.js';

const box = makeBox('follow-ups');

function queue(name: string, prompt: string, extra: string[] = [], env: NodeJS.ProcessEnv = {}): any {
  return assertOk(box.run('resume-subagent', ['--queue', '--name', name, '--prompt', prompt, ...extra], { env }), `queue ${prompt}`);
}

/** The answers of runs 1…n of a name, in order. */
function answers(name: string, n: number): string[] {
  return Array.from({ length: n }, (_, i) => box.run('result', ['--name', name, '--run', String(i + 1)]).stdout);
}

describe('resume-subagent --queue', () => {
  test('three follow-ups queued to a running run: answered at once in order, run one at a time, in order, and --wait-terminal waits through them', async () => {
    const g = join(box.dir, 'gate-three');
    startShell(box, 'fu/three', `${gate(g)}; echo one`);
    await untilStatus(box, 'fu/three', (a) => a.status === 'running', 'running');
    const lines = ['two', 'three', 'four'].map((p) => queue('fu/three', `echo ${p}`));
    assert.deepEqual(
      lines.map((l) => [l.mode, l.position, l.after]),
      [
        ['queued', 1, 1],
        ['queued', 2, 1],
        ['queued', 3, 1],
      ],
    );
    const queued = statusOf(box, 'fu/three');
    assert.equal(queued.status, 'running');
    assert.deepEqual(
      queued.queuedPrompts.map((q: any) => [q.position, q.promptBytes, q.afterAny]),
      [
        [1, 8, false],
        [2, 10, false],
        [3, 9, false],
      ],
    );
    open(g);
    const done = waitTerminal(box, ['fu/three'])['fu/three'];
    assert.equal(done.run, 4, 'the wait returned after the last follow-up');
    assert.equal(done.outcome, 'succeeded');
    assert.deepEqual(done.queuedPrompts, []);
    assert.deepEqual(answers('fu/three', 4), ['one\n', 'two\n', 'three\n', 'four\n']);
    for (let run = 2; run <= 4; run++) {
      assert.ok(Date.parse(recordOf(box.registry, 'fu/three', run).agentStartedAt) >= Date.parse(recordOf(box.registry, 'fu/three', run - 1).finishedAt));
    }
  });

  test('an idle name is resumed at once; --queue keeps the name options (another option is refused)', () => {
    startShell(box, 'fu/idle', 'echo first');
    waitTerminal(box, ['fu/idle']);
    const r = queue('fu/idle', 'echo now');
    assert.equal(r.mode, 'resume');
    assert.equal(r.run, 2);
    assert.equal(waitTerminal(box, ['fu/idle'])['fu/idle'].outcome, 'succeeded');
    assert.equal(resultText(box, 'fu/idle'), 'now\n');
    assertError(box.run('resume-subagent', ['--queue', '--name', 'fu/idle', '--prompt', 'x', '--max-time', '5']), 'E_ARG_INVALID');
    assertError(box.run('resume-subagent', ['--queue', '--name', 'fu/never', '--prompt', 'x']), 'E_NAME_NOT_FOUND');
  });

  test('subagent-cancel --queued drops one by position, or all, without touching the running run', async () => {
    const g = join(box.dir, 'gate-cancel');
    startShell(box, 'fu/cancel', `${gate(g)}; echo one`);
    await untilStatus(box, 'fu/cancel', (a) => a.status === 'running', 'running');
    for (const p of ['a', 'b', 'c']) queue('fu/cancel', `echo ${p}`);
    const one = assertOk(box.run('cancel', ['--name', 'fu/cancel', '--queued', '--position', '2']));
    assert.deepEqual(
      one.dropped.map((d: any) => d.promptBytes),
      [6],
    );
    assert.deepEqual(
      one.queuedPrompts.map((q: any) => q.position),
      [1, 2],
    );
    assert.equal(statusOf(box, 'fu/cancel').status, 'running', 'the running run is not touched');
    assertError(box.run('cancel', ['--name', 'fu/cancel', '--queued', '--signal', 'KILL']), 'E_ARG_INVALID');
    assertError(box.run('cancel', ['--name', 'fu/cancel', '--position', '1']), 'E_ARG_INVALID');
    open(g);
    const done = waitTerminal(box, ['fu/cancel'])['fu/cancel'];
    assert.equal(done.run, 3);
    assert.deepEqual(answers('fu/cancel', 3), ['one\n', 'a\n', 'c\n']);
    // All of them, while the run holds.
    const g2 = join(box.dir, 'gate-cancel-2');
    assertOk(box.run('resume-subagent', ['--name', 'fu/cancel', '--prompt', `${gate(g2)}; echo four`]));
    await untilStatus(box, 'fu/cancel', (a) => a.status === 'running' && a.run === 4, 'run 4 running');
    queue('fu/cancel', 'echo x');
    queue('fu/cancel', 'echo y');
    const all = assertOk(box.run('cancel', ['--name', 'fu/cancel', '--queued']));
    assert.equal(all.dropped.length, 2);
    assert.deepEqual(all.queuedPrompts, []);
    open(g2);
    assert.equal(waitTerminal(box, ['fu/cancel'])['fu/cancel'].run, 4);
  });

  test('a run that did not succeed stops the queue (its prompts stay); one queued --after-any goes on regardless', async () => {
    const g = join(box.dir, 'gate-fail');
    startShell(box, 'fu/fail', `${gate(g)}; exit 3`);
    await untilStatus(box, 'fu/fail', (a) => a.status === 'running', 'running');
    queue('fu/fail', 'echo held');
    open(g);
    const failed = waitTerminal(box, ['fu/fail'])['fu/fail'];
    assert.equal(failed.run, 1);
    assert.equal(failed.reason, 'exit-code');
    assert.equal(failed.queuedPrompts.length, 1, 'kept, not run');
    // A resume runs; after its success the queue goes on.
    assertOk(box.run('resume-subagent', ['--name', 'fu/fail', '--prompt', 'echo fixed']));
    const after = waitTerminal(box, ['fu/fail'])['fu/fail'];
    assert.equal(after.run, 3);
    assert.deepEqual(answers('fu/fail', 3).slice(1), ['fixed\n', 'held\n']);

    const g2 = join(box.dir, 'gate-any');
    startShell(box, 'fu/any', `${gate(g2)}; exit 4`);
    await untilStatus(box, 'fu/any', (a) => a.status === 'running', 'running');
    queue('fu/any', 'echo regardless', ['--after-any']);
    open(g2);
    const any = waitTerminal(box, ['fu/any'])['fu/any'];
    assert.equal(any.run, 2);
    assert.equal(any.outcome, 'succeeded');
  });

  test('--queue --batch: one follow-up a line, queued in file order; an idle name resumed at once; a bad line reported', async () => {
    const g = join(box.dir, 'gate-batch');
    startShell(box, 'fu/batch', `${gate(g)}; echo one`);
    startShell(box, 'fu/batch-idle', 'echo idle');
    waitTerminal(box, ['fu/batch-idle']);
    await untilStatus(box, 'fu/batch', (a) => a.status === 'running', 'running');
    const lines = [
      { name: 'fu/batch', prompt: 'echo two' },
      { name: 'fu/batch-idle', prompt: 'echo again' },
      { name: 'fu/batch', prompt: 'echo three', afterAny: true },
      { name: 'fu/batch', prompt: 'echo x', model: 'm' },
    ];
    writeFileSync(join(box.dir, 'follow.jsonl'), lines.map((l) => JSON.stringify(l)).join('\n'));
    const r = assertError(box.run('resume-subagent', ['--queue', '--batch', 'follow.jsonl']), 'E_BATCH_INCOMPLETE');
    assert.deepEqual(
      r.queued.map((q: any) => [q.line, q.name, q.mode, q.position, q.run]),
      [
        [1, 'fu/batch', 'queued', 1, 1],
        [2, 'fu/batch-idle', 'resume', null, 2],
        [3, 'fu/batch', 'queued', 2, 1],
      ],
    );
    assert.deepEqual(
      r.failed.map((f: any) => [f.line, f.code]),
      [[4, 'E_ARG_UNKNOWN']],
    );
    assertError(box.run('resume-subagent', ['--batch', 'follow.jsonl']), 'E_ARG_INVALID');
    open(g);
    const done = waitTerminal(box, ['fu/batch', 'fu/batch-idle']);
    assert.equal(done['fu/batch'].run, 3);
    assert.deepEqual(answers('fu/batch', 3), ['one\n', 'two\n', 'three\n']);
    assert.equal(resultText(box, 'fu/batch-idle'), 'again\n');
  });

  test('a look that chose run N as the latest just before its follow-up appeared shows the follow-up, never run N ended', async () => {
    const g = join(box.dir, 'gate-chosen');
    startShell(box, 'fu/chosen', `${gate(g)}; echo one`);
    await untilStatus(box, 'fu/chosen', (a) => a.status === 'running', 'running');
    queue('fu/chosen', `${gate(join(box.dir, 'gate-chosen-2'))}; echo two`);
    // The listing and the one-name look hold still once they have chosen run 1; then run 1 ends, its
    // follow-up is published as run 2, and run 1 is recorded done.
    const env = { SUBAGENT_TEST_PAUSE_AT: 'observe-latest-chosen' };
    const listing = box.spawn('status', ['--prefix', 'fu'], { env });
    const one = box.spawn('status', ['--name', 'fu/chosen'], { env });
    for (const v of [listing, one]) await until('the look holds still after its choice', () => isStopped(v.pid) || v.settled(), 60_000);
    open(g);
    await until('run 1 recorded done', () => recordOf(box.registry, 'fu/chosen', 1).status === 'done', 60_000);
    assert.equal(recordOf(box.registry, 'fu/chosen', 1).followedUp, true);
    for (const v of [listing, one]) {
      process.kill(v.pid, 'SIGCONT');
      const a = assertOk(await v.done).agents.find((x: any) => x.name === 'fu/chosen');
      assert.equal(a.run, 2, JSON.stringify(a));
      assert.notEqual(a.status, 'done');
    }
    open(join(box.dir, 'gate-chosen-2'));
    assert.equal(waitTerminal(box, ['fu/chosen'])['fu/chosen'].run, 2);
  });

  test('a supervisor SIGKILLed between two follow-ups: each prompt runs once, in order, nothing lost', async () => {
    const g = join(box.dir, 'gate-kill');
    // Every supervisor of the chain kills itself right after it published the next run, before its own end.
    const env = { SUBAGENT_TEST_CRASH_AT: 'follow-up-published' };
    startShell(box, 'fu/kill', `${gate(g)}; echo one`, [], { env });
    await untilStatus(box, 'fu/kill', (a) => a.status === 'running', 'running');
    queue('fu/kill', 'echo two');
    queue('fu/kill', 'echo three');
    open(g);
    const last = await untilStatus(box, 'fu/kill', (a) => a.run === 3 && a.status === 'done', 'run 3 done');
    assert.equal(last.outcome, 'succeeded');
    assert.deepEqual(last.queuedPrompts, []);
    for (const run of [1, 2])
      assert.equal(box.run('status', ['--runs', '--name', 'fu/kill']).json.runs[run - 1].status, 'unknown', `run ${run}: its supervisor died`);
    assert.equal(box.run('result', ['--name', 'fu/kill', '--run', '2']).stdout, 'two\n');
    assert.equal(resultText(box, 'fu/kill'), 'three\n');
    assert.equal(box.run('status', ['--runs', '--name', 'fu/kill']).json.runs.length, 3, 'no prompt ran twice');
  });

  test('the supervisor died before it looked: the verbs that notice the end start the next prompt once, even racing', async () => {
    const g = join(box.dir, 'gate-race');
    startShell(box, 'fu/race', `${gate(g)}; echo one`, [], { env: { SUBAGENT_TEST_CRASH_AT: 'before-follow-up' } });
    await untilStatus(box, 'fu/race', (a) => a.status === 'running', 'running');
    queue('fu/race', 'echo two', ['--after-any']);
    open(g);
    await untilStatus(box, 'fu/race', (a) => a.status === 'unknown' && !a.agentAlive, 'run 1 unknown, its supervisor killed');
    // Two verbs notice at once: the next prompt is published once, and each queues its own.
    const [a, b] = await Promise.all([
      box.runAsync('resume-subagent', ['--queue', '--name', 'fu/race', '--prompt', 'echo three', '--after-any']),
      box.runAsync('resume-subagent', ['--queue', '--name', 'fu/race', '--prompt', 'echo four', '--after-any']),
    ]);
    assertOk(a);
    assertOk(b);
    const last = await untilStatus(
      box,
      'fu/race',
      (x) => x.status !== 'running' && x.status !== 'scheduled' && x.queuedPrompts.length === 0 && x.run === 4,
      'all run',
    );
    assert.equal(last.run, 4);
    const texts = answers('fu/race', 4).slice(1).sort();
    assert.deepEqual(texts, ['four\n', 'three\n', 'two\n']);
    assert.equal(box.run('result', ['--name', 'fu/race', '--run', '2']).stdout, 'two\n', 'the prompt queued first ran first');
  });

  test('a supervisor SIGKILLed before it looked, after a success: status --announce starts the next prompt once, even racing, and --wait-terminal --announce waits through the queue', async () => {
    const g = join(box.dir, 'gate-settled');
    startShell(box, 'fu/settled', `${gate(g)}; echo one`, [], { env: { SUBAGENT_TEST_CRASH_AT: 'before-follow-up' } });
    await untilStatus(box, 'fu/settled', (a) => a.status === 'running', 'running');
    queue('fu/settled', 'echo two');
    queue('fu/settled', 'echo three');
    open(g);
    await untilStatus(box, 'fu/settled', (a) => a.status === 'unknown' && !a.agentAlive, 'run 1 unknown, its supervisor killed');
    // Reading never acts: a listing leaves the queue as it is.
    const read = statusOf(box, 'fu/settled');
    assert.equal(read.run, 1);
    assert.equal(read.queuedPrompts.length, 2);
    assert.equal(box.run('status', ['--runs', '--name', 'fu/settled']).json.runs.length, 1);
    // Three verbs notice at once: the next prompt is published once; each listing shows the name going on.
    const [a, b, c] = await Promise.all([
      box.runAsync('status', ['--announce', '--name', 'fu/settled']),
      box.runAsync('status', ['--announce', '--name', 'fu/settled']),
      box.runAsync('resume-subagent', ['--queue', '--name', 'fu/settled', '--prompt', 'echo four']),
    ]);
    for (const listing of [a, b]) {
      const entry = assertOk(listing).agents[0];
      assert.ok(entry.run >= 2 && entry.status !== 'unknown', JSON.stringify(entry));
    }
    assert.equal(assertOk(c).mode, 'queued');
    const last = assertOk(box.run('status', ['--wait-terminal', '--announce', '--name', 'fu/settled'])).agents[0];
    assert.equal(last.run, 4, JSON.stringify(last));
    assert.equal(last.outcome, 'succeeded');
    assert.deepEqual(answers('fu/settled', 4), ['one\n', 'two\n', 'three\n', 'four\n'], 'in order, none twice');
    assert.equal(box.run('status', ['--runs', '--name', 'fu/settled']).json.runs[0].status, 'unknown', 'run 1 stays unknown: its supervisor died');
  });

  test('a supervisor SIGKILLed before it looked, after a failure: the queue stops, prompts kept, until a resume succeeds', async () => {
    const g = join(box.dir, 'gate-settled-failed');
    startShell(box, 'fu/settled-failed', `${gate(g)}; echo one; exit 3`, [], { env: { SUBAGENT_TEST_CRASH_AT: 'before-follow-up' } });
    await untilStatus(box, 'fu/settled-failed', (a) => a.status === 'running', 'running');
    queue('fu/settled-failed', 'echo two');
    queue('fu/settled-failed', 'echo three');
    open(g);
    await untilStatus(box, 'fu/settled-failed', (a) => a.status === 'unknown' && !a.agentAlive, 'run 1 unknown');
    const listed = assertOk(box.run('status', ['--announce', '--name', 'fu/settled-failed'])).agents[0];
    assert.equal(listed.run, 1);
    assert.equal(listed.queuedPrompts.length, 2, 'kept');
    // Its turn had ended: reviving it would run it again.
    const revived = assertOk(box.run('resume-subagent', ['--revive', '--name', 'fu/settled-failed']));
    assert.deepEqual(revived.revived, []);
    assert.match(revived.skipped[0].why, /turn had ended \(failed\)/);
    assert.equal(box.run('status', ['--runs', '--name', 'fu/settled-failed']).json.runs.length, 1, 'nothing started');
    assertOk(box.run('resume-subagent', ['--name', 'fu/settled-failed', '--prompt', 'echo fixed']));
    const last = waitTerminal(box, ['fu/settled-failed'])['fu/settled-failed'];
    assert.equal(last.run, 4, JSON.stringify(last));
    assert.deepEqual(answers('fu/settled-failed', 4).slice(1), ['fixed\n', 'two\n', 'three\n']);
  });

  test('a supervisor SIGKILLed while its agent ran: the outcome is not known, the queue waits; a revive runs it again and the queue goes on', async () => {
    const g = join(box.dir, 'gate-cut');
    startShell(box, 'fu/cut', `${gate(g)}; echo one`);
    const running = await untilStatus(box, 'fu/cut', (a) => a.status === 'running' && a.pid !== null, 'running');
    queue('fu/cut', 'echo two');
    process.kill(running.pid, 'SIGKILL');
    await untilGone(running.pid, 'its supervisor');
    open(g);
    await untilStatus(box, 'fu/cut', (a) => a.status === 'unknown' && !a.agentAlive, 'run 1 unknown, its agent ended');
    assert.equal(assertOk(box.run('status', ['--announce', '--name', 'fu/cut'])).agents[0].run, 1, 'not published: run 1 may have failed');
    const revived = assertOk(box.run('resume-subagent', ['--revive', '--name', 'fu/cut']));
    assert.equal(revived.revived.length, 1, JSON.stringify(revived));
    const last = waitTerminal(box, ['fu/cut'])['fu/cut'];
    assert.equal(last.run, 3, JSON.stringify(last));
    assert.deepEqual(answers('fu/cut', 3).slice(1), ['one\n', 'two\n']);
  });
});
