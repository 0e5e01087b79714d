/**
 * Issue 5, points 9 and 10 (docs/guarantees.md, 8 and the detached supervisor): cancel of a run whose agent has
 * children in its group, in their own group, in their own session, ignoring SIGTERM and outliving the
 * agent — nothing of the run survives; a `setsid` + double-fork escapee that also drops the run's
 * marker is the documented limit, and is not reported as killed. And the caller's Ctrl-C (SIGINT),
 * SIGHUP and terminal hang-up do not touch the detached run.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { BIN } from '../support/paths.js';
import { assertOk } from '../support/run.js';
import { NOTICE_MS, until } from '../support/wait.js';
import { NEEDS_ENVIRON, pidAlive, pidsWithEnv, procPgid, procPpid, procSid, PS_BACKEND } from '../support/procs.js';
import { withBox, type Box } from '../support/box.js';
import { gate, open, startShellAsync, statusOfAsync, untilStatus, waitTerminalAsync } from '../support/shell.js';
import { skipUnlessCi, works } from '../support/machine.js';

function cmdline(p: number): string {
  try {
    return readFileSync(`/proc/${p}/cmdline`, 'latin1').replace(/\0/g, ' ');
  } catch {
    return '(gone)';
  }
}

async function cancelledAndClean(b: Box, name: string, kidMarker: string, c: any): Promise<void> {
  assert.equal(c.outcome, 'cancelled', JSON.stringify(c));
  await until('nothing of the run survives', () => pidsWithEnv(kidMarker).length === 0, NOTICE_MS).catch(() => {
    throw new Error(`processes of the run survived the cancel: ${pidsWithEnv(kidMarker).map((p) => `${p} ${cmdline(p)}`)}`);
  });
  const a = await statusOfAsync(b, name);
  assert.equal(a.status, 'done');
  assert.equal(a.outcome, 'cancelled');
  assert.equal(a.agentAlive, false);
}

describe('point 9: process trees', { concurrency: 2 }, () => {
  test("children in the agent's group, in their own group, in their own session, ignoring TERM, outliving the agent: none survive", () =>
    withBox('tree', async (b) => {
      const kid = `FAULT_KID=${b.dir}`;
      const script = [
        // The agent itself exits at once on TERM: its children outlive it.
        `trap 'exit 0' TERM`,
        `${kid} sleep 300 &`,
        `${kid} setsid sleep 301 &`,
        `${kid} perl -e 'setpgrp(0, 0); exec "sleep", "302"' &`,
        `${kid} sh -c 'trap "" TERM; while :; do sleep 0.1; done' &`,
        `${kid} setsid sh -c 'trap "" TERM INT HUP; sleep 303 & wait' &`,
        `( ${kid} sh -c 'trap "" TERM; exec sleep 304' & ) &`,
        'echo children-started',
        'while :; do sleep 0.05; done',
      ].join('\n');
      await startShellAsync(b, 't', script);
      const a = await untilStatus(b, 't', (x) => x.status === 'running' && x.agentPid, 'running');
      const comm = (p: number) => {
        try {
          return readFileSync(`/proc/${p}/cmdline`, 'latin1');
        } catch {
          return '';
        }
      };
      const want = ['300', '301', '302', '303', '304'];
      await until(
        'the children run',
        () => {
          const have = new Set(pidsWithEnv(kid).map(comm));
          return want.every((n) => have.has(`sleep\0${n}\0`));
        },
        30_000,
      );
      const kids = pidsWithEnv(kid);
      // The set-up is what it claims: some children left the agent's group, some its session.
      const agentPgid = procPgid(a.agentPid);
      const agentSid = procSid(a.agentPid);
      const byArg = (n: string) => kids.find((p) => comm(p) === `sleep\0${n}\0`)!;
      assert.equal(procPgid(byArg('300')), agentPgid, "sleep 300 is in the agent's group");
      assert.notEqual(procSid(byArg('301')), agentSid, 'sleep 301 is in its own session');
      assert.notEqual(procPgid(byArg('302')), agentPgid, 'sleep 302 is in its own group');
      assert.equal(procSid(byArg('302')), agentSid, '… of the same session');
      const c = assertOk(await b.runAsync('cancel', ['--name', 't']), 'cancel');
      assert.deepEqual(c.survivors, [], 'cancel reports no survivors');
      assert.ok(!pidAlive(a.agentPid));
      await cancelledAndClean(b, 't', kid, c);
    }));

  test('cancel --signal KILL and --signal INT reach every process of the tree too', () =>
    withBox('tree-signals', async (b) => {
      for (const sig of ['KILL', 'INT']) {
        const kid = `FAULT_KID_${sig}=${b.dir}`;
        const name = `s/${sig.toLowerCase()}`;
        await startShellAsync(
          b,
          name,
          [`${kid} setsid sh -c 'trap "" TERM INT; sleep 310 & wait' &`, `${kid} sleep 311 &`, 'while :; do sleep 0.05; done'].join('\n'),
        );
        await untilStatus(b, name, (x) => x.status === 'running', 'running');
        await until('the children run', () => pidsWithEnv(kid).length >= 3, 30_000);
        const c = assertOk(await b.runAsync('cancel', ['--name', name, '--signal', sig]), `cancel --signal ${sig}`);
        await cancelledAndClean(b, name, kid, c);
      }
    }));

  test('a setsid + double-fork escapee that keeps the run marker is found by it and stopped', { skip: PS_BACKEND ? NEEDS_ENVIRON : false }, () =>
    withBox('marked-escapee', async (b) => {
      const esc = `FAULT_ESCAPEE=${b.dir}`;
      await startShellAsync(b, 'm', [`( ${esc} setsid sh -c 'trap "" TERM; sleep 322' & ) &`, 'while :; do sleep 0.05; done'].join('\n'));
      const a = await untilStatus(b, 'm', (x) => x.status === 'running' && x.agentPid, 'running');
      const escapee = await until('the escapee runs', () => pidsWithEnv(esc)[0], 30_000);
      // What the test is about: out of the agent's tree, group and session; only the marker leads to it.
      assert.notEqual(procPpid(escapee), a.agentPid, 'the escapee was re-parented away from the agent');
      assert.notEqual(procSid(escapee), procSid(a.agentPid), 'the escapee is in a session of its own');
      const c = assertOk(await b.runAsync('cancel', ['--name', 'm']), 'cancel');
      await cancelledAndClean(b, 'm', esc, c);
    }),
  );

  test('a setsid + double-fork escapee that drops the run marker is the documented limit: it survives and is not reported as killed', () =>
    withBox('escapee', async (b) => {
      const esc = `FAULT_ESCAPEE=${b.dir}`;
      const kid = `FAULT_KID=${b.dir}`;
      const script = [`( env -u SUBAGENT_RUN_ID ${esc} setsid sleep 320 & ) &`, `${kid} sleep 321 &`, 'while :; do sleep 0.05; done'].join('\n');
      await startShellAsync(b, 'e', script);
      await untilStatus(b, 'e', (x) => x.status === 'running', 'running');
      const escapee = await until('the escapee runs', () => pidsWithEnv(esc)[0], 30_000);
      await until('the child runs', () => pidsWithEnv(kid).length >= 1, 30_000);
      assert.ok(!readFileSync(`/proc/${escapee}/environ`, 'latin1').includes('SUBAGENT_RUN_ID='), 'the escapee dropped the marker');
      const c = assertOk(await b.runAsync('cancel', ['--name', 'e']), 'cancel');
      await cancelledAndClean(b, 'e', kid, c);
      // The limit, as documented: it cannot be found, so it lives …
      assert.ok(pidAlive(escapee), 'the escapee is out of reach (if this fails, update docs/reliability.md: the limit is gone)');
      // … and the cancel does not claim otherwise.
      assert.deepEqual(c.survivors, []);
      assert.ok(!JSON.stringify(c).includes(String(escapee)), `the cancel line does not mention the escapee: ${JSON.stringify(c)}`);
      process.kill(escapee, 'SIGKILL');
    }));
});

/** A caller in its own process group (like a shell's foreground job): start, then a waiter, then idle. */
function callerGroup(b: Box, name: string, script: string, out: string): { pid: number; done: Promise<void> } {
  const line = `'${join(BIN, 'start-subagent')}' --name '${name}' --cli shell --prompt "$RUN_SCRIPT" > '${out}'; '${join(BIN, 'status')}' --wait-terminal --name '${name}' --timeout 60 > '${out}.wait' & exec sleep 300`;
  const c = spawn('/bin/sh', ['-c', line], { env: { ...b.env, RUN_SCRIPT: script }, detached: true, stdio: 'ignore' });
  b.own.push(c.pid!);
  return { pid: c.pid!, done: new Promise((r) => c.on('exit', () => r())) };
}

