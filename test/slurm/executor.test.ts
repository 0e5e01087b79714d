// test-order: early — one of the longest files (a real Slurm cluster's scheduling): started first (scripts/test.sh).
/**
 * The slurm executor on a real one-node Slurm cluster (test/slurm/cluster.sh), through the real
 * executables: runs placed as batch jobs whose one process is the supervisor, their liveness from
 * Slurm, cancel through Slurm, and the ends Slurm makes without the supervisor (a killed supervisor, a
 * time limit). The tests of this file run one after another: two of them fill the node.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { testBox, type Box } from '../support/box.js';
import { pidAlive, pidsWithEnv, untilGone } from '../support/procs.js';
import { recordOf } from '../support/registry.js';
import { assertOk } from '../support/run.js';
import { expectError, gate, open, resultText, statusOf, untilStatus, waitTerminal } from '../support/shell.js';
import { cancelJobs, jobState, needCluster, slurmCluster, slurmCmd, submitRaw } from '../support/slurm.js';
import { LONG, until } from '../support/wait.js';
import { startAnthropic } from '../fakes/anthropic.js';
import type { FakeServer } from '../fakes/script.js';
import { claudeSetup, requireCli } from '../fakes/env.js';
import { MARK_KEY } from '../support/box.js';

const cluster = slurmCluster();

/** A box whose verbs reach the test cluster; jobs the test submits itself are cancelled at its end. */
function slurmBox(t: Parameters<typeof testBox>[0] & { skip(m?: string): void }, label: string): { b: Box; conf: string; raw: string[] } | null {
  const conf = needCluster(cluster, t);
  if (!conf) return null;
  const b = testBox(t, label);
  b.env.SLURM_CONF = conf;
  const raw: string[] = [];
  t.after(() => cancelJobs(conf, raw));
  return { b, conf, raw };
}

function startOnSlurm(b: Box, name: string, script: string, extra: string[] = []): any {
  const j = assertOk(b.run('start-subagent', ['--name', name, '--cli', 'shell', '--prompt', script, '--executor', 'slurm', ...extra]), `start ${name}`);
  assert.equal(j.executor, 'slurm');
  assert.equal(j.pid, null);
  assert.match(j.jobId, /^[0-9]+$/);
  return j;
}

/** No process of the run is left on the node (this machine): none carries its run id, its supervisor is gone. */
async function nothingLeft(b: Box, name: string, run = 1): Promise<void> {
  const r = recordOf(b.registry, name, run);
  await until(`no process of ${name} run ${run}`, () => pidsWithEnv(`SUBAGENT_RUN_ID=${r.runId}`).length === 0, LONG);
  if (r.supervisor) await untilGone(r.supervisor.pid, `the supervisor of ${name}`);
}

/** A job that takes every CPU of the node, so that the next one waits (Resources). */
async function fillNode(conf: string, raw: string[]): Promise<string> {
  const cpus = slurmCmd(conf, 'sinfo', ['-h', '-N', '-o', '%c']).stdout.trim().split('\n')[0]!;
  const id = submitRaw(conf, ['--job-name=fill', `--cpus-per-task=${cpus}`, '--output=/dev/null', '--wrap=sleep 600']);
  raw.push(id);
  await until('the node filled', () => jobState(conf, id)?.state === 'RUNNING', LONG, 100);
  return id;
}

test('start --executor slurm → done → result, and resume runs in the same session as a new job', async (t) => {
  const s = slurmBox(t, 'slurm-basic');
  if (!s) return;
  const { b, conf } = s;
  const j = startOnSlurm(b, 'basic', 'echo "node=$SLURM_JOB_ID"; echo kept > state.txt', ['--slurm-arg=--time=10']);
  const rec = recordOf(b.registry, 'basic');
  assert.deepEqual(rec.executor, { name: 'slurm', args: ['--time=10'], jobId: j.jobId });
  const a = waitTerminal(b, ['basic']).basic;
  assert.equal(a.status, 'done');
  assert.equal(a.outcome, 'succeeded', JSON.stringify(a));
  assert.equal(a.executor, 'slurm');
  assert.equal(a.jobId, j.jobId);
  assert.equal(resultText(b, 'basic'), `node=${j.jobId}\n`);
  // The job's name says which run; its output went into the run's supervisor.log.
  assert.equal(slurmCmd(conf, 'squeue', ['--states=all', '-h', '-j', j.jobId, '-O', 'Name:|']).stdout.trim(), 'subagent:basic:1|');
  assert.equal(jobState(conf, j.jobId)?.state, 'COMPLETED');

  // Resume without --executor: the run's own executor and options.
  const r = assertOk(b.run('resume-subagent', ['--name', 'basic', '--prompt', 'cat state.txt; echo "node=$SLURM_JOB_ID"']));
  assert.equal(r.executor, 'slurm');
  assert.equal(r.run, 2);
  assert.notEqual(r.jobId, j.jobId);
  assert.deepEqual(recordOf(b.registry, 'basic', 2).executor, { name: 'slurm', args: ['--time=10'], jobId: r.jobId });
  const a2 = waitTerminal(b, ['basic']).basic;
  assert.equal(a2.outcome, 'succeeded', JSON.stringify(a2));
  assert.equal(resultText(b, 'basic'), `kept\nnode=${r.jobId}\n`);
  await nothingLeft(b, 'basic', 2);

  // SUBAGENT_EXECUTOR is the default of a start.
  const d = assertOk(b.run('start-subagent', ['--name', 'by-env', '--cli', 'shell', '--prompt', 'echo env'], { env: { SUBAGENT_EXECUTOR: 'slurm' } }));
  assert.equal(d.executor, 'slurm');
  assert.equal(waitTerminal(b, ['by-env'])['by-env'].outcome, 'succeeded');
});

