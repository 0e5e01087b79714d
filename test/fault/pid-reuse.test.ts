/**
 * Issue 5, point 3 (docs/guarantees.md, 4, identity not pid numbers): a recorded pid that now belongs to an
 * unrelated process. `status` never says running; `cancel` sends nothing to it (it lives on).
 * Variants: a record pointing at a live unrelated `sleep` with another start time (supervisor, agent,
 * start command), a record from "another boot", and the real thing in a pid namespace where the
 * recorded pids are handed to new processes through /proc/sys/kernel/ns_last_pid.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { updateRecord } from '../../lib/registry/store.js';
import { BIN, FIXTURES } from '../support/paths.js';
import { assertError, assertOk, runProgramAsync } from '../support/run.js';
import { NOTICE_MS, until } from '../support/wait.js';
import { bootId, pastThisSecond, pidAlive, procStartTime, untilGone } from '../support/procs.js';
import { runDirPath } from '../support/registry.js';
import { own, withBox, type Box } from '../support/box.js';
import { gate, open, startShellAsync, statusOfAsync, untilStatus, waitTerminalAsync } from '../support/shell.js';
import { works } from '../support/machine.js';

/** A run whose supervisor killed itself at "running": the agent lives, the record says running. */
async function orphanedRun(b: Box, name: string): Promise<{ dir: string; rec: any }> {
  const g = join(b.dir, `gate-${name.replace(/\W/g, '_')}`);
  await startShellAsync(b, name, gate(g), [], { env: { SUBAGENT_TEST_CRASH_AT: 'running' } });
  const a = await untilStatus(b, name, (x) => x.status === 'unknown' && x.agentPid, 'the supervisor died at its checkpoint');
  const dir = runDirPath(b.registry, name);
  return { dir, rec: { supervisorPid: a.pid, agentPid: a.agentPid } };
}

/** An unrelated live process, with a start time other than `other` (and than the run's processes'). */
async function unrelatedSleep(b: Box, other: string | null): Promise<number> {
  await pastThisSecond();
  const pid = own(b, 'sleep', ['300']);
  await until('the sleep runs', () => procStartTime(pid), 30_000);
  assert.notEqual(procStartTime(pid), other, 'the unrelated process must have another start time');
  return pid;
}

