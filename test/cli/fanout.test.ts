/**
 * Issue 4, fan-out at scale, through the real executables: the concurrency limit (racing starts, a
 * dead supervisor's slot, cancelling a queued run, raising the limit), batch start, CI waiting
 * (--require-success, --junit), nested orchestration (parent, depth, --tree, cancel --recursive),
 * worktrees, and run history (--runs, result --run / --since).
 *
 * The concurrency limit is per registry, so every scenario has its own box (own registry).
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, realpathSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BIN } from '../support/paths.js';
import { assertError } from '../support/run.js';
import { LONG, until, WAIT_SEC } from '../support/wait.js';
import { hasInotify, liveRunIds, pidAlive } from '../support/procs.js';
import { recordOf, runDirOf } from '../support/registry.js';
import { makeBox, type Box } from '../support/box.js';
import { byName, expectError, gate, open, resultText, shellArgs, startShell, statusLineAsync, statusOf, untilStatus, waitTerminal } from '../support/shell.js';
import { checkJunit, findAll, validateJunit, type XmlElement } from '../support/junit.js';

const bRace = makeBox('fan-race');
const bKill = makeBox('fan-kill');
const bQueue = makeBox('fan-queue');
const bBatch = makeBox('fan-batch');
const bCi = makeBox('fan-ci');
const bJoin = makeBox('fan-join');
const bJunit = makeBox('fan-junit');
const bNest = makeBox('fan-nest');
const bTree = makeBox('fan-wt');
const bHist = makeBox('fan-hist');

function git(cwd: string, args: string[]): string {
  const r = spawnSync('git', ['-c', 'user.email=t@example.com', '-c', 'user.name=Fanout Test', '-c', 'init.defaultBranch=main', ...args], { cwd, encoding: 'utf8' });
  assert.equal(r.status, 0, `git ${args.join(' ')} in ${cwd}: ${r.stderr}`);
  return r.stdout.trim();
}

/**
 * Proves that the queued run `waiter` looked at the queue after the slot holder's supervisor died and
 * found no free slot: its ticket is removed, which wakes its supervisor, and a supervisor that did not
 * get a slot puts its ticket back (one that got it would start the run instead).
 */
async function assertSlotStillHeld(b: Box, waiter: string): Promise<void> {
  const ticket = join(b.registry, 'queue', 'tickets', recordOf(b.registry, waiter).queueTicket);
  assert.ok(existsSync(ticket), `${waiter} must still be waiting in the queue (its ticket is gone: it took a slot)`);
  unlinkSync(ticket);
  await until(`${waiter} looked at the queue again`, () => existsSync(ticket) || statusOf(b, waiter).status !== 'scheduled', LONG, 100);
  const w = statusOf(b, waiter);
  assert.deepEqual([w.status, w.queued], ['scheduled', true], `${waiter} must still wait: the slot holder's agent is alive`);
}

/** The largest number of [start, end] intervals covering one instant (an end at t comes before a start at t). */
function maxOverlap(intervals: Array<{ start: number; end: number }>): number {
  const ev = intervals.flatMap((iv) => [
    { t: iv.start, d: 1 },
    { t: iv.end, d: -1 },
  ]);
  ev.sort((a, b) => a.t - b.t || a.d - b.d);
  let cur = 0;
  let max = 0;
  for (const e of ev) {
    cur += e.d;
    max = Math.max(max, cur);
  }
  return max;
}