test('the end hook of a Slurm run runs to its end: the job waits for it (the engine would end it with the job)', async (t) => {
  const s = slurmBox(t, 'slurm-hook');
  if (!s) return;
  const { b } = s;
  const out = join(b.dir, 'hook.out');
  startOnSlurm(b, 'hooked', 'echo hi', ['--on-end', `sleep 1; echo "$SUBAGENT_NAME $SUBAGENT_STATUS $SUBAGENT_OUTCOME" >> '${out}'`]);
  const a = waitTerminal(b, ['hooked']).hooked;
  assert.equal(a.outcome, 'succeeded', JSON.stringify(a));
  await until('the hook wrote its line', () => existsSync(out) && readFileSync(out, 'utf8').endsWith('\n'), LONG);
  assert.equal(readFileSync(out, 'utf8'), 'hooked done succeeded\n');
  await nothingLeft(b, 'hooked');
});

test('a cancelled Slurm run’s end hook runs to its end: cancel lets the job finish it before ending the job', async (t) => {
  const s = slurmBox(t, 'slurm-hook-cancel');
  if (!s) return;
  const { b, conf } = s;
  const out = join(b.dir, 'hook.out');
  const j = startOnSlurm(b, 'hooked', 'echo started; sleep 600', ['--on-end', `sleep 2; echo "$SUBAGENT_NAME $SUBAGENT_OUTCOME" >> '${out}'`]);
  await untilStatus(b, 'hooked', (x) => x.status === 'running' && x.lastActivityAt !== null, 'running');
  const c = assertOk(b.run('cancel', ['--name', 'hooked']));
  assert.equal(c.outcome, 'cancelled');
  assert.equal(c.job.signalled, true);
  // The supervisor recorded the end and fired the hook; the job ended when the hook had, not before.
  assert.equal(c.job.cancelled, false, JSON.stringify(c.job));
  assert.equal(readFileSync(out, 'utf8'), 'hooked cancelled\n');
  assert.ok(['COMPLETED', 'CANCELLED', 'FAILED'].includes(jobState(conf, j.jobId)?.state ?? ''), 'the job ended');
  await nothingLeft(b, 'hooked');
});

test('--slurm-arg options the cluster refuses (a partition it has not): E_ARG_INVALID with sbatch’s words, nothing recorded', (t) => {
  const s = slurmBox(t, 'slurm-bad-args');
  if (!s) return;
  const { b } = s;
  const e = expectError(
    b,
    'start-subagent',
    ['--name', 'bad', '--cli', 'shell', '--prompt', 'echo', '--executor', 'slurm', '--slurm-arg=--partition=nope'],
    'E_ARG_INVALID',
  );
  assert.match(e.error, /invalid partition/i);
  const ok = startOnSlurm(b, 'good', 'echo fine', ['--slurm-arg=--time=5']);
  assert.equal(waitTerminal(b, ['good']).good.outcome, 'succeeded', JSON.stringify(ok));
});