describe('point 3: pid reuse', { concurrency: 2 }, () => {
  test('supervisor and agent dead, both pids now held by unrelated sleeps: status unknown (never running), cancel sends nothing', () =>
    withBox('reuse', async (b) => {
      const { dir, rec } = await orphanedRun(b, 'r');
      process.kill(-rec.agentPid, 'SIGKILL');
      await untilGone(rec.agentPid, 'the agent is gone');
      let recorded: any;
      const sup = await unrelatedSleep(b, null);
      const ag = await unrelatedSleep(b, null);
      updateRecord(dir, (r) => {
        recorded = r;
        return { ...r, supervisor: { ...r.supervisor!, pid: sup }, agentProcess: { ...r.agentProcess!, pid: ag, pgid: ag } };
      });
      assert.notEqual(procStartTime(sup), recorded.supervisor.startTime);
      assert.notEqual(procStartTime(ag), recorded.agentProcess.startTime);
      for (let i = 0; i < 3; i++) {
        const a = await statusOfAsync(b, 'r');
        assert.equal(a.status, 'unknown', JSON.stringify(a));
        assert.equal(a.agentAlive, false, 'the unrelated process is not the agent');
        assert.equal(a.pid, sup);
      }
      assert.equal((await waitTerminalAsync(b, ['r'])).r.status, 'unknown');
      assertError(await b.runAsync('cancel', ['--name', 'r']), 'E_NOT_RUNNING');
      assertError(await b.runAsync('cancel', ['--name', 'r', '--signal', 'KILL']), 'E_NOT_RUNNING');
      assert.ok(pidAlive(sup) && pidAlive(ag), 'the unrelated processes were not signalled');
      // Not busy either: the run can be resumed.
      assertOk(await b.runAsync('resume-subagent', ['--name', 'r', '--prompt', 'echo again']), 'resume');
      assert.equal((await waitTerminalAsync(b, ['r'])).r.outcome, 'succeeded');
      assert.ok(pidAlive(sup) && pidAlive(ag));
    }));

  test('the supervisor pid is held by an unrelated sleep while the agent lives: unknown, cancel stops the agent only', () =>
    withBox('reuse-agent', async (b) => {
      const { dir, rec } = await orphanedRun(b, 'r');
      const sup = await unrelatedSleep(b, null);
      let recorded: any;
      updateRecord(dir, (r) => {
        recorded = r;
        return { ...r, supervisor: { ...r.supervisor!, pid: sup } };
      });
      assert.notEqual(procStartTime(sup), recorded.supervisor.startTime);
      const a = await statusOfAsync(b, 'r');
      assert.equal(a.status, 'unknown', JSON.stringify(a));
      assert.equal(a.agentAlive, true);
      const c = assertOk(await b.runAsync('cancel', ['--name', 'r']), 'cancel');
      assert.equal(c.outcome, 'cancelled');
      await untilGone(rec.agentPid, 'the real agent is gone', NOTICE_MS);
      assert.ok(pidAlive(sup), "the unrelated process on the supervisor's pid was not signalled");
      const end = await statusOfAsync(b, 'r');
      assert.equal(end.status, 'done');
      assert.equal(end.exitCode, null);
      assert.equal(typeof end.endReason, 'string');
    }));

  test("a scheduled run whose start command's pid is now an unrelated sleep: unknown, not scheduled forever", () =>
    withBox('reuse-starter', async (b) => {
      await startShellAsync(b, 's', 'echo never', [], { env: { SUBAGENT_TEST_CRASH_AT: 'supervisor-started' } });
      await untilStatus(b, 's', (x) => x.status === 'unknown', 'the supervisor died at once');
      const dir = runDirPath(b.registry, 's');
      const sleepPid = await unrelatedSleep(b, null);
      let recorded: any;
      // As if the start command had published the record and died before launching a supervisor.
      updateRecord(dir, (r) => {
        recorded = r;
        return { ...r, supervisor: null, starter: { ...r.starter!, pid: sleepPid } };
      });
      assert.notEqual(procStartTime(sleepPid), recorded.starter.startTime);
      const a = await statusOfAsync(b, 's');
      assert.equal(a.status, 'unknown', JSON.stringify(a));
      assert.equal((await waitTerminalAsync(b, ['s'])).s.status, 'unknown');
      assertError(await b.runAsync('cancel', ['--name', 's']), 'E_NOT_RUNNING');
      assert.ok(pidAlive(sleepPid));
    }));

  test('a record from another boot (boot id differs) is unknown even though its pids live, gets no signal, and can be resumed', () =>
    withBox('reboot', async (b) => {
      const g = join(b.dir, 'gate');
      await startShellAsync(b, 'old', gate(g));
      const live = await untilStatus(b, 'old', (x) => x.status === 'running' && x.agentPid, 'running');
      const dir = runDirPath(b.registry, 'old');
      const other = bootId().replace(/^./, (c) => (c === '0' ? '1' : '0'));
      updateRecord(dir, (r) => ({
        ...r,
        starter: r.starter && { ...r.starter, bootId: other },
        supervisor: r.supervisor && { ...r.supervisor, bootId: other },
        agentProcess: r.agentProcess && { ...r.agentProcess, bootId: other },
      }));
      const a = await statusOfAsync(b, 'old');
      assert.equal(a.status, 'unknown', JSON.stringify(a));
      assert.equal(a.agentAlive, false);
      assertError(await b.runAsync('cancel', ['--name', 'old']), 'E_NOT_RUNNING');
      assert.ok(pidAlive(live.pid) && pidAlive(live.agentPid), 'processes of "another boot" were not signalled');
      const r = assertOk(await b.runAsync('resume-subagent', ['--name', 'old', '--prompt', 'echo after-reboot']), 'resume');
      assert.equal(r.run, 2);
      assert.equal((await waitTerminalAsync(b, ['old'])).old.outcome, 'succeeded');
      open(g);
    }));

  test('pid namespace: the recorded pids are handed to new unrelated processes (ns_last_pid)', async (t) => {
    if (!works('unshare', ['-Urpf', '--mount-proc', '/bin/sh', '-c', 'echo 300 > /proc/sys/kernel/ns_last_pid'])) {
      // The only skip here: a kernel feature this machine lacks.
      t.skip('this kernel does not allow `unshare -Urpf --mount-proc` with a writable /proc/sys/kernel/ns_last_pid');
      return;
    }
    await withBox('pidns', async (b) => {
      mkdirSync(b.registry, { recursive: true });
      const d = await runProgramAsync(
        'unshare',
        ['-Urpf', '--mount-proc', '/bin/sh', '-c', 'node "$0" "$@"; exit $?', join(FIXTURES, 'fault-pidns.mjs'), BIN, b.dir],
        { cwd: process.cwd(), env: b.env },
      );
      assert.equal(d.code, 0, `driver failed: ${d.stdout} ${d.stderr}`);
      const report = JSON.parse(d.stdout.trim().split('\n').pop()!);
      assert.equal(report.error, undefined, JSON.stringify(report));
      // The kernel allowed ns_last_pid (checked above), so placing the processes is our own set-up: if it
      // did not work, the fault was never injected, and that is a failure, not a skip.
      assert.ok(
        report.placed?.supervisor && report.placed?.agent,
        `the fault was not set up: could not place processes on the recorded pids in 200 attempts: ${JSON.stringify(report.placed)}`,
      );
      assert.equal(report.placed.supervisor.pid, report.recorded.supervisor.pid);
      assert.notEqual(report.placed.supervisor.startTime, report.recorded.supervisor.startTime);
      assert.notEqual(report.placed.agent.startTime, report.recorded.agent.startTime);
      const a = report.status.agents[0];
      assert.equal(a.status, 'unknown', JSON.stringify(a));
      assert.equal(a.agentAlive, false);
      assert.equal(report.waitTerminal.agents[0].status, 'unknown');
      assert.equal(report.cancel.ok, false, JSON.stringify(report.cancel));
      assert.equal(report.cancel.code, 'E_NOT_RUNNING');
      assert.equal(report.statusAfter.agents[0].status, 'unknown');
      for (const s of report.sleepsAfter) assert.equal(s.alive, true, `the unrelated process on pid ${s.pid} was killed`);
    });
  });
});