describe('concurrency limit', () => {
  test('30 starts racing against --max-concurrent 3: never more than 3 running, queued runs have positions, all 30 succeed', async (t) => {
    const b = bRace;
    const g = join(b.dir, 'gate-race');
    const names = Array.from({ length: 30 }, (_, i) => `race/r${String(i).padStart(2, '0')}`);

    // Pollers: the status verb every ~50 ms, and /proc (live agent processes, grouped by run id).
    const polls: Array<{ at: number; running: string[]; queued: Array<{ name: string; pos: unknown }>; queue: any }> = [];
    const pollErrors: string[] = [];
    let maxProcRuns = 0;
    let procScans = 0;
    let stop = false;
    const scan = () => {
      const n = liveRunIds(b.marker).size;
      procScans++;
      maxProcRuns = Math.max(maxProcRuns, n);
    };
    const timer = setInterval(scan, 25);
    // A new status every ~50 ms, up to 3 in flight (one spawn can take a second on a loaded machine).
    const poll = async () => {
      const r = await b.runAsync('status', ['--prefix', 'race']);
      if (r.code !== 0 || r.json?.ok !== true) pollErrors.push(`${r.code} ${r.stdout}${r.stderr}`);
      else {
        polls.push({
          at: Date.now(),
          running: r.json.agents.filter((a: any) => a.status === 'running').map((a: any) => a.name),
          queued: r.json.agents.filter((a: any) => a.queued).map((a: any) => ({ name: a.name, pos: a.queuePosition })),
          queue: r.json.queue,
        });
      }
    };
    const poller = (async () => {
      const inFlight = new Set<Promise<void>>();
      while (!stop) {
        if (inFlight.size < 3) {
          const p: Promise<void> = poll().finally(() => inFlight.delete(p));
          inFlight.add(p);
        }
        await new Promise((res) => setTimeout(res, 50));
      }
      await Promise.all(inFlight);
    })();

    try {
      const outs = await Promise.all(names.map((n, i) => b.runAsync('start-subagent', shellArgs(n, `${gate(g)}; sleep 0.2; echo out-${i}`, ['--max-concurrent', '3']))));
      outs.forEach((r, i) => {
        assert.equal(r.code, 0, `${names[i]}: ${r.stdout}${r.stderr}`);
        assert.equal(r.json.ok, true);
        assert.equal(r.json.name, names[i]);
        assert.equal(r.json.status, 'scheduled');
      });

      // With the gate shut, exactly 3 hold a slot and 27 wait, numbered 1..27.
      const full = await until('3 running and 27 queued', async () => {
        const s = await statusLineAsync(b, ['--prefix', 'race']);
        const running = s.agents.filter((a: any) => a.status === 'running');
        const queued = s.agents.filter((a: any) => a.queued);
        return running.length === 3 && queued.length === 27 && s.queue?.running === 3 && s.queue?.queued === 27 ? s : null;
      }, LONG, 50);
      assert.deepEqual(full.queue, { limit: 3, running: 3, queued: 27 });
      const queued = full.agents.filter((a: any) => a.queued);
      for (const a of queued) {
        assert.equal(a.status, 'scheduled', a.name);
        assert.equal(a.agentPid, null, `${a.name} is queued but has an agent`);
        assert.ok(Number.isInteger(a.queuePosition) && a.queuePosition >= 1, `${a.name} position ${a.queuePosition}`);
      }
      assert.deepEqual(queued.map((a: any) => a.queuePosition).sort((x: number, y: number) => x - y), Array.from({ length: 27 }, (_, i) => i + 1));
      for (const a of full.agents.filter((x: any) => x.status === 'running')) {
        assert.equal(a.queued, false);
        assert.equal(a.queuePosition, null);
      }
      await until('3 live agents in /proc', () => liveRunIds(b.marker).size === 3, LONG);

      open(g);
      const w = await b.runAsync('status', ['--wait-terminal', '--prefix', 'race', '--timeout', WAIT_SEC]);
      assert.equal(w.code, 0, w.stdout + w.stderr);
      assert.equal(w.json.agents.length, 30);
      for (const a of w.json.agents) {
        assert.equal(a.status, 'done', a.name);
        assert.equal(a.outcome, 'succeeded', `${a.name}: ${a.error}`);
        assert.equal(a.queued, false);
      }
      names.forEach((n, i) => assert.equal(resultText(b, n), `out-${i}\n`));
    } finally {
      stop = true;
      clearInterval(timer);
      await poller;
    }

    assert.deepEqual(pollErrors, [], 'every status poll answered ok');
    assert.ok(polls.length >= 5, `the poller ran (${polls.length} polls)`);
    t.diagnostic(`${polls.length} status polls, ${procScans} /proc scans, max live agent runs ${maxProcRuns}`);
    assert.ok(procScans > 10);
    assert.ok(maxProcRuns <= 3, `/proc showed ${maxProcRuns} runs with live agent processes at once`);
    assert.equal(maxProcRuns, 3, 'the limit was reached');
    for (const p of polls) {
      if (p.queue) {
        assert.equal(p.queue.limit, 3);
        assert.ok(p.queue.running <= 3, `queue.running ${p.queue.running}`);
      }
      for (const q of p.queued) assert.ok(Number.isInteger(q.pos) && (q.pos as number) >= 1, `${q.name} queued without a position`);
      assert.equal(new Set(p.queued.map((q) => q.pos)).size, p.queued.length, `two runs share a queue position: ${JSON.stringify(p.queued)}`);
    }
    assert.ok(polls.some((p) => p.queued.length > 0), 'some poll saw queued runs');

    // The records: the agents' lifetimes [agentStartedAt, finishedAt] never overlap more than 3 deep.
    const recs = names.map((n) => recordOf(b.registry, n));
    const intervals = recs.map((r) => ({ start: Date.parse(r.agentStartedAt), end: Date.parse(r.finishedAt) }));
    for (const iv of intervals) assert.ok(Number.isFinite(iv.start) && Number.isFinite(iv.end) && iv.end >= iv.start);
    assert.ok(maxOverlap(intervals) <= 3, `records show ${maxOverlap(intervals)} agents at once`);

    // A status poll reads the 30 records one after the other, so it could see A still running and D
    // already running when A ended in between. More than 3 in one poll is a bug only if those runs
    // really were running together, which the records tell.
    const startOf = new Map(names.map((n, i) => [n, intervals[i]!]));
    for (const p of polls) {
      if (p.running.length <= 3) continue;
      const ivs = p.running.map((n) => startOf.get(n)!);
      const together = Math.max(...ivs.map((x) => x.start)) < Math.min(...ivs.map((x) => x.end));
      assert.ok(!together, `a poll saw ${p.running.length} running at once: ${p.running.join(', ')}`);
      t.diagnostic(`a poll listed ${p.running.length} running (${p.running.join(', ')}), an artefact of reading records one by one`);
    }
  });

  test('a killed supervisor frees its slot only once its agent is gone too: by cancel, or when the agent dies', async (t) => {
    const b = bKill;
    const a = startShell(b, 'kill/a', 'sleep 120', ['--max-concurrent', '1']);
    const ra = await untilStatus(b, 'kill/a', (x) => x.status === 'running' && x.agentPid, 'a running');
    startShell(b, 'kill/b', 'echo b-done');
    const qx = startShell(b, 'kill/x', 'echo x-never');
    startShell(b, 'kill/y', 'echo y-done');
    const s = await until('b, x, y queued', async () => {
      const st = await statusLineAsync(b, ['--prefix', 'kill']);
      return st.queue?.queued === 3 ? st : null;
    }, LONG, 50);
    assert.deepEqual(s.queue, { limit: 1, running: 1, queued: 3 });
    const qb = byName(s.agents)['kill/b'];
    assert.equal(qb.queuePosition, 1);
    assert.equal(qb.status, 'scheduled');

    // A queued run whose supervisor dies leaves the queue: y moves up behind b.
    process.kill(qx.pid, 'SIGKILL');
    const s1 = await until('x left the queue', async () => {
      const st = await statusLineAsync(b, ['--prefix', 'kill']);
      return st.queue?.queued === 2 ? st : null;
    }, LONG, 50);
    const m1 = byName(s1.agents);
    assert.deepEqual([m1['kill/x'].status, m1['kill/x'].queued, m1['kill/x'].queuePosition, m1['kill/x'].agentAlive], ['unknown', false, null, false]);
    assert.deepEqual([m1['kill/b'].queuePosition, m1['kill/y'].queuePosition], [1, 2]);
    assert.equal(m1['kill/a'].status, 'running');

    // a's supervisor dies; its agent lives on: the slot stays taken (the limit counts agents).
    assert.equal(ra.pid, a.pid);
    process.kill(ra.pid, 'SIGKILL');
    await until('the supervisor of a is gone', () => !pidAlive(ra.pid), LONG);
    await assertSlotStillHeld(b, 'kill/b');
    const ua = statusOf(b, 'kill/a');
    assert.deepEqual([ua.status, ua.agentAlive, pidAlive(ra.agentPid)], ['unknown', true, true]);
    const held = await statusLineAsync(b, ['--prefix', 'kill']);
    assert.deepEqual(held.queue, { limit: 1, running: 1, queued: 2 }, 'the orphaned agent holds the slot');
    assert.deepEqual([byName(held.agents)['kill/b'].status, byName(held.agents)['kill/b'].queuePosition], ['scheduled', 1]);

    const ju = b.run('status', ['--name', 'kill/a', '--junit', 'unknown.xml', '--require-success']);
    assert.equal(assertError(ju, 'E_RUN_FAILED').junit, join(b.dir, 'unknown.xml'));
    const uroot = checkJunit(t, join(b.dir, 'unknown.xml'));
    assert.equal(uroot.attrs.errors, '1');
    assert.deepEqual(findAll(uroot, 'error').map((e) => e.attrs.type), ['unknown']);

    // Cancelling the unknown run ends the orphaned agent; then the slot is free and b starts.
    const cancelledAt = Date.now();
    const c = b.run('cancel', ['--name', 'kill/a']);
    assert.equal(c.code, 0, c.stdout + c.stderr);
    assert.equal(c.json.previousStatus, 'unknown');
    assert.deepEqual(c.json.survivors, []);
    assert.equal(pidAlive(ra.agentPid), false);
    const started = await untilStatus(b, 'kill/b', (x) => x.status !== 'scheduled', 'b started');
    const latency = Date.now() - cancelledAt;
    assert.ok(latency < 10_000, `b started ${latency} ms after the cancel`);
    assert.equal(started.queued, false);
    const done = waitTerminal(b, ['kill/b', 'kill/y']);
    assert.equal(done['kill/b'].outcome, 'succeeded');
    assert.equal(done['kill/y'].outcome, 'succeeded');
    assert.ok(Date.parse(recordOf(b.registry, 'kill/y').agentStartedAt) >= Date.parse(recordOf(b.registry, 'kill/b').finishedAt), 'y after b: one slot');
    assert.equal(resultText(b, 'kill/b'), 'b-done\n');
    assert.equal(resultText(b, 'kill/x'), '', 'x never ran');

    // Again, but the orphaned agent ends by itself (here its whole process group is killed, so the shell
    // and its `sleep` go together): the next look at the queue frees the slot.
    startShell(b, 'kill/c', 'sleep 120');
    const rc = await untilStatus(b, 'kill/c', (x) => x.status === 'running' && x.agentPid, 'c running');
    startShell(b, 'kill/d', 'echo d-done');
    await untilStatus(b, 'kill/d', (x) => x.queued === true, 'd queued');
    process.kill(rc.pid, 'SIGKILL');
    await until('the supervisor of c is gone', () => !pidAlive(rc.pid), LONG);
    await assertSlotStillHeld(b, 'kill/d');
    const agentKilledAt = Date.now();
    process.kill(-rc.agentPid, 'SIGKILL'); // the agent leads its own process group
    const dStarted = await untilStatus(b, 'kill/d', (x) => x.status !== 'scheduled', 'd started');
    const dLatency = Date.now() - agentKilledAt;
    assert.ok(dLatency < 10_000, `d started ${dLatency} ms after the orphaned agent died`);
    assert.equal(dStarted.queued, false);
    assert.equal(waitTerminal(b, ['kill/d'])['kill/d'].outcome, 'succeeded');
    assert.deepEqual([statusOf(b, 'kill/c').status, statusOf(b, 'kill/c').agentAlive], ['unknown', false]);
    assert.deepEqual([...liveRunIds(b.marker).keys()], [], 'no agent process of the box survives');
    const s2 = b.run('status', ['--prefix', 'kill']);
    assert.deepEqual(s2.json.queue, { limit: 1, running: 0, queued: 0 });
  });

  test('with limit 1, queued runs start one at a time in the order they were started (FIFO)', async () => {
    const b = bKill; // its limit is 1 (set by the previous test)
    const g = join(b.dir, 'gate-fifo');
    startShell(b, 'fifo/0', `${gate(g)}; echo 0`);
    await untilStatus(b, 'fifo/0', (a) => a.status === 'running', 'fifo/0 running');
    // A resume in a limited registry queues like a start.
    const rs = b.run('resume-subagent', ['--name', 'kill/b', '--prompt', 'sleep 0.1; echo b-again']);
    assert.equal(rs.code, 0, rs.stdout + rs.stderr);
    assert.equal(rs.json.run, 2);
    const order = ['fifo/3', 'fifo/1', 'fifo/4', 'fifo/2'];
    for (const n of order) startShell(b, n, `sleep 0.1; echo ${n}`);
    const s = await until('five queued', async () => {
      const x = await statusLineAsync(b, ['--all']);
      return x.agents.filter((a: any) => a.queued).length === 5 ? x : null;
    }, LONG, 50);
    const m = byName(s.agents);
    assert.deepEqual(['kill/b', ...order].map((n) => m[n].queuePosition), [1, 2, 3, 4, 5], 'positions follow the start order, not the names');
    assert.equal(m['kill/b'].run, 2);
    open(g);
    waitTerminal(b, ['fifo/0', 'kill/b', ...order]);
    assert.equal(resultText(b, 'kill/b'), 'b-again\n');
    const recs = [recordOf(b.registry, 'fifo/0'), recordOf(b.registry, 'kill/b', 2), ...order.map((n) => recordOf(b.registry, n))];
    for (let i = 1; i < recs.length; i++) {
      assert.ok(Date.parse(recs[i]!.agentStartedAt) >= Date.parse(recs[i - 1]!.finishedAt), `${recs[i]!.name} run ${recs[i]!.run} started after ${recs[i - 1]!.name} ended`);
      assert.equal(recs[i]!.outcome, 'succeeded');
    }
  });

  test('a queued run can be cancelled and leaves the queue; raising the limit releases waiting runs; 0 removes it', async (t) => {
    const b = bQueue;
    const g = join(b.dir, 'gate-q');
    const a = startShell(b, 'q/a', `${gate(g)}; echo a`, ['--max-concurrent', '1']);
    await untilStatus(b, 'q/a', (x) => x.status === 'running', 'a running');
    for (const n of ['q/b', 'q/c', 'q/d']) startShell(b, n, `${gate(g)}; echo ${n}`);
    const s1 = await until('b, c, d queued at 1, 2, 3', async () => {
      const s = await statusLineAsync(b, ['--prefix', 'q']);
      const m = byName(s.agents);
      return m['q/b']?.queuePosition === 1 && m['q/c']?.queuePosition === 2 && m['q/d']?.queuePosition === 3 ? s : null;
    }, LONG, 50);
    assert.deepEqual(s1.queue, { limit: 1, running: 1, queued: 3 });
    const tr = b.run('status', ['--prefix', 'q', '--tree']);
    assert.equal(tr.code, 0, tr.stdout);
    assert.deepEqual(tr.stdout.split('\n').filter(Boolean).map((l) => l.replace(/ {2}run 1$/, '')), [
      'q/a  [shell] running',
      'q/b  [shell] scheduled (queued #1)',
      'q/c  [shell] scheduled (queued #2)',
      'q/d  [shell] scheduled (queued #3)',
    ]);
    assert.equal(byName(s1.agents)['q/a'].queued, false);

    const c = b.run('cancel', ['--name', 'q/c']);
    assert.equal(c.code, 0, c.stdout + c.stderr);
    assert.equal(c.json.previousStatus, 'scheduled');
    assert.equal(c.json.outcome, 'cancelled');
    const s2 = await until('c left the queue, d moved up', async () => {
      const s = await statusLineAsync(b, ['--prefix', 'q']);
      const m = byName(s.agents);
      return m['q/d']?.queuePosition === 2 && s.queue.queued === 2 ? s : null;
    }, LONG, 50);
    const m2 = byName(s2.agents);
    assert.equal(m2['q/c'].status, 'done');
    assert.equal(m2['q/c'].outcome, 'cancelled');
    assert.equal(m2['q/c'].queued, false);
    assert.equal(m2['q/c'].queuePosition, null);
    assert.equal(m2['q/c'].agentPid, null, 'the cancelled queued run never started its agent');
    assert.equal(m2['q/b'].queuePosition, 1);
    assert.equal(m2['q/a'].status, 'running');

    // Raising the limit to 3 (with a later start) releases b and d at once; e queues behind them.
    startShell(b, 'q/e', `${gate(g)}; echo q/e`, ['--max-concurrent', '3']);
    const s3 = await until('b and d running, e queued', async () => {
      const s = await statusLineAsync(b, ['--prefix', 'q']);
      const m = byName(s.agents);
      return m['q/b']?.status === 'running' && m['q/d']?.status === 'running' && m['q/e']?.queued ? s : null;
    }, LONG, 50);
    assert.deepEqual(s3.queue, { limit: 3, running: 3, queued: 1 });
    assert.equal(byName(s3.agents)['q/e'].queuePosition, 1);

    // SUBAGENT_MAX_CONCURRENT=0 removes the limit: e starts, and so does f at once.
    startShell(b, 'q/f', 'echo q/f', [], { env: { SUBAGENT_MAX_CONCURRENT: '0' } });
    const s4 = await until('e running without a limit', async () => {
      const s = await statusLineAsync(b, ['--prefix', 'q']);
      return byName(s.agents)['q/e']?.status === 'running' ? s : null;
    }, LONG, 50);
    assert.equal(s4.queue?.limit ?? null, null);
    open(g);
    const all = waitTerminal(b, ['q/a', 'q/b', 'q/c', 'q/d', 'q/e', 'q/f']);
    for (const n of ['q/a', 'q/b', 'q/d', 'q/e', 'q/f']) assert.equal(all[n].outcome, 'succeeded', n);
    assert.equal(all['q/c'].outcome, 'cancelled');
    assert.equal(resultText(b, 'q/c'), '');
    const ju = b.run('status', ['--prefix', 'q', '--junit', 'q.xml']);
    assert.equal(ju.code, 0, ju.stdout);
    const root = checkJunit(t, join(b.dir, 'q.xml'));
    assert.equal(root.attrs.failures, '1');
    const failed = findAll(root, 'testcase').filter((c) => c.children.some((x) => x.name === 'failure'));
    assert.deepEqual(failed.map((c) => [c.attrs.name, c.children.find((x) => x.name === 'failure')!.attrs.type]), [['q/c', 'cancelled']]);
    assert.equal(a.status, 'scheduled');
  });
});

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
    assert.deepEqual(r.json.started.map((s: any) => [s.line, s.name, s.cli]), [[1, 'bt/one', 'shell'], [3, 'bt/two', 'shell'], [7, 'bt/three', 'shell']]);
    for (const s of r.json.started) {
      assert.ok(Number.isInteger(s.pid) && s.pid > 0);
      assert.equal(s.run, 1);
    }
    assert.deepEqual(r.json.failed.map((f: any) => [f.line, f.code]), [[2, 'E_ARG_INVALID'], [4, 'E_NAME_INVALID'], [8, 'E_ARG_UNKNOWN']]);
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
    assert.deepEqual(r.json.started.map((s: any) => [s.line, s.name]), [[1, 'st/a'], [2, 'st/b']]);
    waitTerminal(b, ['st/a', 'st/b']);
    assert.equal(resultText(b, 'st/a'), `a\n${realpathSync(sub)}\n`, 'the --cwd default applied');
    assert.equal(resultText(b, 'st/b'), '1:x y\n');
    assert.equal(statusOf(b, 'st/b').cwd, b.dir, 'the line\'s cwd wins');

    // stdin with one bad line (an existing name) and one good: the good one starts.
    const r2 = b.run('start-subagent', ['--batch', '-', '--cli', 'shell'], { input: `${JSON.stringify({ name: 'st/a', prompt: 'echo again' })}\n${JSON.stringify({ name: 'st/c', prompt: 'echo c' })}\n` });
    assert.equal(r2.code, 1);
    assert.equal(r2.json.code, 'E_BATCH_INCOMPLETE');
    assert.deepEqual(r2.json.failed.map((f: any) => [f.line, f.name, f.code]), [[1, 'st/a', 'E_NAME_EXISTS']]);
    assert.deepEqual(r2.json.started.map((s: any) => s.name), ['st/c']);
    waitTerminal(b, ['st/c']);

    // --batch with --name is refused before anything starts.
    expectError(b, 'start-subagent', ['--batch', '-', '--name', 'x'], 'E_ARG_INVALID', { input: JSON.stringify({ name: 'st/z', prompt: 'echo z' }) });
  });
});

