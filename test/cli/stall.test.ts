// test-order: early — one of the longest files (it waits out stall windows): started first (scripts/test.sh).
/**
 * Issue 16, point 2: stalls. A running run that shows no sign of work — no output, no CPU time of its
 * processes — for --stall-after seconds is reported `stalled` (a flag, not a status), wakes a bare
 * `status --wait`, clears when it works again, and is cancelled only with --stall-action cancel.
 * Run with both process backends (SUBAGENT_PROC_BACKEND=ps reads CPU time from `ps -o time=`).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { assertError, assertOk } from '../support/run.js';
import { LONG, NOTICE_MS, until, WAIT_SEC } from '../support/wait.js';
import { hasInotify, isStopped, liveRunIds, PS_BACKEND, pidAlive, untilGone } from '../support/procs.js';
import { makeBox, testBox } from '../support/box.js';
import { BIN } from '../support/paths.js';
import { recordOf, runDirPath } from '../support/registry.js';
import { expectError, open, startShell, statusOf, untilStatus, waitTerminal } from '../support/shell.js';

const b = makeBox('stall');

/** A file's text, or '' while it does not exist. */
function readText(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}

function supervisorLog(name: string): string {
  return readText(join(runDirPath(b.registry, name), 'supervisor.log'));
}

/** A FIFO the script blocks on (`read` from it: no CPU, no output) until the test writes a line. */
function fifo(name: string): string {
  const path = join(b.dir, name);
  assert.equal(spawnSync('mkfifo', [path]).status, 0, 'mkfifo');
  return path;
}

/**
 * The loop's stall time. `ps` on Linux counts CPU time in whole seconds (macOS's in hundredths): there a
 * loop shows work only when its count passes a second, and on a loaded two-core CI machine it may get
 * less than a third of a CPU for three seconds (seen once: flagged). Ten seconds at a tenth of a CPU.
 */
const BUSY_STALL_SEC = PS_BACKEND && process.platform === 'linux' ? 10 : 3;