test('a run pending behind a full node is scheduled with Slurm’s reason, then runs once the node frees', async (t) => {
  const s = slurmBox(t, 'slurm-pending');
  if (!s) return;
  const { b, conf, raw } = s;
  const fill = await fillNode(conf, raw);
  const j = startOnSlurm(b, 'waits', 'echo ran');
  const a = await untilStatus(
    b,
    'waits',
    (x) => x.status === 'scheduled' && /pending \((Resources|Priority)\)/.test(x.statusReason ?? ''),
    'scheduled, pending',
  );
  assert.equal(a.agentAlive, false);
  assert.equal(jobState(conf, j.jobId)?.state, 'PENDING');
  cancelJobs(conf, [fill]);
  const done = waitTerminal(b, ['waits']).waits;
  assert.equal(done.outcome, 'succeeded', JSON.stringify(done));
  assert.equal(resultText(b, 'waits'), 'ran\n');
});

test('--after between Slurm runs: the job waits in Slurm (Dependency), starts once the one it follows ended; a failure ends it dependency-failed', async (t) => {
  const s = slurmBox(t, 'slurm-after');
  if (!s) return;
  const { b, conf } = s;
  const g = join(b.dir, 'gate');
  const first = startOnSlurm(b, 'first', `${gate(g)}; echo first`);
  await untilStatus(b, 'first', (a) => a.status === 'running', 'first running', LONG);
  const second = startOnSlurm(b, 'second', 'echo second', ['--after', 'first']);
  // Held by Slurm itself (--dependency=afterany): no job slot is taken while it waits.
  await until('the second job pending on its dependency', () => jobState(conf, second.jobId)?.reason === 'Dependency', LONG, 100);
  const waiting = statusOf(b, 'second');
  assert.equal(waiting.status, 'scheduled');
  assert.deepEqual(waiting.waitingFor, ['first']);
  // A Slurm run after a failing one; a local run after a Slurm run (its own supervisor waits).
  startOnSlurm(b, 'failing', `${gate(g)}; exit 4`);
  const afterFailing = startOnSlurm(b, 'after-failing', 'echo never', ['--after', 'failing']);
  assertOk(b.run('start-subagent', ['--name', 'local-after', '--cli', 'shell', '--prompt', 'echo local', '--after', 'first']));
  await until('the run after the failing one pending', () => jobState(conf, afterFailing.jobId)?.reason === 'Dependency', LONG, 100);
  open(g);
  const done = waitTerminal(b, ['first', 'second', 'failing', 'after-failing', 'local-after']);
  for (const n of ['first', 'second', 'local-after']) assert.equal(done[n].outcome, 'succeeded', JSON.stringify(done[n]));
  assert.equal(resultText(b, 'second'), 'second\n');
  assert.ok(Date.parse(recordOf(b.registry, 'second').agentStartedAt) >= Date.parse(recordOf(b.registry, 'first').finishedAt));
  assert.equal(done.failing.reason, 'exit-code');
  assert.equal(done['after-failing'].reason, 'dependency-failed', JSON.stringify(done['after-failing']));
  assert.match(done['after-failing'].error, /"failing" run 1 failed \(exit-code\)/);
  assert.equal(jobState(conf, first.jobId)?.state, 'COMPLETED');
  await nothingLeft(b, 'second');
});

test('cancel of a running run: the graceful signal through Slurm, then the end recorded; nothing is left', async (t) => {
  const s = slurmBox(t, 'slurm-cancel');
  if (!s) return;
  const { b, conf } = s;
  const j = startOnSlurm(b, 'long', 'echo started; sleep 600');
  await untilStatus(b, 'long', (x) => x.status === 'running' && x.agentPid !== null, 'running');
  const c = assertOk(b.run('cancel', ['--name', 'long']));
  assert.equal(c.previousStatus, 'running');
  assert.equal(c.status, 'done');
  assert.equal(c.outcome, 'cancelled');
  assert.equal(c.job.id, j.jobId);
  assert.equal(c.job.stateBefore, 'RUNNING');
  assert.equal(c.job.signalled, true);
  const a = statusOf(b, 'long');
  assert.equal(a.outcome, 'cancelled');
  // The supervisor recorded the end itself (it got the signal and stopped its agent).
  assert.equal(a.endReason, null, JSON.stringify(a));
  assert.equal(a.signal, 'SIGTERM');
  await until('the job ended', () => ['COMPLETED', 'CANCELLED', 'FAILED'].includes(jobState(conf, j.jobId)?.state ?? ''), LONG, 100);
  await nothingLeft(b, 'long');
});