describe('waiting for many (CI)', () => {
  const OK1_OUT = `<b a="1">Tom & "Jerry" 'n' </b> ]]>`;

  test('--require-success with one failing run exits 1 with E_RUN_FAILED, lists every run, writes JUnit', async (t) => {
    const b = bCi;
    startShell(b, 'ci/ok1', `cat <<'EOF'\n${OK1_OUT}\nEOF\n`);
    startShell(b, 'ci/bad', `echo 'partial <answer> & more'; echo 'boom <x> & "y"' >&2; exit 3`);
    startShell(b, 'ci/ok2', 'echo fine');
    const report = join(b.dir, 'reports', 'ci.xml');
    const r = b.run('status', ['--wait-terminal', '--prefix', 'ci', '--require-success', '--junit', 'reports/ci.xml', '--timeout', WAIT_SEC]);
    const j = assertError(r, 'E_RUN_FAILED', 1);
    assert.deepEqual(j.agents.map((a: any) => a.name), ['ci/bad', 'ci/ok1', 'ci/ok2']);
    for (const a of j.agents) assert.equal(a.status, 'done', 'the wait finished');
    assert.deepEqual(j.details.failed, ['ci/bad']);
    assert.match(j.error, /ci\/bad/);
    assert.equal(j.junit, report);
    const bad = byName(j.agents)['ci/bad'];
    assert.equal(bad.exitCode, 3);
    assert.match(bad.error, /status 3/);

    const root = checkJunit(t, report);
    // Control: the schema is strict enough to refuse what the report used to hold (a zoned timestamp).
    const zoned = join(b.dir, 'zoned.xml');
    writeFileSync(zoned, readFileSync(report, 'utf8').replace(/timestamp="([^"]+)"/, 'timestamp="$1.123Z"'));
    const refusedZoned = validateJunit(zoned);
    if (refusedZoned) assert.equal(refusedZoned.ok, false, 'the JUnit schema must refuse a timestamp with a fraction and a zone');
    assert.equal(root.attrs.tests, '3');
    assert.equal(root.attrs.failures, '1');
    assert.equal(root.attrs.errors, '0');
    const cases = findAll(root, 'testcase');
    assert.deepEqual(cases.map((c) => c.attrs.name), ['ci/bad', 'ci/ok1', 'ci/ok2']);
    for (const c of cases) assert.equal(c.attrs.classname, 'subagents.ci');
    const cBad = cases[0]!;
    const fail = cBad.children.filter((c) => c.name === 'failure');
    assert.equal(fail.length, 1);
    assert.match(fail[0]!.text, /exit code 3/);
    assert.ok(fail[0]!.text.includes(bad.error), `the failure holds the error: ${fail[0]!.text}`);
    assert.ok(fail[0]!.attrs.message!.includes('boom <x> & "y"'), `message: ${fail[0]!.attrs.message}`);
    const out = (c: XmlElement) => c.children.filter((x) => x.name === 'system-out').map((x) => x.text).join('');
    assert.equal(out(cBad), 'partial <answer> & more\n');
    const cOk1 = cases[1]!;
    assert.equal(cOk1.children.filter((c) => c.name === 'failure' || c.name === 'error').length, 0);
    assert.equal(out(cOk1), `${OK1_OUT}\n`, 'special characters survive escaping');
    assert.equal(out(cases[2]!), 'fine\n');
    const raw = readFileSync(report, 'utf8');
    assert.ok(!raw.includes('Tom & "Jerry"'), 'escaped, not raw');
    assert.ok(raw.includes('&lt;b a=') && raw.includes('&amp;'), 'escaped entities');

    // A plain listing fails the same way; a prefix that selects nothing cannot be waited for.
    assert.deepEqual(assertError(b.run('status', ['--prefix', 'ci', '--require-success']), 'E_RUN_FAILED').details.failed, ['ci/bad']);
    assertError(b.run('status', ['--wait-terminal', '--prefix', 'nothing', '--timeout', WAIT_SEC]), 'E_NAME_NOT_FOUND');

    // --all selects everything; with every run succeeding the same wait exits 0.
    const all = b.run('status', ['--wait-terminal', '--all', '--require-success', '--timeout', WAIT_SEC]);
    assertError(all, 'E_RUN_FAILED', 1);
    assert.equal(all.json.agents.length, 3);
    const allPlain = b.run('status', ['--wait-terminal', '--all', '--timeout', WAIT_SEC]);
    assert.equal(allPlain.code, 0, allPlain.stdout);
    assert.equal(allPlain.json.agents.length, 3);

    startShell(b, 'good/x', `printf 'x \\033[1mbold\\033[0m \\001\\013 \\302\\251\\n'`);
    startShell(b, 'good/big', `i=0; while [ $i -lt 2000 ]; do echo "line $i <&> padding padding padding padding"; i=$((i+1)); done`);
    startShell(b, 'good/y', 'echo y');
    const okr = b.run('status', ['--wait-terminal', '--prefix', 'good', '--require-success', '--junit', join(b.dir, 'good.xml'), '--timeout', WAIT_SEC]);
    assert.equal(okr.code, 0, okr.stdout + okr.stderr);
    assert.equal(okr.json.ok, true);
    assert.deepEqual(okr.json.agents.map((a: any) => [a.name, a.outcome]), [['good/big', 'succeeded'], ['good/x', 'succeeded'], ['good/y', 'succeeded']]);
    assert.equal(okr.json.junit, join(b.dir, 'good.xml'));
    const goodRoot = checkJunit(t, join(b.dir, 'good.xml'));
    assert.equal(goodRoot.attrs.failures, '0');
    const gcases = findAll(goodRoot, 'testcase');
    assert.deepEqual(gcases.map((c) => c.attrs.name), ['good/big', 'good/x', 'good/y']);
    assert.equal(findAll(goodRoot, 'failure').length + findAll(goodRoot, 'error').length, 0);
    // Control characters XML cannot hold are dropped; other text stays.
    assert.equal(out(gcases[1]!), 'x [1mbold[0m  \u00a9\n');
    // A long answer: its last 64 KiB.
    const big = out(gcases[0]!);
    const full = resultText(b, 'good/big');
    assert.ok(full.length > 64 * 1024);
    assert.ok(big.length <= 64 * 1024 && big.length > 60 * 1024, `system-out holds ${big.length} characters`);
    assert.ok(full.endsWith(big), 'the tail of the answer');
  });

  test('a name appearing under the prefix during --wait-terminal joins the wait', async () => {
    const b = bJoin;
    const g1 = join(b.dir, 'gate-1');
    const g2 = join(b.dir, 'gate-2');
    startShell(b, 'j/first', `${gate(g1)}; echo first`);
    const w = b.spawn('status', ['--wait-terminal', '--prefix', 'j', '--timeout', WAIT_SEC]);
    try {
      await until('the waiter watches', () => w.settled() || hasInotify(w.pid), LONG);
      assert.equal(w.settled(), false, 'the waiter did not return early');
      startShell(b, 'j/late', `${gate(g2)}; echo late`);
      await untilStatus(b, 'j/late', (a) => a.status === 'running', 'late running');
      open(g1);
      await untilStatus(b, 'j/first', (a) => a.status === 'done', 'first done');
      open(g2);
      const r = await w.done;
      assert.equal(r.code, 0, r.stdout + r.stderr);
      const m = byName(r.json.agents);
      assert.deepEqual(Object.keys(m).sort(), ['j/first', 'j/late']);
      assert.equal(m['j/late'].status, 'done', 'the wait lasted until the name that joined ended');
      assert.equal(m['j/late'].outcome, 'succeeded');
    } finally {
      open(g1);
      open(g2);
      if (!w.settled()) w.child.kill('SIGKILL');
    }
  });

  test('--junit is written on E_WAIT_TIMEOUT too, with <error> for the unfinished run', async (t) => {
    const b = bJunit;
    const g = join(b.dir, 'gate-t');
    startShell(b, 'to/slow', `echo 'so far & <on>'; ${gate(g)}; echo rest`);
    startShell(b, 'to/quick', 'echo quick');
    await untilStatus(b, 'to/slow', (a) => a.status === 'running', 'slow running');
    waitTerminal(b, ['to/quick']);
    await until('slow printed its first line', () => readFileSync(join(runDirOf(b.registry, 'to/slow'), 'events.log'), 'utf8').length > 0, LONG);
    const file = join(b.dir, 't.xml');
    try {
      const r = b.run('status', ['--wait-terminal', '--prefix', 'to', '--timeout', '1', '--junit', file, '--require-success']);
      const j = assertError(r, 'E_WAIT_TIMEOUT', 124);
      assert.equal(j.junit, file);
      assert.deepEqual(j.agents.map((a: any) => a.name), ['to/quick', 'to/slow']);
      const root = checkJunit(t, file);
      assert.equal(root.attrs.errors, '1');
      const cases = findAll(root, 'testcase');
      assert.equal(cases.length, 2);
      const slow = cases.find((c) => c.attrs.name === 'to/slow')!;
      const err = slow.children.filter((c) => c.name === 'error');
      assert.equal(err.length, 1);
      assert.equal(err[0]!.attrs.type, 'running');
      assert.equal(slow.children.filter((c) => c.name === 'system-out').map((c) => c.text).join(''), 'so far & <on>\n', 'the answer so far');
    } finally {
      open(g);
    }
    waitTerminal(b, ['to/slow']);
  });
});