describe("point 10: the caller's signals", { concurrency: 2 }, () => {
  for (const signals of [['SIGINT'], ['SIGHUP'], ['SIGINT', 'SIGHUP', 'SIGTERM']] as NodeJS.Signals[][]) {
    test(`${signals.join(' + ')} to the caller's process group does not touch the detached run`, () =>
      withBox('caller', async (b) => {
        const g = join(b.dir, 'gate');
        const out = join(b.dir, 'start.json');
        const caller = callerGroup(b, 'x', `${gate(g)}; echo survived`, out);
        await until('start printed its line', () => existsSync(out) && readFileSync(out, 'utf8').endsWith('\n'), 30_000);
        const started = JSON.parse(readFileSync(out, 'utf8'));
        assert.equal(started.ok, true);
        const a = await untilStatus(b, 'x', (x) => x.status === 'running' && x.agentPid, 'running');
        assert.notEqual(procPgid(a.pid), caller.pid, "the supervisor is not in the caller's group");
        assert.notEqual(procPgid(a.agentPid), caller.pid, "the agent is not in the caller's group");
        for (const s of signals) process.kill(-caller.pid, s);
        await caller.done;
        // The caller's group is gone; the run is not.
        assert.ok(pidAlive(a.pid), 'the supervisor lives');
        assert.ok(pidAlive(a.agentPid), 'the agent lives');
        assert.equal((await statusOfAsync(b, 'x')).status, 'running');
        open(g);
        const end = (await waitTerminalAsync(b, ['x'])).x;
        assert.equal(end.status, 'done');
        assert.equal(end.outcome, 'succeeded', JSON.stringify(end));
        assert.equal(end.exitCode, 0);
        assert.equal((await b.runAsync('result', ['--name', 'x'])).stdout, 'survived\n');
      }));
  }

  test('a terminal hang-up (the pty of the caller goes away) does not touch the detached run', async (t) => {
    if (!works('script', ['-qec', 'true', '/dev/null'])) {
      skipUnlessCi(t, 'util-linux `script` (to give the caller a terminal) is not available (bash test/setup-tools.sh installs it)');
      return;
    }
    await withBox('hangup', async (b) => {
      const g = join(b.dir, 'gate');
      const out = join(b.dir, 'start.json');
      const cmd = `'${join(BIN, 'start-subagent')}' --name x --cli shell --prompt "$RUN_SCRIPT" > '${out}'; sleep 300`;
      const term = spawn('script', ['-qec', cmd, '/dev/null'], {
        env: { ...b.env, RUN_SCRIPT: `${gate(g)}; echo survived` },
        detached: true,
        stdio: ['pipe', 'ignore', 'ignore'],
      });
      b.own.push(term.pid!);
      const exited = new Promise((r) => term.on('exit', r));
      await until('start printed its line', () => existsSync(out) && readFileSync(out, 'utf8').endsWith('\n'), 30_000);
      const a = await untilStatus(b, 'x', (x) => x.status === 'running' && x.agentPid, 'running');
      // The terminal goes away: its session gets SIGHUP.
      process.kill(term.pid!, 'SIGKILL');
      await exited;
      assert.ok(pidAlive(a.pid) && pidAlive(a.agentPid), "the run outlives its caller's terminal");
      assert.equal((await statusOfAsync(b, 'x')).status, 'running');
      open(g);
      const end = (await waitTerminalAsync(b, ['x'])).x;
      assert.equal(end.outcome, 'succeeded', JSON.stringify(end));
      assert.equal((await b.runAsync('result', ['--name', 'x'])).stdout, 'survived\n');
    });
  });
});
