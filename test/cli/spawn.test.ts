// How start-subagent starts a supervisor (docs/design.md, "Starting a run"): held at a gate until the
// start command has exited (or died) so that its boot does not share the CPU with the start's last steps;
// a batch releases each supervisor at once; and without the fast paths (SUBAGENT_FAST_PATHS=0) the
// supervisor starts directly.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, isStopped, makeBox, procSid, procStartTime, readJson, runDirOf, spawnVerb, until, waitTerminal, type Box } from './util.js';

const SUPERVISOR = join(ROOT, 'dist', 'bin', 'supervisor.cjs');
const b = makeBox('spawn');

function argvOf(pid: number): string[] {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'latin1').split('\0').slice(0, -1);
  } catch {
    return [];
  }
}

const isSupervisor = (pid: number) => argvOf(pid)[0] === process.execPath && argvOf(pid).includes(SUPERVISOR);
const isGate = (pid: number) => argvOf(pid)[0] === '/bin/sh' && argvOf(pid).includes(SUPERVISOR);

/** A start-subagent stopped (SIGSTOP) just before it prints: its run is published and its supervisor started. */
async function pausedStart(box: Box, name: string, script: string) {
  const s = spawnVerb(box, 'start-subagent', ['--name', name, '--cli', 'shell', '--prompt', script], { env: { SUBAGENT_TEST_PAUSE_AT: 'before-output' } });
  box.own.push(s.pid);
  await until('start-subagent stops before its output', () => isStopped(s.pid) || s.settled(), 30_000);
  assert.equal(s.settled(), false, 'start-subagent reached the checkpoint');
  const dir = runDirOf(box.registry, name);
  const supervisor = readJson(join(dir, 'supervisor.json')).pid as number;
  return { s, dir, supervisor };
}

test('the supervisor waits at its gate while start-subagent is still running, then boots as the same process once it exits', async () => {
  const { s, dir, supervisor } = await pausedStart(b, 'gated', 'echo gated');
  assert.ok(isGate(supervisor), `the recorded supervisor is the gate shell for now: ${argvOf(supervisor).join(' ')}`);
  assert.equal(procSid(supervisor), supervisor, 'in its own session already');
  assert.equal(readJson(join(dir, 'record.json')).status, 'scheduled');
  const started = procStartTime(supervisor);
  process.kill(s.pid, 'SIGCONT');
  const out = await s.done;
  assert.equal(out.code, 0, out.stdout + out.stderr);
  assert.equal(out.json.pid, supervisor);
  const a = waitTerminal(b, ['gated']).gated;
  assert.equal(a.outcome, 'succeeded');
  assert.equal(a.pid, supervisor, 'the gate became the supervisor: same pid');
  assert.equal(readFileSync(join(dir, 'supervisor.log'), 'utf8'), '');
  assert.equal(b.run('result', ['--name', 'gated']).stdout, 'gated\n');
  // Identity (pid + start time) recorded for the gate holds for the supervisor it became.
  assert.equal(readJson(join(dir, 'supervisor.json')).startTime, started);
});

test('a start-subagent killed after it started the supervisor still lets it boot: the run is not stranded', async () => {
  const { s, supervisor } = await pausedStart(b, 'orphan', 'echo orphan');
  assert.ok(isGate(supervisor));
  process.kill(s.pid, 'SIGKILL');
  await s.done;
  await until('the supervisor boots', () => isSupervisor(supervisor), 30_000);
  const a = waitTerminal(b, ['orphan']).orphan;
  assert.equal(a.outcome, 'succeeded');
  assert.equal(a.pid, supervisor);
});

test('a run cancelled while its supervisor is still at the gate ends cancelled, and nothing of it is left', async () => {
  const { s, supervisor } = await pausedStart(b, 'early', 'echo never');
  assert.ok(isGate(supervisor));
  const c = b.run('cancel', ['--name', 'early']);
  assert.equal(c.json?.ok, true, c.stdout + c.stderr);
  assert.equal(c.json.previousStatus, 'scheduled');
  assert.equal(c.json.outcome, 'cancelled');
  assert.deepEqual(c.json.survivors, []);
  await until('the gate is gone', () => argvOf(supervisor).length === 0, 30_000);
  process.kill(s.pid, 'SIGCONT');
  assert.equal((await s.done).code, 0);
  const a = waitTerminal(b, ['early']).early;
  assert.equal(a.outcome, 'cancelled');
  assert.equal(a.agentPid, null, 'the agent never started');
  assert.equal(b.run('result', ['--name', 'early']).stdout.includes('never'), false);
});

test('a batch start releases each supervisor as soon as its run is published, not when the batch exits', async () => {
  const lines = ['one', 'two'].map((name) => JSON.stringify({ name, cli: 'shell', prompt: `echo ${name}` }));
  writeFileSync(join(b.dir, 'batch.jsonl'), lines.join('\n') + '\n');
  const s = spawnVerb(b, 'start-subagent', ['--batch', join(b.dir, 'batch.jsonl')], { env: { SUBAGENT_TEST_PAUSE_AT: 'before-output' } });
  b.own.push(s.pid);
  await until('the batch stops before its output', () => isStopped(s.pid) || s.settled(), 30_000);
  assert.equal(s.settled(), false);
  // With the batch still stopped, both runs end: their supervisors did not wait for it.
  await until('both runs are done while the batch is stopped', () => ['one', 'two'].every((n) => readJson(join(runDirOf(b.registry, n), 'record.json')).status === 'done'), 60_000);
  process.kill(s.pid, 'SIGCONT');
  const out = await s.done;
  assert.equal(out.json?.ok, true, out.stdout + out.stderr);
  assert.deepEqual(out.json.started.map((r: any) => r.name), ['one', 'two']);
  const all = waitTerminal(b, ['one', 'two']);
  assert.equal(all.one.outcome, 'succeeded');
  assert.equal(all.two.outcome, 'succeeded');
});

test('without the fast paths (SUBAGENT_FAST_PATHS=0) the supervisor starts directly, detached, and the run succeeds', async () => {
  const s = spawnVerb(b, 'start-subagent', ['--name', 'plain', '--cli', 'shell', '--prompt', 'echo plain'], { env: { SUBAGENT_TEST_PAUSE_AT: 'before-output', SUBAGENT_FAST_PATHS: '0' } });
  b.own.push(s.pid);
  await until('start-subagent stops before its output', () => isStopped(s.pid) || s.settled(), 30_000);
  assert.equal(s.settled(), false, 'start-subagent reached the checkpoint');
  const dir = runDirOf(b.registry, 'plain');
  const supervisor = readJson(join(dir, 'supervisor.json')).pid as number;
  // No gate: the supervisor is Node from its first instant, even while the start is stopped.
  await until('the supervisor runs', () => isSupervisor(supervisor), 30_000);
  assert.equal(procSid(supervisor), supervisor, 'its own session');
  assert.equal(readlinkSync(`/proc/${supervisor}/fd/0`), '/dev/null');
  assert.equal(readlinkSync(`/proc/${supervisor}/fd/1`), join(dir, 'supervisor.log'));
  assert.equal(readlinkSync(`/proc/${supervisor}/fd/2`), join(dir, 'supervisor.log'));
  process.kill(s.pid, 'SIGCONT');
  const out = await s.done;
  assert.equal(out.code, 0, out.stdout + out.stderr);
  assert.equal(out.json.pid, supervisor);
  const a = waitTerminal(b, ['plain']).plain;
  assert.equal(a.outcome, 'succeeded');
  assert.equal(readFileSync(join(dir, 'supervisor.log'), 'utf8'), '');
});