describe('nested orchestration', () => {
  test('starts from inside runs record parent and depth; the depth limit refuses; --tree; cancel --recursive', async () => {
    const b = bNest;
    const start = join(BIN, 'start-subagent');
    const loop = `while [ ! -e '${join(b.dir, 'never')}' ]; do sleep 0.05; done`;
    const file = (n: string, body: string) => {
      const p = join(b.dir, `${n}.sh`);
      writeFileSync(p, body);
      return p;
    };
    const leaf = file('leaf', `'${start}' --name nest/deeper --cli shell --prompt 'echo too-deep'\necho "rc=$?"\n${loop}\n`);
    const mid = file('mid', `'${start}' --name nest/leaf --cli shell --prompt-file '${leaf}'\necho "rc=$?"\n${loop}\n`);
    const top = file('top', `echo "parent-env=$SUBAGENT_PARENT dir=$SUBAGENT_DIR"\n'${start}' --name nest/mid --cli shell --prompt-file '${mid}'\necho "rc=$?"\n${loop}\n`);
    const s = b.run('start-subagent', ['--name', 'nest/top', '--cli', 'shell', '--prompt-file', top]);
    assert.equal(s.code, 0, s.stdout + s.stderr);
    const names = ['nest/top', 'nest/mid', 'nest/leaf'];
    try {
      // The leaf's own nested start was refused: its output holds the E_DEPTH_LIMIT line.
      const leafOut = await until('the leaf tried to nest deeper', () => {
        try {
          const txt = resultText(b, 'nest/leaf');
          return /rc=\d/.test(txt) ? txt : null;
        } catch {
          return null;
        }
      }, LONG, 100);
      const [line, rc] = leafOut.split('\n');
      const refused = JSON.parse(line!);
      assert.equal(refused.ok, false);
      assert.equal(refused.code, 'E_DEPTH_LIMIT');
      assert.equal(refused.details.depth, 4);
      assert.equal(refused.details.max, 3);
      assert.equal(refused.details.parent, 'nest/leaf');
      assert.equal(rc, 'rc=1');

      const topOut = resultText(b, 'nest/top').split('\n');
      assert.equal(topOut[0], `parent-env=nest/top dir=${b.registry}`, 'the supervisor exports SUBAGENT_PARENT and SUBAGENT_DIR');
      const inner = JSON.parse(topOut[1]!);
      assert.equal(inner.ok, true);
      assert.equal(inner.name, 'nest/mid');
      assert.equal(inner.registry, b.registry, 'the nested start went into the same registry');
      assert.equal(topOut[2], 'rc=0');

      const st = await until('all three running', async () => {
        const x = await statusLineAsync(b, ['--prefix', 'nest']);
        return x.agents.length === 3 && x.agents.every((a: any) => a.status === 'running') ? x : null;
      }, LONG, 50);
      const m = byName(st.agents);
      assert.deepEqual(Object.keys(m).sort(), ['nest/leaf', 'nest/mid', 'nest/top'], 'nest/deeper was never created');
      assert.deepEqual([m['nest/top'].parent, m['nest/top'].depth], [null, 1]);
      assert.deepEqual([m['nest/mid'].parent, m['nest/mid'].depth], ['nest/top', 2]);
      assert.deepEqual([m['nest/leaf'].parent, m['nest/leaf'].depth], ['nest/mid', 3]);

      const tr = b.run('status', ['--prefix', 'nest', '--tree']);
      assert.equal(tr.code, 0, tr.stdout + tr.stderr);
      const tl = tr.stdout.split('\n').filter(Boolean);
      assert.equal(tl.length, 3, tr.stdout);
      assert.match(tl[0]!, /^nest\/top {2}\[shell\] running {2}run 1$/);
      assert.match(tl[1]!, /^└─ nest\/mid {2}\[shell\] running {2}run 1$/);
      assert.match(tl[2]!, /^ {3}└─ nest\/leaf {2}\[shell\] running {2}run 1$/);

      // Every process of the three runs, by their run-id markers, and their supervisors.
      const ids = names.map((n) => recordOf(b.registry, n).runId as string);
      const supervisors = names.map((n) => m[n].pid as number);
      const live = liveRunIds(b.marker);
      for (const [i, id] of ids.entries()) assert.ok((live.get(id) ?? []).length > 0, `${names[i]} has live processes`);

      const c = b.run('cancel', ['--name', 'nest/top', '--recursive']);
      assert.equal(c.code, 0, c.stdout + c.stderr);
      assert.equal(c.json.ok, true);
      assert.equal(c.json.outcome, 'cancelled');
      assert.deepEqual(c.json.survivors, []);
      assert.deepEqual(c.json.descendants.map((d: any) => [d.name, d.previousStatus, d.status, d.outcome]), [
        ['nest/mid', 'running', 'done', 'cancelled'],
        ['nest/leaf', 'running', 'done', 'cancelled'],
      ]);
      for (const d of c.json.descendants) assert.deepEqual(d.survivors, []);
      const after = liveRunIds(b.marker);
      for (const [i, id] of ids.entries()) assert.deepEqual(after.get(id) ?? [], [], `a process of ${names[i]} survived`);
      await until('the supervisors exit', () => supervisors.every((p) => !pidAlive(p)), LONG);
      const fin = byName(b.run('status', ['--prefix', 'nest']).json.agents);
      for (const n of names) assert.deepEqual([fin[n].status, fin[n].outcome], ['done', 'cancelled'], n);
      // Nothing left to cancel: E_NOT_RUNNING.
      assertError(b.run('cancel', ['--name', 'nest/top', '--recursive']), 'E_NOT_RUNNING');
    } finally {
      b.run('cancel', ['--name', 'nest/top', '--recursive']);
    }
  });

  test('cancel --recursive on a parent that already ended still cancels its running child', async () => {
    const b = bNest;
    const start = join(BIN, 'start-subagent');
    const g = join(b.dir, 'gate-orphan');
    const child = join(b.dir, 'child.sh');
    writeFileSync(child, `${gate(g)}\necho child-end\n`);
    startShell(b, 'gone/top', `'${start}' --name gone/child --cli shell --prompt-file '${child}'`);
    try {
      assert.equal(waitTerminal(b, ['gone/top'])['gone/top'].outcome, 'succeeded');
      const ch = await untilStatus(b, 'gone/child', (a) => a.status === 'running', 'child running');
      assert.equal(ch.parent, 'gone/top');
      const c = b.run('cancel', ['--name', 'gone/top', '--recursive']);
      assert.equal(c.code, 0, c.stdout + c.stderr);
      assert.equal(c.json.previousStatus, 'done');
      assert.equal(c.json.outcome, 'succeeded', 'the ended parent keeps its outcome');
      assert.deepEqual(c.json.descendants.map((d: any) => [d.name, d.previousStatus, d.outcome]), [['gone/child', 'running', 'cancelled']]);
      assert.equal(pidAlive(ch.agentPid), false);
      assertError(b.run('cancel', ['--name', 'gone/top', '--recursive']), 'E_NOT_RUNNING');
    } finally {
      open(g);
    }
  });

  test('SUBAGENT_MAX_DEPTH=1 refuses any nested start; a start outside a run is depth 1', () => {
    const b = bNest;
    const start = join(BIN, 'start-subagent');
    const s = startShell(b, 'flat/top', `'${start}' --name flat/child --cli shell --prompt 'echo hi'; echo "rc=$?"`, [], { env: { SUBAGENT_MAX_DEPTH: '1' } });
    assert.equal(s.ok, true);
    const a = waitTerminal(b, ['flat/top'])['flat/top'];
    assert.equal(a.outcome, 'succeeded');
    assert.equal(a.depth, 1);
    assert.equal(a.parent, null);
    const [line, rc] = resultText(b, 'flat/top').split('\n');
    const refused = JSON.parse(line!);
    assert.equal(refused.code, 'E_DEPTH_LIMIT');
    assert.equal(refused.details.max, 1);
    assert.equal(refused.details.depth, 2);
    assert.equal(rc, 'rc=1');
    assert.equal(b.run('status', ['--name', 'flat/child']).json.agents.length, 0);
  });

  test('the depth travels in SUBAGENT_DEPTH: dropping SUBAGENT_DIR does not reset it; a depth that cannot be told is refused', () => {
    const b = bNest;
    const start = join(BIN, 'start-subagent');
    // Each level starts the next with SUBAGENT_DIR removed (the registry given by --registry instead):
    // the parent's record cannot be read that way, the exported depth still counts.
    const leaf = join(b.dir, 'lost-leaf.sh');
    writeFileSync(leaf, `echo "depth=$SUBAGENT_DEPTH"\nenv -u SUBAGENT_DIR '${start}' --registry '${b.registry}' --name lost/deeper --cli shell --prompt 'echo no'\necho "rc=$?"\n`);
    const mid = join(b.dir, 'lost-mid.sh');
    writeFileSync(mid, `echo "depth=$SUBAGENT_DEPTH"\nenv -u SUBAGENT_DIR '${start}' --registry '${b.registry}' --name lost/leaf --cli shell --prompt-file '${leaf}'\necho "rc=$?"\n`);
    const s = b.run('start-subagent', ['--name', 'lost/top', '--cli', 'shell', '--prompt-file', mid], { env: { SUBAGENT_MAX_DEPTH: '2' } });
    assert.equal(s.code, 0, s.stdout + s.stderr);
    waitTerminal(b, ['lost/top']);
    const top = resultText(b, 'lost/top').split('\n');
    assert.equal(top[0], 'depth=1', 'the supervisor exports the run\'s depth');
    assert.equal(JSON.parse(top[1]!).ok, true, top[1]);
    const l = waitTerminal(b, ['lost/leaf'])['lost/leaf'];
    assert.deepEqual([l.parent, l.depth], ['lost/top', 2]);
    const [depthLine, line, rc] = resultText(b, 'lost/leaf').split('\n');
    assert.equal(depthLine, 'depth=2');
    const refused = JSON.parse(line!);
    assert.equal(refused.code, 'E_DEPTH_LIMIT', line);
    assert.deepEqual([refused.details.parent, refused.details.depth, refused.details.max], ['lost/leaf', 3, 2]);
    assert.equal(rc, 'rc=1');
    assert.equal(b.run('status', ['--name', 'lost/deeper']).json.agents.length, 0);

    // SUBAGENT_PARENT without SUBAGENT_DEPTH: the depth is read from the parent's record if it can be…
    const viaRecord = b.run('start-subagent', shellArgs('lost/by-record', 'echo ok'), { env: { SUBAGENT_PARENT: 'lost/leaf', SUBAGENT_MAX_DEPTH: '3' } });
    assert.equal(viaRecord.code, 0, viaRecord.stdout);
    assert.equal(waitTerminal(b, ['lost/by-record'])['lost/by-record'].depth, 3);
    // …and when it cannot (no registry to read it from, no such parent, a garbled SUBAGENT_DEPTH), the
    // limit counts as reached: the limit fails closed.
    const noDir: NodeJS.ProcessEnv = { ...b.env, SUBAGENT_PARENT: 'lost/leaf', SUBAGENT_MAX_DEPTH: '9' };
    delete noDir.SUBAGENT_DIR;
    const cases: Array<[string, NodeJS.ProcessEnv]> = [
      ['no SUBAGENT_DIR to read the parent from', noDir],
      ['no such parent', { ...b.env, SUBAGENT_PARENT: 'lost/nobody', SUBAGENT_MAX_DEPTH: '9' }],
      ['a garbled SUBAGENT_DEPTH', { ...b.env, SUBAGENT_PARENT: 'lost/top', SUBAGENT_DEPTH: 'x1', SUBAGENT_MAX_DEPTH: '9' }],
    ];
    for (const [label, env] of cases) {
      const r = spawnSync(join(BIN, 'start-subagent'), [...shellArgs('lost/unknown-depth', 'echo no'), '--registry', b.registry], { cwd: b.dir, env, encoding: 'utf8' });
      assert.equal(r.status, 1, `${label}: ${r.stdout}${r.stderr}`);
      const j = JSON.parse(r.stdout);
      assert.equal(j.code, 'E_DEPTH_LIMIT', label);
      assert.deepEqual([j.details.depthKnown, j.details.depth, j.details.max], [false, 10, 9], label);
    }
    assert.equal(b.run('status', ['--name', 'lost/unknown-depth']).json.agents.length, 0);
  });
});