describe('stalls', { concurrency: 2 }, () => {
  test('a silent sleep stalls; a silent CPU-bound loop, watched as long, does not', async () => {
    startShell(b, 'idle', 'sleep 300', ['--stall-after', '3']);
    startShell(b, 'busy', 'while :; do :; done', ['--stall-after', String(BUSY_STALL_SEC)]);

    const idle = await untilStatus(b, 'idle', (a) => a.stalled === true, 'idle is stalled', LONG);
    assert.equal(idle.status, 'running', 'a stall is a flag on a running run, not a status');
    assert.equal(idle.stallAfterSec, 3);
    assert.equal(idle.stallAction, 'none');
    assert.equal(typeof idle.stalledSince, 'string');
    assert.ok(Date.parse(idle.stalledSince) <= Date.now());
    assert.ok(Date.parse(idle.stalledSince) >= Date.parse(idle.startedAt), 'stalledSince is the last sign of work, within the run');
    assert.match(supervisorLog('idle'), /stalled: no sign of work since/);

    // The loop, watched until the supervisor has seen it work over more than three stall windows.
    const seen = new Set<string>();
    const busy = await untilStatus(
      b,
      'busy',
      (a) => {
        assert.equal(a.status, 'running', JSON.stringify(a));
        assert.equal(a.stalled, false, `a loop that computes is busy, not stalled: ${JSON.stringify(a)}`);
        assert.equal(a.stalledSince, null);
        if (a.lastWorkAt) seen.add(a.lastWorkAt);
        return seen.size >= 5 && Date.parse(a.lastWorkAt) - Date.parse(a.startedAt) > 3 * BUSY_STALL_SEC * 1000;
      },
      'the loop has been seen working for three stall windows',
      LONG,
    );
    assert.equal(busy.lastActivityAt, null, 'the loop printed nothing: CPU time alone kept it from stalling');
    assert.doesNotMatch(supervisorLog('busy'), /stalled/, 'never flagged, not even for a moment');
    // The sleep is still stalled: nothing cleared it meanwhile.
    assert.equal(statusOf(b, 'idle').stalled, true);
    for (const n of ['idle', 'busy']) assertOk(b.run('cancel', ['--name', n]), `cancel ${n}`);
  });

  test('a stalled run that writes again is no longer stalled, and --wait reports both changes', async () => {
    const f = fifo('p-fifo');
    startShell(b, 'p', `read line < '${f}'; echo "got $line"; sleep 300`, ['--stall-after', '1']);
    const stalled = await untilStatus(b, 'p', (a) => a.stalled, 'stalled', LONG);
    assert.equal(stalled.lastActivityAt, null);

    const w = b.spawn('status', ['--wait', '--name', 'p', '--timeout', WAIT_SEC]);
    await until('the waiter watches', () => hasInotify(w.pid) || w.settled(), LONG);
    writeFileSync(f, 'go\n');
    const r = await w.done;
    const line = assertOk(r, 'status --wait');
    assert.deepEqual(
      line.changed.map((c: any) => [c.name, c.previousStatus, c.status, c.stalled]),
      [['p', 'running', 'running', false]],
      'the end of a stall is a change of the flag alone',
    );
    const a = line.agents[0];
    assert.equal(a.stalled, false);
    assert.equal(a.stalledSince, null);
    assert.match(supervisorLog('p'), /working again/);
    await untilStatus(b, 'p', (x) => x.lastActivityAt !== null, 'its output was read');
    // And silent again: stalled again.
    await untilStatus(b, 'p', (x) => x.stalled, 'stalled again', LONG);
    assertOk(b.run('cancel', ['--name', 'p']), 'cancel');
  });

  test('status --wait with no names is woken by a stall', async (t) => {
    // A box of its own: the bare wait would wake at the other tests' changes.
    const b = testBox(t, 'stall-bare');
    // The stall must come after the waiter's first look (one already in that look is no change to see),
    // however long a loaded machine takes to start the waiter: the run ticks (output is work) until the
    // waiter has read once and holds still at its checkpoint; then it goes quiet, and stalls 5 s later.
    const g = join(b.dir, 'quiet-gate');
    const s = startShell(b, 'w/quiet', `while [ ! -e '${g}' ]; do echo tick; sleep 0.3; done; sleep 300`, ['--stall-after', '5']);
    await untilStatus(b, 'w/quiet', (a) => a.status === 'running', 'running');
    const w = b.spawn('status', ['--wait', '--timeout', WAIT_SEC], { env: { SUBAGENT_TEST_PAUSE_AT: 'wait-after-read' } });
    await until('the waiter holds still after its first look', () => isStopped(w.pid) || w.settled(), LONG);
    assert.equal(w.settled(), false, 'the waiter does not return before the stall');
    open(g);
    process.kill(w.pid, 'SIGCONT');
    const line = assertOk(await w.done, 'status --wait');
    const change = line.changed.find((c: any) => c.name === 'w/quiet');
    assert.deepEqual(
      change,
      { name: 'w/quiet', previousStatus: 'running', status: 'running', run: 1, exitCode: null, finishedAt: null, stalled: true, parkedUntil: null },
      JSON.stringify(line.changed),
    );
    const a = line.agents.find((x: any) => x.name === 'w/quiet');
    assert.equal(a.stalled, true);
    assert.equal(typeof a.stalledSince, 'string');
    assert.equal(a.pid, s.pid);
    assertOk(b.run('cancel', ['--name', 'w/quiet']), 'cancel');
  });

  /**
   * The orchestrator, seen for three of its stall windows from the first check that came after `since`
   * (the moment its child was seen in the state under test): never stalled. Before that check it may be:
   * its own start-subagent's CPU can go unseen (the ps backend counts whole seconds), and a flag raised
   * then clears at the next check that finds the child.
   */
  async function neverStalledAfter(o: ReturnType<typeof testBox>, name: string, since: number, what: string): Promise<void> {
    await untilStatus(o, name, (a) => a.stalled === false && Date.parse(a.lastWorkAt) >= since, `${name}: a check after ${what} saw work`, LONG);
    const seen = new Set<string>();
    await untilStatus(
      o,
      name,
      (a) => {
        assert.equal(a.stalled, false, `${what} is not a stall: ${JSON.stringify(a)}`);
        if (a.lastWorkAt) seen.add(a.lastWorkAt);
        return seen.size >= 3 && Date.parse(a.lastWorkAt) - since > 3 * 2000;
      },
      `${name} has been seen working for three stall windows`,
      LONG,
    );
  }

  const kid = (name: string, script: string, stall: string, more = '') =>
    `'${join(BIN, 'start-subagent')}' --name ${name} --cli shell --prompt '${script}' --stall-after ${stall} ${more} >/dev/null`;
  const waitFor = (name: string) => `'${join(BIN, 'status')}' --wait-terminal --name ${name} --timeout 600 >/dev/null`;

  test('an orchestrating run waiting on a child at work is not stalled; waiting on a stalled child, it is', async (t) => {
    const o = testBox(t, 'stall-nest');
    // The child computes (and is never flagged: --stall-after 0); its parent only waits.
    startShell(o, 'orch', `${kid('orch/kid', 'while :; do :; done', '0')}; ${waitFor('orch/kid')}`, ['--stall-after', '2']);
    startShell(o, 'lazy', `${kid('lazy/kid', 'sleep 300', '1')}; ${waitFor('lazy/kid')}`, ['--stall-after', '2']);
    await untilStatus(o, 'orch/kid', (a) => a.status === 'running', 'the working child runs', LONG);
    await neverStalledAfter(o, 'orch', Date.now(), 'waiting on a child at work');
    assert.equal(statusOf(o, 'orch').status, 'running');
    assert.equal(statusOf(o, 'orch/kid').parent, 'orch');
    const lazy = await untilStatus(o, 'lazy', (a) => a.stalled === true, 'the parent of a stalled child is stalled', LONG);
    assert.equal(statusOf(o, 'lazy/kid').stalled, true);
    assert.equal(lazy.status, 'running');
    for (const n of ['orch/kid', 'lazy/kid']) assertOk(o.run('cancel', ['--name', n]), `cancel ${n}`);
    const ends = waitTerminal(o, ['orch', 'lazy']);
    assert.equal(ends.orch.outcome, 'succeeded', 'the orchestrator ends once its wait returns');
  });

  test('an orchestrating run whose child waits in the queue is not stalled', async (t) => {
    const o = testBox(t, 'stall-queue');
    // The first child takes the registry's one slot and stalls; the second waits for the slot, queued.
    const script = `${kid('orch/hog', 'sleep 300', '1', '--max-concurrent 1')}; ${kid('orch/next', 'true', '0')}; ${waitFor('orch/next')}`;
    startShell(o, 'orch', script, ['--stall-after', '2']);
    await untilStatus(o, 'orch/next', (a) => a.queued === true, 'the second child is queued', LONG);
    await untilStatus(o, 'orch/hog', (a) => a.stalled === true, 'the child holding the slot is stalled', LONG);
    await neverStalledAfter(o, 'orch', Date.now(), 'waiting on a queued child');
    assert.equal(statusOf(o, 'orch/next').status, 'scheduled');
    assertOk(o.run('cancel', ['--name', 'orch/hog']), 'cancel orch/hog');
    const ends = waitTerminal(o, ['orch', 'orch/next']);
    assert.equal(ends['orch/next'].outcome, 'succeeded', 'the queued child ran once the slot was free');
    assert.equal(ends.orch.outcome, 'succeeded');
  });

  test('--stall-action cancel: a stalled run that ignores SIGTERM is cancelled for the stall, and nothing of it is left', async () => {
    const pids = join(b.dir, 'c-pids');
    startShell(b, 'c', `trap '' TERM; sleep 300 & echo $! > '${pids}'; echo $$ >> '${pids}'; wait`, ['--stall-after', '1', '--stall-action', 'cancel']);
    const runId = recordOf(b.registry, 'c').runId;
    const kids = await until('the script wrote its pids', () => {
      const t = readText(pids).trim().split('\n');
      return t.length === 2 ? t.map(Number) : null;
    });
    const end = waitTerminal(b, ['c']).c;
    assert.equal(end.status, 'done', JSON.stringify(end));
    assert.equal(end.outcome, 'cancelled');
    assert.equal(end.endReason, 'stalled');
    assert.equal(end.reason, 'stalled', 'the reason to branch on');
    assert.match(end.error, /no sign of work for 1 s \(--stall-action cancel\)/);
    assert.equal(end.cancelRequested, true);
    assert.equal(end.signal, 'SIGKILL', 'TERM was ignored: the grace ran out and KILL ended it');
    assert.equal(end.stalled, false, 'a done run is never reported stalled');
    assert.equal(recordOf(b.registry, 'c').cancel.reason, 'stalled');
    for (const p of kids) await untilGone(p, `process ${p} of the run`, NOTICE_MS);
    await until('no process of the run is left', () => !liveRunIds(b.marker).has(runId), NOTICE_MS);
    const supervisor = end.pid;
    await until('the supervisor exited', () => !pidAlive(supervisor), NOTICE_MS);
  });
});

