import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { FAKE_AGENT } from '../support/paths.js';
import { LONG, until } from '../support/wait.js';
import { isStopped, pidAlive, pidsWithEnv, procPgid, procPpid, procSid } from '../support/procs.js';
import { readJson, runDirOf } from '../support/registry.js';
import { makeBox } from '../support/box.js';
import { expectError, resultText, startShell, statusOf, untilStatus, waitTerminal } from '../support/shell.js';

const b = makeBox('cancel');

/** Starts a shell run, waits until it runs and `ready` says its processes are up. */
async function running(name: string, script: string, ready: () => boolean = () => true): Promise<any> {
  startShell(b, name, script);
  const a = await untilStatus(b, name, (x) => x.status === 'running' && x.agentPid, 'running');
  await until(`${name} ready`, ready, LONG);
  return a;
}

function assertCancelled(name: string): any {
  const a = statusOf(b, name);
  assert.equal(a.status, 'done');
  assert.equal(a.outcome, 'cancelled');
  assert.equal(a.agentAlive, false);
  const rec = readJson(join(runDirOf(b.registry, name), 'record.json'));
  assert.equal(rec.status, 'done');
  assert.equal(rec.outcome, 'cancelled');
  return a;
}

describe('cancel', () => {
  test('the success line {ok, name, pid, signalSent, previousStatus}; the run ends cancelled', async () => {
    const a = await running('c/plain', 'echo up; while :; do sleep 0.05; done');
    const r = b.run('cancel', ['--name', 'c/plain']);
    assert.equal(r.code, 0, r.stdout);
    assert.equal(r.json.ok, true);
    assert.equal(r.json.name, 'c/plain');
    assert.equal(r.json.pid, a.pid);
    assert.equal(r.json.signalSent, 'TERM');
    assert.equal(r.json.previousStatus, 'running');
    assert.equal(r.json.registry, b.registry);
    assert.equal(r.json.run, 1);
    assert.equal(r.json.agentPid, a.agentPid);
    assert.equal(r.json.status, 'done');
    assert.equal(r.json.outcome, 'cancelled');
    assert.deepEqual(r.json.survivors, []);
    assert.ok(!pidAlive(a.agentPid));
    const s = assertCancelled('c/plain');
    assert.equal(s.cancelRequested, true);
    assert.match(s.error, /cancel/);
    await until('the supervisor exits', () => !pidAlive(a.pid), LONG);
    // Output before the cancel is kept.
    assert.equal(resultText(b, 'c/plain'), 'up\n');
  });

  test('background children, one in its own session and one double-forked away, leave no process behind', async () => {
    const m = `MARK_BG=${b.dir}-bg`;
    const script = [
      `${m} sleep 300 &`,
      `${m} setsid sleep 301 &`,
      `( ${m} sleep 302 & ) &`,
      `${m} sh -c 'trap "" TERM INT HUP; while :; do sleep 0.1; done' &`,
      'echo children-started',
      'wait',
    ].join('\n');
    const a = await running('c/tree', script, () => pidsWithEnv(m).length >= 4);
    const before = pidsWithEnv(m);
    assert.ok(before.length >= 4, `found ${before.length}`);
    const r = b.run('cancel', ['--name', 'c/tree']);
    assert.equal(r.code, 0, r.stdout);
    assert.deepEqual(pidsWithEnv(m), [], 'every process of the run is gone');
    assert.ok(!pidAlive(a.agentPid));
    assertCancelled('c/tree');
  });

  test("descendants that dropped the run marker (SUBAGENT_RUN_ID) are found by the parent-pid walk: one in its own session, one below that, one in the agent's group; none survives", async () => {
    const m = `MARK_NOID=${b.dir}-noid`;
    const script = [
      `env -u SUBAGENT_RUN_ID ${m} setsid sleep 310 &`,
      `env -u SUBAGENT_RUN_ID ${m} setsid sh -c 'sleep 311 & wait' &`,
      `env -u SUBAGENT_RUN_ID ${m} sleep 312 &`,
      'echo children-started',
      'wait',
    ].join('\n');
    const a = await running('c/nomark', script, () => pidsWithEnv(m).length >= 4);
    const kids = pidsWithEnv(m);
    const environ = (pid: number) => readFileSync(`/proc/${pid}/environ`, 'latin1').split('\0');
    const sleeping = (secs: string) => kids.find((p) => readFileSync(`/proc/${p}/cmdline`, 'latin1') === `sleep\0${secs}\0`);
    // What the test is about, checked in /proc: no marker to find them by; sessions and groups of their own.
    for (const p of kids) assert.ok(!environ(p).some((e) => e.startsWith('SUBAGENT_RUN_ID=')), `pid ${p} still carries the run marker`);
    const own = sleeping('310');
    const below = sleeping('311');
    const inGroup = sleeping('312');
    assert.ok(own && below && inGroup, `the sleeps are up: ${kids.join(' ')}`);
    assert.equal(procSid(own), own, 'sleep 310 leads its own session');
    assert.equal(procPpid(own), a.agentPid, "sleep 310 is still the agent's child (a descendant, not an escapee)");
    assert.equal(procPpid(procPpid(below)!), a.agentPid, "sleep 311 is the agent's grandchild");
    assert.notEqual(procSid(below), procSid(a.agentPid), "sleep 311 is outside the agent's session");
    assert.notEqual(procPgid(below), procPgid(a.agentPid), "sleep 311 is outside the agent's group");
    assert.equal(procPgid(inGroup), procPgid(a.agentPid), "sleep 312 is in the agent's group");
    const r = b.run('cancel', ['--name', 'c/nomark']);
    assert.equal(r.code, 0, r.stdout);
    assert.deepEqual(r.json.survivors, []);
    assert.deepEqual(pidsWithEnv(m), [], 'no descendant of the run is alive (/proc)');
    for (const p of kids) assert.ok(!pidAlive(p), `pid ${p} survived the cancel`);
    assert.ok(!pidAlive(a.agentPid));
    assertCancelled('c/nomark');
  });

  test('--signal KILL', async () => {
    const m = `MARK_KILL=${b.dir}-kill`;
    const a = await running('c/kill', `${m} sleep 300 & ${m} setsid sleep 300 & wait`, () => pidsWithEnv(m).length >= 2);
    const r = b.run('cancel', ['--name', 'c/kill', '--signal', 'KILL']);
    assert.equal(r.code, 0, r.stdout);
    assert.equal(r.json.signalSent, 'KILL');
    assert.deepEqual(pidsWithEnv(m), []);
    assert.ok(!pidAlive(a.agentPid));
    assertCancelled('c/kill');
  });

  test('--signal INT', async () => {
    const m = `MARK_INT=${b.dir}-int`;
    const a = await running('c/int', `${m} sleep 300 & wait`, () => pidsWithEnv(m).length >= 1);
    const r = b.run('cancel', ['--name', 'c/int', '--signal', 'INT']);
    assert.equal(r.code, 0, r.stdout);
    assert.equal(r.json.signalSent, 'INT');
    assert.deepEqual(pidsWithEnv(m), []);
    assert.ok(!pidAlive(a.agentPid));
    assertCancelled('c/int');
  });

  test('each process gets the graceful signal once: a TERM trap that takes its time runs once', async () => {
    // The group's TERM reaches the shell; a second one to the shell itself (as cancel sent before) would
    // arrive during the trap's sleep and run the trap again.
    await running('c/once', "trap 'echo stopping; sleep 0.5; echo stopped; exit 3' TERM; echo up; sleep 300 & wait", () => resultText(b, 'c/once') === 'up\n');
    const r = b.run('cancel', ['--name', 'c/once']);
    assert.equal(r.code, 0, r.stdout);
    assert.equal(resultText(b, 'c/once'), 'up\nstopping\nstopped\n', 'the trap ran once');
    assertCancelled('c/once');
  });

  test('a script that traps TERM and keeps running is still gone after cancel (escalation to KILL)', async () => {
    const m = `MARK_TRAP=${b.dir}-trap`;
    const a = await running(
      'c/trap',
      `trap 'echo ignored-term' TERM; ${m} sh -c 'trap "" TERM; sleep 300' & while :; do sleep 0.05; done`,
      () => pidsWithEnv(m).length >= 1,
    );
    const r = b.run('cancel', ['--name', 'c/trap']);
    assert.equal(r.code, 0, r.stdout);
    assert.ok(!pidAlive(a.agentPid), 'the stubborn script was killed');
    assert.deepEqual(pidsWithEnv(m), []);
    assertCancelled('c/trap');
  });

  test('a stubborn agent that ignores TERM and INT with a detached child in its own session (fake agent)', async () => {
    const pidfile = join(b.dir, 'fake.pids');
    const script = `exec '${process.execPath}' '${FAKE_AGENT}' --ignore TERM,INT,HUP --detached 1 --pidfile '${pidfile}' --print ready --sleep 300`;
    const pids = () => (existsSync(pidfile) ? readFileSync(pidfile, 'utf8').trim().split('\n').map(Number) : []);
    const a = await running('c/fake', script, () => pids().length >= 2 && resultText(b, 'c/fake') === 'ready\n');
    for (const p of pids()) assert.ok(pidAlive(p));
    for (const sig of ['SIGTERM', 'SIGINT'] as const) process.kill(a.agentPid, sig);
    assert.ok(pidAlive(a.agentPid), 'the fake agent ignores TERM and INT');
    const r = b.run('cancel', ['--name', 'c/fake']);
    assert.equal(r.code, 0, r.stdout);
    for (const p of pids()) assert.ok(!pidAlive(p), `pid ${p} of the run survived the cancel`);
    assertCancelled('c/fake');
  });

  test('cancel of a scheduled run (its supervisor held before it reads its record): cancelled, the script never runs', async () => {
    // A run is "scheduled" only for the instant before its supervisor starts the agent. To hold it there,
    // the supervisor stops itself (SUBAGENT_TEST_PAUSE_AT) before it reads its record, and goes on once
    // cancel has recorded its intent.
    const name = 'c/sched';
    const ran = join(b.dir, 'ran-sched');
    const s = startShell(b, name, `touch '${ran}'; sleep 300`, [], { env: { SUBAGENT_TEST_PAUSE_AT: 'supervisor-started' } });
    const pid = s.pid as number;
    await until('the supervisor holds before it reads its record', () => isStopped(pid), LONG);
    const dir = runDirOf(b.registry, name);
    assert.equal(statusOf(b, name).status, 'scheduled');
    const c = b.spawn('cancel', ['--name', name]);
    await until('cancel recorded its intent', () => readJson(join(dir, 'record.json')).cancel !== null || c.settled(), LONG);
    process.kill(pid, 'SIGCONT');
    const r = await c.done;
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.equal(r.json.previousStatus, 'scheduled');
    const a = assertCancelled(name);
    assert.equal(a.agentPid, null, 'no agent was ever started');
    await until('the supervisor is gone', () => !pidAlive(pid), LONG);
    assert.ok(!existsSync(ran), 'the script never ran');
    assert.equal(statusOf(b, name).status, 'done');
  });

  test('E_NOT_RUNNING for a finished run and for a second cancel; E_NAME_NOT_FOUND; E_SIGNAL_UNSUPPORTED before lookup', async () => {
    startShell(b, 'c/finished', 'echo done');
    waitTerminal(b, ['c/finished']);
    const j = expectError(b, 'cancel', ['--name', 'c/finished'], 'E_NOT_RUNNING');
    assert.match(j.error, /c\/finished/);
    expectError(b, 'cancel', ['--name', 'c/plain'], 'E_NOT_RUNNING');
    expectError(b, 'cancel', ['--name', 'c/nobody'], 'E_NAME_NOT_FOUND');
    for (const sig of ['HUP', 'USR1', '9', 'STOP', '']) {
      expectError(b, 'cancel', ['--name', 'c/finished', '--signal', sig], 'E_SIGNAL_UNSUPPORTED');
    }
    expectError(b, 'cancel', ['--name', 'c/nobody', '--signal', 'HUP'], 'E_SIGNAL_UNSUPPORTED');
  });
});