describe('worktrees', () => {
  const b = bTree;
  const repo = join(b.dir, 'repo');
  const commit = (msg: string) => `git -c user.email=agent@example.com -c user.name=Agent commit -q -m '${msg}'`;
  let c1 = '';
  let c2 = '';

  test('a --worktree run commits on its own branch; the main checkout stays untouched; resume reuses it', () => {
    mkdirSync(join(repo, 'src'), { recursive: true });
    git(repo, ['init', '-q']);
    writeFileSync(join(repo, 'README'), 'one\n');
    git(repo, ['add', '.']);
    git(repo, ['commit', '-q', '-m', 'c1']);
    c1 = git(repo, ['rev-parse', 'HEAD']);
    git(repo, ['tag', 'v1']);
    writeFileSync(join(repo, 'src', 'two.txt'), 'two\n');
    git(repo, ['add', '.']);
    git(repo, ['commit', '-q', '-m', 'c2']);
    c2 = git(repo, ['rev-parse', 'HEAD']);
    const branchBefore = git(repo, ['rev-parse', '--abbrev-ref', 'HEAD']);

    const s = startShell(b, 'wt/one', `pwd; echo agent > agent.txt; git add agent.txt && ${commit('agent commit')} && git rev-parse HEAD`, ['--worktree', '--cwd', join(repo, 'src')]);
    assert.equal(s.ok, true);
    const a = waitTerminal(b, ['wt/one'])['wt/one'];
    assert.equal(a.outcome, 'succeeded', a.error);
    const wtPath = join(b.registry, 'worktrees', 'wt+one');
    assert.deepEqual(a.worktree, { path: realpathSync(wtPath), branch: 'subagents/wt/one', base: c2, repo: realpathSync(repo) });
    assert.equal(a.cwd, join(realpathSync(wtPath), 'src'), 'the same sub-directory of the worktree');
    const [pwd, agentCommit] = resultText(b, 'wt/one').trim().split('\n');
    assert.equal(pwd, join(realpathSync(wtPath), 'src'));
    assert.match(agentCommit!, /^[0-9a-f]{40}$/);

    // The main checkout: clean, same HEAD and branch; the branch has the agent's commit on top of c2.
    assert.equal(git(repo, ['status', '--porcelain']), '');
    assert.equal(git(repo, ['rev-parse', 'HEAD']), c2);
    assert.equal(git(repo, ['rev-parse', '--abbrev-ref', 'HEAD']), branchBefore);
    assert.equal(existsSync(join(repo, 'src', 'agent.txt')), false);
    assert.equal(git(repo, ['rev-parse', 'subagents/wt/one']), agentCommit);
    assert.equal(git(repo, ['log', '-1', '--format=%s', 'subagents/wt/one']), 'agent commit');
    assert.equal(git(repo, ['rev-parse', 'subagents/wt/one~1']), c2);
    assert.equal(git(repo, ['show', 'subagents/wt/one:src/agent.txt']), 'agent');
    assert.ok(git(repo, ['worktree', 'list', '--porcelain']).includes(`worktree ${realpathSync(wtPath)}`));

    // Resume runs in the same worktree, on the same branch.
    const r = b.run('resume-subagent', ['--name', 'wt/one', '--prompt', 'pwd; git rev-parse --abbrev-ref HEAD; cat agent.txt']);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    const a2 = waitTerminal(b, ['wt/one'])['wt/one'];
    assert.equal(a2.run, 2);
    assert.deepEqual(a2.worktree, a.worktree);
    assert.equal(resultText(b, 'wt/one'), `${join(realpathSync(wtPath), 'src')}\nsubagents/wt/one\nagent\n`);
    assert.equal(git(repo, ['status', '--porcelain']), '');
  });

  test('--base REF; a registry inside the checkout stays out of git status', () => {
    const s = startShell(b, 'wt/based', 'git rev-parse HEAD; ls', ['--worktree', '--base', 'v1', '--cwd', repo]);
    assert.equal(s.ok, true);
    const a = waitTerminal(b, ['wt/based'])['wt/based'];
    assert.equal(a.outcome, 'succeeded', a.error);
    assert.equal(a.worktree.base, c1);
    assert.equal(a.worktree.branch, 'subagents/wt/based');
    assert.equal(resultText(b, 'wt/based'), `${c1}\nREADME\n`, 'the worktree is at v1 (no src/)');

    // A batch line with "worktree" and "base".
    const bt = b.run('start-subagent', ['--batch', '-', '--cli', 'shell'], { input: JSON.stringify({ name: 'wt/batched', prompt: 'git rev-parse --abbrev-ref HEAD; git rev-parse HEAD', worktree: true, base: 'v1', cwd: repo }) + '\n' });
    assert.equal(bt.code, 0, bt.stdout + bt.stderr);
    const ab = waitTerminal(b, ['wt/batched'])['wt/batched'];
    assert.equal(ab.worktree.branch, 'subagents/wt/batched');
    assert.equal(resultText(b, 'wt/batched'), `subagents/wt/batched\n${c1}\n`);

    const inner = join(repo, '.subagents');
    const r = b.run('start-subagent', [...shellArgs('wt/inside', `echo x > x.txt; git add x.txt && ${commit('inside')}`), '--worktree', '--registry', inner], { cwd: repo });
    assert.equal(r.code, 0, r.stdout + r.stderr);
    const w = b.run('status', ['--wait-terminal', '--name', 'wt/inside', '--registry', inner, '--timeout', WAIT_SEC]);
    assert.equal(w.code, 0, w.stdout);
    assert.equal(w.json.agents[0].outcome, 'succeeded', w.json.agents[0].error);
    assert.equal(git(repo, ['status', '--porcelain', '--untracked-files=all']), '', 'the registry inside the checkout is ignored');
    assert.equal(git(repo, ['rev-parse', 'HEAD']), c2);
    assert.equal(git(repo, ['log', '-1', '--format=%s', 'subagents/wt/inside']), 'inside');
  });

  test('two starts of one --worktree name racing: one wins, the other gets E_NAME_EXISTS, the winner\'s worktree is intact', async () => {
    assert.ok(c2, 'the repository exists (first test)');
    // A git on PATH that holds the loser inside `git worktree add` (as a slow machine would) until the
    // winner has made the same branch and worktree: the loser passed every existence check before.
    const realGit = spawnSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).stdout.trim();
    const fakeBin = join(b.dir, 'slow-git');
    mkdirSync(fakeBin, { recursive: true });
    const waiting = join(b.dir, 'git-waiting');
    const g = join(b.dir, 'gate-git');
    writeFileSync(join(fakeBin, 'git'), `#!/bin/sh\ncase " $* " in *" worktree add "*) : > '${waiting}'; ${gate(g)};; esac\nexec '${realGit}' "$@"\n`, { mode: 0o755 });
    const loser = b.spawn('start-subagent', [...shellArgs('wt/dup', 'echo loser'), '--worktree', '--cwd', repo], { env: { PATH: `${fakeBin}:${process.env.PATH}` } });
    try {
      await until('the loser is inside git worktree add', () => existsSync(waiting) || loser.settled(), LONG);
      assert.equal(loser.settled(), false, 'the loser is held in git');
      const w = startShell(b, 'wt/dup', 'echo winner', ['--worktree', '--cwd', repo]);
      assert.equal(w.name, 'wt/dup');
      open(g);
      const r = await loser.done;
      const winner = waitTerminal(b, ['wt/dup'])['wt/dup'];
      assert.equal(winner.outcome, 'succeeded');
      assert.equal(resultText(b, 'wt/dup'), 'winner\n');
      assert.equal(git(repo, ['rev-parse', 'subagents/wt/dup']), c2, 'the winner\'s branch is intact');
      assert.ok(existsSync(join(winner.worktree.path, 'README')), 'the winner\'s worktree is intact');
      assertError(r, 'E_NAME_EXISTS');
    } finally {
      open(g);
      if (!loser.settled()) loser.child.kill('SIGKILL');
    }
  });

  test('names git refuses are E_NAME_INVALID rule git-branch; an existing branch is E_NAME_EXISTS; no repo is E_ARG_INVALID — nothing created', () => {
    assert.ok(c2, 'the repository exists (previous test)');
    const branches = () => git(repo, ['branch', '--list']);
    const before = branches();
    for (const name of ['wt/.hidden', 'wt/a..b', 'wt/x.lock']) {
      const j = expectError(b, 'start-subagent', [...shellArgs(name, 'echo no'), '--worktree', '--cwd', repo], 'E_NAME_INVALID');
      assert.equal(j.details.rule, 'git-branch', name);
      assert.equal(j.details.registry, b.registry);
    }
    assert.equal(branches(), before, 'no branch was made');
    git(repo, ['branch', 'subagents/wt/taken']);
    const taken = branches();
    expectError(b, 'start-subagent', [...shellArgs('wt/taken', 'echo no'), '--worktree', '--cwd', repo], 'E_NAME_EXISTS');
    assert.equal(branches(), taken);
    const plain = join(b.dir, 'plain');
    mkdirSync(plain, { recursive: true });
    expectError(b, 'start-subagent', [...shellArgs('wt/plain', 'echo no'), '--worktree', '--cwd', plain], 'E_ARG_INVALID');
    expectError(b, 'start-subagent', [...shellArgs('wt/nobase', 'echo no'), '--base', 'v1', '--cwd', repo], 'E_ARG_INVALID');
    assert.equal(b.run('status', ['--prefix', 'wt']).json.agents.map((a: any) => a.name).join(' '), 'wt/based wt/batched wt/dup wt/one', 'nothing else was recorded');
  });

  test('a start refused after its checks (a bad SUBAGENT_MAX_CONCURRENT, an unwritable queue limit) leaves no worktree or branch behind', () => {
    assert.ok(c2, 'the repository exists (first test)');
    const state = () => [git(repo, ['branch', '--list']), git(repo, ['worktree', 'list', '--porcelain'])];
    const before = state();
    const bad = expectError(b, 'start-subagent', [...shellArgs('wtleak/env', 'echo no'), '--worktree', '--cwd', repo], 'E_ARG_INVALID', { env: { SUBAGENT_MAX_CONCURRENT: 'many' } });
    assert.match(bad.error, /SUBAGENT_MAX_CONCURRENT/);
    assert.deepEqual(state(), before, 'no branch, no worktree');
    assert.equal(existsSync(join(b.registry, 'worktrees', 'wtleak+env')), false);

    // The limit cannot be written (queue/ of this registry is a file): refused before the worktree.
    const reg = join(b.dir, 'reg-noqueue');
    mkdirSync(reg, { recursive: true });
    writeFileSync(join(reg, 'queue'), 'not a directory\n');
    expectError(b, 'start-subagent', [...shellArgs('wtleak/limit', 'echo no'), '--worktree', '--cwd', repo, '--max-concurrent', '2', '--registry', reg], 'E_REGISTRY_UNWRITABLE');
    assert.deepEqual(state(), before, 'no branch, no worktree');
    assert.equal(existsSync(join(reg, 'worktrees', 'wtleak+limit')), false);

    // Nothing was left to block the names: once the cause is gone both start.
    startShell(b, 'wtleak/env', 'git rev-parse --abbrev-ref HEAD', ['--worktree', '--cwd', repo]);
    assert.equal(waitTerminal(b, ['wtleak/env'])['wtleak/env'].outcome, 'succeeded');
    assert.equal(resultText(b, 'wtleak/env'), 'subagents/wtleak/env\n');
    unlinkSync(join(reg, 'queue'));
    startShell(b, 'wtleak/limit', 'git rev-parse --abbrev-ref HEAD', ['--worktree', '--cwd', repo, '--max-concurrent', '2', '--registry', reg]);
    const w = b.run('status', ['--wait-terminal', '--name', 'wtleak/limit', '--registry', reg, '--timeout', WAIT_SEC]);
    assert.equal(w.code, 0, w.stdout);
    assert.equal(w.json.agents[0].outcome, 'succeeded', w.json.agents[0].error);
    assert.equal(w.json.queue.limit, 2);
  });

  test('clean-up as documented: git refuses a dirty run worktree; status and result outlive the worktree; resume without it is E_CWD_INVALID with the way back', () => {
    assert.ok(c2, 'the repository exists (first test)');
    startShell(b, 'wtclean/dirty', 'echo changed >> README; echo new > untracked.txt; echo dirty-done', ['--worktree', '--cwd', repo]);
    startShell(b, 'wtclean/done', `echo work > work.txt; git add work.txt && ${commit('work')} && echo clean-done`, ['--worktree', '--cwd', repo]);
    const w = waitTerminal(b, ['wtclean/dirty', 'wtclean/done']);
    assert.equal(w['wtclean/dirty'].outcome, 'succeeded', w['wtclean/dirty'].error);
    assert.equal(w['wtclean/done'].outcome, 'succeeded', w['wtclean/done'].error);

    // The documented removal refuses a worktree with uncommitted or untracked changes, and keeps them.
    const dirty = w['wtclean/dirty'].worktree.path;
    const refused = spawnSync('git', ['worktree', 'remove', dirty], { cwd: repo, encoding: 'utf8' });
    assert.notEqual(refused.status, 0, 'git worktree remove must refuse a dirty worktree');
    assert.match(refused.stderr, /modified or untracked/);
    assert.equal(readFileSync(join(dirty, 'untracked.txt'), 'utf8'), 'new\n');
    assert.equal(readFileSync(join(dirty, 'README'), 'utf8'), 'one\nchanged\n');

    // A clean one goes; its branch keeps the work, and `git branch -d` refuses while it is unmerged.
    const done = w['wtclean/done'].worktree.path;
    git(repo, ['worktree', 'remove', done]);
    assert.equal(existsSync(done), false);
    const unmerged = spawnSync('git', ['branch', '-d', 'subagents/wtclean/done'], { cwd: repo, encoding: 'utf8' });
    assert.notEqual(unmerged.status, 0, 'git branch -d must refuse an unmerged run branch');
    assert.equal(git(repo, ['log', '-1', '--format=%s', 'subagents/wtclean/done']), 'work');

    // The record does not depend on the worktree.
    const st = statusOf(b, 'wtclean/done');
    assert.deepEqual([st.status, st.outcome, st.worktree.path], ['done', 'succeeded', done]);
    assert.equal(resultText(b, 'wtclean/done'), 'clean-done\n');

    // Resume refuses before publishing a run, and says how to bring the worktree back.
    const e = expectError(b, 'resume-subagent', ['--name', 'wtclean/done', '--prompt', 'cat work.txt'], 'E_CWD_INVALID');
    assert.deepEqual([e.details.cwd, e.details.worktree, e.details.branch], [st.cwd, done, 'subagents/wtclean/done']);
    assert.ok(e.details.hint.includes(e.details.restore), e.details.hint);
    assert.equal(statusOf(b, 'wtclean/done').run, 1, 'no run was published');
    const restored = spawnSync('sh', ['-c', e.details.restore], { encoding: 'utf8' });
    assert.equal(restored.status, 0, `${e.details.restore}: ${restored.stderr}`);
    const r = b.run('resume-subagent', ['--name', 'wtclean/done', '--prompt', 'cat work.txt; git rev-parse --abbrev-ref HEAD']);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.equal(waitTerminal(b, ['wtclean/done'])['wtclean/done'].run, 2);
    assert.equal(resultText(b, 'wtclean/done'), 'work\nsubagents/wtclean/done\n');
  });
});

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
    assert.deepEqual(h.json.runs.map((r: any) => [r.run, r.status, r.outcome, r.cli, r.exitCode]), [
      [1, 'done', 'succeeded', 'shell', 0],
      [2, 'done', 'succeeded', 'shell', 0],
      [3, 'done', 'failed', 'shell', 2],
    ]);
    assert.deepEqual(h.json.runs.map((r: any) => r.promptHead), ['echo answer-1', '# step two', 'echo answer-3; exit 2'], 'the first non-empty line');
    assert.deepEqual(h.json.runs.map((r: any) => r.promptBytes), [13, 25, 21]);
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
    assert.deepEqual(s1.json.runs.map((r: any) => [r.run, r.outcome, r.exitCode, r.lastAssistantText]), [
      [2, 'succeeded', 0, 'answer-2\n'],
      [3, 'failed', 2, 'answer-3\n'],
    ]);
    const s0 = b.run('result', ['--name', 'h/conv', '--since', '0', '--json']);
    assert.deepEqual(s0.json.runs.map((r: any) => r.lastAssistantText), ['answer-1\n', 'answer-2\n', 'answer-3\n']);
    const s3 = b.run('result', ['--name', 'h/conv', '--since', '3', '--json']);
    assert.deepEqual(s3.json.runs, []);
    const plain = b.run('result', ['--name', 'h/conv', '--since', '1']);
    assert.equal(plain.code, 0);
    assert.equal(plain.stdout, '[subagents: run 2, done succeeded]\nanswer-2\n[subagents: run 3, done failed]\nanswer-3\n');
  });
});