test('cancel --signal INT of a running run: the agent gets INT through Slurm (the supervisor passes on what cancel asked)', async (t) => {
  const s = slurmBox(t, 'slurm-cancel-int');
  if (!s) return;
  const { b } = s;
  startOnSlurm(b, 'int', "trap 'echo got INT; exit 7' INT; trap 'echo got TERM; exit 8' TERM; echo started; sleep 600 & wait");
  await untilStatus(b, 'int', (x) => x.status === 'running' && x.lastActivityAt !== null, 'running, its traps set');
  const c = assertOk(b.run('cancel', ['--name', 'int', '--signal', 'INT']));
  assert.equal(c.signalSent, 'INT');
  assert.equal(c.job.signalled, true);
  const a = statusOf(b, 'int');
  assert.equal(a.outcome, 'cancelled');
  assert.equal(a.exitCode, 7, `the INT trap ran, not the TERM one: ${JSON.stringify(a)}`);
  assert.equal(assertOk(b.run('result', ['--name', 'int', '--json'])).lastAssistantText, 'started\ngot INT\n');
  await nothingLeft(b, 'int');
});

test('cancel of a pending run cancels its job without signalling it; the agent never starts', async (t) => {
  const s = slurmBox(t, 'slurm-cancel-pending');
  if (!s) return;
  const { b, conf, raw } = s;
  await fillNode(conf, raw);
  const marker = join(b.dir, 'ran');
  const j = startOnSlurm(b, 'queued', `touch '${marker}'`);
  await untilStatus(b, 'queued', (x) => x.status === 'scheduled' && /pending/.test(x.statusReason ?? ''), 'pending');
  const c = assertOk(b.run('cancel', ['--name', 'queued']));
  assert.equal(c.previousStatus, 'scheduled');
  assert.equal(c.status, 'done');
  assert.equal(c.outcome, 'cancelled');
  assert.equal(c.job.stateBefore, 'PENDING');
  assert.equal(c.job.signalled, false);
  assert.equal(c.job.cancelled, true);
  assert.equal(jobState(conf, j.jobId)?.state, 'CANCELLED');
  const r = recordOf(b.registry, 'queued');
  assert.equal(r.agentProcess, null);
  assert.equal(r.supervisor, null);
  assert.match(r.endReason, /PENDING/);
  assert.throws(() => readFileSync(marker));
});