describe('stall settings', () => {
  test('recorded per run: the default, SUBAGENT_STALL_SEC, the flags; resume keeps or overrides them', () => {
    startShell(b, 's/default', 'true');
    assert.equal(statusOf(b, 's/default').stallAfterSec, 600, 'the default: ten minutes');
    startShell(b, 's/env', 'true', [], { env: { SUBAGENT_STALL_SEC: '45' } });
    assert.equal(statusOf(b, 's/env').stallAfterSec, 45);
    startShell(b, 's/env-off', 'true', [], { env: { SUBAGENT_STALL_SEC: 'off' } });
    assert.equal(statusOf(b, 's/env-off').stallAfterSec, null, 'off: not watched');
    startShell(b, 's/flags', 'true', ['--stall-after', '7.5', '--stall-action', 'cancel'], { env: { SUBAGENT_STALL_SEC: '45' } });
    let a = statusOf(b, 's/flags');
    assert.equal(a.stallAfterSec, 7.5, 'the flag wins over the environment');
    assert.equal(a.stallAction, 'cancel');
    waitTerminal(b, ['s/flags']);

    assertOk(b.run('resume-subagent', ['--name', 's/flags', '--prompt', 'true'], { env: { SUBAGENT_STALL_SEC: '45' } }), 'resume');
    a = statusOf(b, 's/flags');
    assert.deepEqual([a.run, a.stallAfterSec, a.stallAction], [2, 7.5, 'cancel'], 'a resume keeps the settings of the run');
    waitTerminal(b, ['s/flags']);
    assertOk(b.run('resume-subagent', ['--name', 's/flags', '--prompt', 'true', '--stall-after', '30', '--stall-action', 'none']), 'resume');
    a = statusOf(b, 's/flags');
    assert.deepEqual([a.run, a.stallAfterSec, a.stallAction], [3, 30, 'none']);
    waitTerminal(b, ['s/flags']);
    assertOk(b.run('resume-subagent', ['--name', 's/flags', '--prompt', 'true', '--stall-after', 'off']), 'resume');
    a = statusOf(b, 's/flags');
    assert.deepEqual([a.run, a.stallAfterSec, a.stallAction], [4, null, 'none']);
    waitTerminal(b, ['s/default', 's/env', 's/env-off', 's/flags']);
  });

  test('batch lines take stallAfter, stallAction, and the flags next to --batch as defaults', () => {
    const lines = [
      JSON.stringify({ name: 'bs/one', prompt: 'true', cli: 'shell' }),
      JSON.stringify({ name: 'bs/two', prompt: 'true', cli: 'shell', stallAfter: 'off' }),
      JSON.stringify({ name: 'bs/three', prompt: 'true', cli: 'shell', stallAfter: 20, stallAction: 'none' }),
      JSON.stringify({ name: 'bs/bad', prompt: 'true', cli: 'shell', stallAfter: 'soon' }),
      JSON.stringify({ name: 'bs/bad2', prompt: 'true', cli: 'shell', stallAction: 'explode' }),
    ].join('\n');
    const r = b.run('start-subagent', ['--batch', '-', '--stall-after', '90', '--stall-action', 'cancel'], { input: lines });
    const j = assertError(r, 'E_BATCH_INCOMPLETE');
    assert.deepEqual(
      j.started.map((s: any) => s.name),
      ['bs/one', 'bs/two', 'bs/three'],
    );
    assert.deepEqual(
      j.failed.map((f: any) => [f.line, f.code]),
      [
        [4, 'E_ARG_INVALID'],
        [5, 'E_ARG_INVALID'],
      ],
    );
    const by = (n: string) => statusOf(b, n);
    assert.deepEqual([by('bs/one').stallAfterSec, by('bs/one').stallAction], [90, 'cancel']);
    assert.deepEqual([by('bs/two').stallAfterSec, by('bs/two').stallAction], [null, 'none']);
    assert.deepEqual([by('bs/three').stallAfterSec, by('bs/three').stallAction], [20, 'none']);
    assert.equal(statusOf(b, 'bs/bad'), undefined, 'a refused line records nothing');
    waitTerminal(b, ['bs/one', 'bs/two', 'bs/three']);
  });

  test('bad values are E_ARG_INVALID and nothing is recorded', (t) => {
    // A box of its own: nothing else may change in it while each refusal is checked.
    const b = testBox(t, 'stall-bad');
    for (const extra of [
      ['--stall-after', 'soon'],
      ['--stall-after', '-1'],
      ['--stall-after', ''],
      ['--stall-action', 'kill'],
      ['--stall-action', 'cancel', '--stall-after', '0'],
    ]) {
      const j = expectError(b, 'start-subagent', ['--name', 'bad', '--cli', 'shell', '--prompt', 'true', ...extra], 'E_ARG_INVALID');
      assert.match(j.error, /stall/, JSON.stringify(j));
    }
    expectError(b, 'start-subagent', ['--name', 'bad', '--cli', 'shell', '--prompt', 'true'], 'E_ARG_INVALID', { env: { SUBAGENT_STALL_SEC: 'ten' } });
    expectError(b, 'start-subagent', ['--name', 'bad', '--cli', 'shell', '--prompt', 'true', '--stall-action', 'cancel'], 'E_ARG_INVALID', {
      env: { SUBAGENT_STALL_SEC: '0' },
    });
    startShell(b, 'bad/resume', 'true');
    waitTerminal(b, ['bad/resume']);
    for (const extra of [
      ['--stall-after', 'x'],
      ['--stall-action', 'maybe'],
    ])
      expectError(b, 'resume-subagent', ['--name', 'bad/resume', '--prompt', 'true', ...extra], 'E_ARG_INVALID');
    assert.equal(statusOf(b, 'bad/resume').run, 1, 'no run was added');
  });
});
