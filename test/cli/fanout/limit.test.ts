// test-order: early — one of the longest files (queues of runs): started first (scripts/test.sh).
/**
 * Issue 4, fan-out at scale, through the real executables: the concurrency limit (--max-concurrent,
 * SUBAGENT_MAX_CONCURRENT). Starts racing against the limit, a dead supervisor's slot, FIFO order,
 * cancelling a queued run, raising the limit and removing it.
 *
 * The limit is per registry, so every scenario has its own box (own registry).
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { assertError } from '../../support/run.js';
import { LONG, until, WAIT_SEC } from '../../support/wait.js';
import { liveRunIds, pidAlive } from '../../support/procs.js';
import { recordOf } from '../../support/registry.js';
import { makeBox, type Box } from '../../support/box.js';
import { byName, gate, open, resultText, shellArgs, startShell, statusLineAsync, statusOf, untilStatus, waitTerminal } from '../../support/shell.js';
import { checkJunit, findAll } from '../../support/junit.js';

const bRace = makeBox('fan-race');
const bKill = makeBox('fan-kill');
const bQueue = makeBox('fan-queue');

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
    // The pollers start before the first start: the registry they name (SUBAGENT_DIR) must exist by then (a
    // missing one is E_REGISTRY_NOT_FOUND, not an empty list).
    mkdirSync(b.registry, { recursive: true, mode: 0o700 });
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
      const outs = await Promise.all(
        names.map((n, i) => b.runAsync('start-subagent', shellArgs(n, `${gate(g)}; sleep 0.2; echo out-${i}`, ['--max-concurrent', '3']))),
      );
      outs.forEach((r, i) => {
        assert.equal(r.code, 0, `${names[i]}: ${r.stdout}${r.stderr}`);
        assert.equal(r.json.ok, true);
        assert.equal(r.json.name, names[i]);
        assert.equal(r.json.status, 'scheduled');
      });

      // With the gate shut, exactly 3 hold a slot and 27 wait, numbered 1..27.
      const full = await until(
        '3 running and 27 queued',
        async () => {
          const s = await statusLineAsync(b, ['--prefix', 'race']);
          const running = s.agents.filter((a: any) => a.status === 'running');
          const queued = s.agents.filter((a: any) => a.queued);
          return running.length === 3 && queued.length === 27 && s.queue?.running === 3 && s.queue?.queued === 27 ? s : null;
        },
        LONG,
        50,
      );
      assert.deepEqual(full.queue, { limit: 3, running: 3, queued: 27, minFreeMemory: null, availableMemory: null });
      const queued = full.agents.filter((a: any) => a.queued);
      for (const a of queued) {
        assert.equal(a.status, 'scheduled', a.name);
        assert.equal(a.agentPid, null, `${a.name} is queued but has an agent`);
        assert.ok(Number.isInteger(a.queuePosition) && a.queuePosition >= 1, `${a.name} position ${a.queuePosition}`);
      }
      assert.deepEqual(
        queued.map((a: any) => a.queuePosition).sort((x: number, y: number) => x - y),
        Array.from({ length: 27 }, (_, i) => i + 1),
      );
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
      names.forEach((n, i) => {
        assert.equal(resultText(b, n), `out-${i}\n`);
      });
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
    assert.ok(
      polls.some((p) => p.queued.length > 0),
      'some poll saw queued runs',
    );

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
    const s = await until(
      'b, x, y queued',
      async () => {
        const st = await statusLineAsync(b, ['--prefix', 'kill']);
        return st.queue?.queued === 3 ? st : null;
      },
      LONG,
      50,
    );
    assert.deepEqual(s.queue, { limit: 1, running: 1, queued: 3, minFreeMemory: null, availableMemory: null });
    const qb = byName(s.agents)['kill/b'];
    assert.equal(qb.queuePosition, 1);
    assert.equal(qb.status, 'scheduled');

    // A queued run whose supervisor dies leaves the queue: y moves up behind b.
    process.kill(qx.pid, 'SIGKILL');
    const s1 = await until(
      'x left the queue',
      async () => {
        const st = await statusLineAsync(b, ['--prefix', 'kill']);
        return st.queue?.queued === 2 ? st : null;
      },
      LONG,
      50,
    );
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
    assert.deepEqual(held.queue, { limit: 1, running: 1, queued: 2, minFreeMemory: null, availableMemory: null }, 'the orphaned agent holds the slot');
    assert.deepEqual([byName(held.agents)['kill/b'].status, byName(held.agents)['kill/b'].queuePosition], ['scheduled', 1]);

    const ju = b.run('status', ['--name', 'kill/a', '--junit', 'unknown.xml', '--require-success']);
    assert.equal(assertError(ju, 'E_RUN_FAILED').junit, join(b.dir, 'unknown.xml'));
    const uroot = checkJunit(t, join(b.dir, 'unknown.xml'));
    assert.equal(uroot.attrs.errors, '1');
    assert.deepEqual(
      findAll(uroot, 'error').map((e) => e.attrs.type),
      ['unknown'],
    );

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
    assert.deepEqual(s2.json.queue, { limit: 1, running: 0, queued: 0, minFreeMemory: null, availableMemory: null });
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
    const s = await until(
      'five queued',
      async () => {
        const x = await statusLineAsync(b, ['--all']);
        return x.agents.filter((a: any) => a.queued).length === 5 ? x : null;
      },
      LONG,
      50,
    );
    const m = byName(s.agents);
    assert.deepEqual(
      ['kill/b', ...order].map((n) => m[n].queuePosition),
      [1, 2, 3, 4, 5],
      'positions follow the start order, not the names',
    );
    assert.equal(m['kill/b'].run, 2);
    open(g);
    waitTerminal(b, ['fifo/0', 'kill/b', ...order]);
    assert.equal(resultText(b, 'kill/b'), 'b-again\n');
    const recs = [recordOf(b.registry, 'fifo/0'), recordOf(b.registry, 'kill/b', 2), ...order.map((n) => recordOf(b.registry, n))];
    for (let i = 1; i < recs.length; i++) {
      assert.ok(
        Date.parse(recs[i]!.agentStartedAt) >= Date.parse(recs[i - 1]!.finishedAt),
        `${recs[i]!.name} run ${recs[i]!.run} started after ${recs[i - 1]!.name} ended`,
      );
      assert.equal(recs[i]!.outcome, 'succeeded');
    }
  });

  test('a queued run can be cancelled and leaves the queue; raising the limit releases waiting runs; 0 removes it', async (t) => {
    const b = bQueue;
    const g = join(b.dir, 'gate-q');
    const a = startShell(b, 'q/a', `${gate(g)}; echo a`, ['--max-concurrent', '1']);
    await untilStatus(b, 'q/a', (x) => x.status === 'running', 'a running');
    for (const n of ['q/b', 'q/c', 'q/d']) startShell(b, n, `${gate(g)}; echo ${n}`);
    const s1 = await until(
      'b, c, d queued at 1, 2, 3',
      async () => {
        const s = await statusLineAsync(b, ['--prefix', 'q']);
        const m = byName(s.agents);
        return m['q/b']?.queuePosition === 1 && m['q/c']?.queuePosition === 2 && m['q/d']?.queuePosition === 3 ? s : null;
      },
      LONG,
      50,
    );
    assert.deepEqual(s1.queue, { limit: 1, running: 1, queued: 3, minFreeMemory: null, availableMemory: null });
    const tr = b.run('status', ['--prefix', 'q', '--tree']);
    assert.equal(tr.code, 0, tr.stdout);
    assert.deepEqual(
      tr.stdout
        .split('\n')
        .filter(Boolean)
        .map((l) => l.replace(/ {2}run 1$/, '')),
      ['q/a  [shell] running', 'q/b  [shell] scheduled (queued #1)', 'q/c  [shell] scheduled (queued #2)', 'q/d  [shell] scheduled (queued #3)'],
    );
    assert.equal(byName(s1.agents)['q/a'].queued, false);

    const c = b.run('cancel', ['--name', 'q/c']);
    assert.equal(c.code, 0, c.stdout + c.stderr);
    assert.equal(c.json.previousStatus, 'scheduled');
    assert.equal(c.json.outcome, 'cancelled');
    const s2 = await until(
      'c left the queue, d moved up',
      async () => {
        const s = await statusLineAsync(b, ['--prefix', 'q']);
        const m = byName(s.agents);
        return m['q/d']?.queuePosition === 2 && s.queue.queued === 2 ? s : null;
      },
      LONG,
      50,
    );
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
    const s3 = await until(
      'b and d running, e queued',
      async () => {
        const s = await statusLineAsync(b, ['--prefix', 'q']);
        const m = byName(s.agents);
        return m['q/b']?.status === 'running' && m['q/d']?.status === 'running' && m['q/e']?.queued ? s : null;
      },
      LONG,
      50,
    );
    assert.deepEqual(s3.queue, { limit: 3, running: 3, queued: 1, minFreeMemory: null, availableMemory: null });
    assert.equal(byName(s3.agents)['q/e'].queuePosition, 1);

    // SUBAGENT_MAX_CONCURRENT=0 removes the limit: e starts, and so does f at once.
    startShell(b, 'q/f', 'echo q/f', [], { env: { SUBAGENT_MAX_CONCURRENT: '0' } });
    const s4 = await until(
      'e running without a limit',
      async () => {
        const s = await statusLineAsync(b, ['--prefix', 'q']);
        return byName(s.agents)['q/e']?.status === 'running' ? s : null;
      },
      LONG,
      50,
    );
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
    assert.deepEqual(
      failed.map((c) => [c.attrs.name, c.children.find((x) => x.name === 'failure')!.attrs.type]),
      [['q/c', 'cancelled']],
    );
    assert.equal(a.status, 'scheduled');
  });
});