test('kill -9 of the supervisor inside the job: the run is unknown with Slurm’s state, and nothing is left', async (t) => {
  const s = slurmBox(t, 'slurm-kill');
  if (!s) return;
  const { b, conf } = s;
  const j = startOnSlurm(b, 'victim', 'sleep 600');
  const running = await untilStatus(b, 'victim', (x) => x.status === 'running' && x.pid !== null, 'running');
  assert.ok(pidAlive(running.pid));
  process.kill(running.pid, 'SIGKILL');
  const a = await untilStatus(b, 'victim', (x) => x.status === 'unknown', 'unknown');
  const state = jobState(conf, j.jobId)!;
  assert.ok(state, 'Slurm still knows the job');
  assert.match(a.statusReason, new RegExp(`slurm job ${j.jobId} ended \\(${state.state}`));
  assert.match(a.statusReason, /without the supervisor's record/);
  assert.equal(a.agentAlive, false);
  await nothingLeft(b, 'victim');
  // An unknown run with nothing alive can be resumed, on Slurm again.
  const r = assertOk(b.run('resume-subagent', ['--name', 'victim', '--prompt', 'echo back']));
  assert.equal(r.executor, 'slurm');
  assert.equal(waitTerminal(b, ['victim']).victim.outcome, 'succeeded');
});

test('a job killed by its time limit: the run is unknown with TIMEOUT and Slurm’s reason', async (t) => {
  const s = slurmBox(t, 'slurm-timeout');
  if (!s) return;
  const { b, conf } = s;
  const j = startOnSlurm(b, 'slow', 'sleep 600', ['--slurm-arg=--time=1']);
  await untilStatus(b, 'slow', (x) => x.status === 'running', 'running');
  // The limit is one minute; bring the job's end time to now (root may), and Slurm's own time-limit check
  // (every ~30 s) ends it as TIMEOUT.
  const u = slurmCmd(conf, 'scontrol', ['update', `JobId=${j.jobId}`, 'EndTime=now']);
  assert.equal(u.status, 0, u.stderr);
  const a = await untilStatus(b, 'slow', (x) => x.status === 'unknown', 'unknown after the time limit', 120_000);
  assert.match(a.statusReason, new RegExp(`slurm job ${j.jobId} ended \\(TIMEOUT, reason TimeLimit\\)`));
  assert.equal(jobState(conf, j.jobId)?.state, 'TIMEOUT');
  await nothingLeft(b, 'slow');
});

test('50 runs fanned out through Slurm with --batch are all recorded and finish; a listing asks Slurm once', async (t) => {
  const s = slurmBox(t, 'slurm-fanout');
  if (!s) return;
  const { b } = s;
  const go = join(b.dir, 'go');
  const lines = Array.from({ length: 50 }, (_, i) => JSON.stringify({ name: `fan/${i}`, cli: 'shell', prompt: `echo answer-${i}; ${gate(go)}` }));
  const file = join(b.dir, 'batch.jsonl');
  writeFileSync(file, lines.join('\n') + '\n');
  const out = assertOk(b.run('start-subagent', ['--batch', file, '--executor', 'slurm'], { timeoutMs: 300_000 }));
  assert.equal(out.started.length, 50);
  assert.equal(new Set(out.started.map((x: any) => x.jobId)).size, 50);
  for (const x of out.started) assert.equal(x.executor, 'slurm');

  // squeue through a wrapper that counts its calls: one listing of 50 live runs is one question.
  const log = join(b.dir, 'squeue.calls');
  const real = slurmCmd(s.conf, 'sh', ['-c', 'command -v squeue']).stdout.trim();
  writeFileSync(join(b.dir, 'squeue'), `#!/bin/sh\necho "$*" >> '${log}'\nexec '${real}' "$@"\n`);
  chmodSync(join(b.dir, 'squeue'), 0o755);
  const listing = assertOk(b.run('status', ['--prefix', 'fan'], { env: { PATH: `${b.dir}:${b.env.PATH}` } }));
  assert.equal(listing.agents.length, 50);
  assert.ok(listing.agents.every((a: any) => a.status === 'scheduled' || a.status === 'running'));
  const calls = readFileSync(log, 'utf8').trim().split('\n');
  assert.equal(calls.length, 1, calls.join('\n'));
  open(go);

  const names = lines.map((_, i) => `fan/${i}`);
  const done = await until(
    'all 50 done',
    async () => {
      const l = assertOk(await b.runAsync('status', ['--prefix', 'fan']));
      return l.agents.every((a: any) => a.status === 'done') ? l : null;
    },
    240_000,
    500,
  );
  for (const a of done.agents) {
    assert.equal(a.outcome, 'succeeded', JSON.stringify(a));
    assert.equal(a.executor, 'slurm');
  }
  for (const [i, n] of names.entries()) if (i % 10 === 0) assert.equal(resultText(b, n), `answer-${i}\n`);
});

let anthropic: FakeServer | null = null;
after(async () => {
  await anthropic?.close();
});

test('a real agent CLI on Slurm: Claude Code against its fake server, start → done → result → resume in its session', async (t) => {
  if (!requireCli(t, 'claude')) return;
  const s = slurmBox(t, 'slurm-claude');
  if (!s) return;
  const { b, conf } = s;
  anthropic ??= await startAnthropic();
  const setup = claudeSetup({ home: b.dir, baseUrl: anthropic.url });
  for (const k of Object.keys(b.env)) delete b.env[k];
  Object.assign(b.env, setup.env, { SUBAGENT_DIR: b.registry, SLURM_CONF: conf, [MARK_KEY]: b.dir });
  // The fake answers in this process: every wait goes through runAsync, keeping its event loop turning.
  const waitDone = async (name: string) => {
    const j = assertOk(await b.runAsync('status', ['--wait-terminal', '--timeout', '240', '--name', name]));
    return j.agents[0];
  };
  const started = assertOk(b.run('start-subagent', ['--name', 'cc', '--cli', 'claude', '--executor', 'slurm', '--prompt', 'TOOL:Bash:echo on-the-node']));
  assert.equal(started.executor, 'slurm');
  const a1 = await waitDone('cc');
  assert.equal(a1.outcome, 'succeeded', JSON.stringify(a1));
  assert.equal(a1.sessionId, started.sessionId);
  assert.equal(a1.toolUses, 1);
  const r1 = assertOk(await b.runAsync('result', ['--name', 'cc', '--json']));
  assert.equal(r1.lastAssistantText, 'done: on-the-node');
  const resumed = assertOk(await b.runAsync('resume-subagent', ['--name', 'cc', '--prompt', 'TOOL:Bash:echo again']));
  assert.equal(resumed.executor, 'slurm');
  const a2 = await waitDone('cc');
  assert.equal(a2.outcome, 'succeeded', JSON.stringify(a2));
  assert.equal(a2.run, 2);
  assert.equal(a2.sessionId, started.sessionId, 'the resume continues the same session');
  const r2 = assertOk(await b.runAsync('result', ['--name', 'cc', '--json']));
  assert.equal(r2.lastAssistantText, 'done: again');
  await nothingLeft(b, 'cc', 2);
});
