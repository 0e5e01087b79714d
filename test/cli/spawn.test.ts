// How start-subagent starts a supervisor (docs/design.md, "Starting a run"): Node itself, at once,
// detached in a session of its own, stdin /dev/null, its output into supervisor.log; a start killed
// right after does not strand its run; a batch's supervisors run while the batch still works.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from '../support/paths.js';
import { until } from '../support/wait.js';
import { isStopped, procSid } from '../support/procs.js';
import { readJson, runDirOf } from '../support/registry.js';
import { makeBox, type Box } from '../support/box.js';
import { gate, open, waitTerminal } from '../support/shell.js';

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

/** A start-subagent stopped (SIGSTOP) just before it prints: its run is published and its supervisor started. */
async function pausedStart(box: Box, name: string, script: string) {
  const s = box.spawn('start-subagent', ['--name', name, '--cli', 'shell', '--prompt', script], { env: { SUBAGENT_TEST_PAUSE_AT: 'before-output' } });
  box.own.push(s.pid);
  await until('start-subagent stops before its output', () => isStopped(s.pid) || s.settled(), 30_000);
  assert.equal(s.settled(), false, 'start-subagent reached the checkpoint');
  const dir = runDirOf(box.registry, name);
  const supervisor = readJson(join(dir, 'supervisor.json')).pid as number;
  return { s, dir, supervisor };
}

test('the supervisor is Node from its first instant, detached, in a session of its own, even while start-subagent is stopped', async () => {
  const go = join(b.dir, 'go-direct');
  const { s, dir, supervisor } = await pausedStart(b, 'direct', `${gate(go)}; echo direct`);
  await until('the supervisor runs', () => isSupervisor(supervisor), 30_000);
  assert.equal(procSid(supervisor), supervisor, 'its own session');
  assert.equal(readlinkSync(`/proc/${supervisor}/fd/0`), '/dev/null');
  assert.equal(readlinkSync(`/proc/${supervisor}/fd/1`), join(dir, 'supervisor.log'));
  assert.equal(readlinkSync(`/proc/${supervisor}/fd/2`), join(dir, 'supervisor.log'));
  process.kill(s.pid, 'SIGCONT');
  const out = await s.done;
  assert.equal(out.code, 0, out.stdout + out.stderr);
  assert.equal(out.json.pid, supervisor);
  open(go);
  const a = waitTerminal(b, ['direct']).direct;
  assert.equal(a.outcome, 'succeeded');
  assert.equal(a.pid, supervisor);
  assert.equal(b.run('result', ['--name', 'direct']).stdout, 'direct\n');
  assert.equal(readFileSync(join(dir, 'supervisor.log'), 'utf8'), '', 'no warnings, no noise');
});

test('a start-subagent killed after it started the supervisor does not strand the run', async () => {
  const { s, supervisor } = await pausedStart(b, 'orphan', 'echo orphan');
  process.kill(s.pid, 'SIGKILL');
  await s.done;
  const a = waitTerminal(b, ['orphan']).orphan;
  assert.equal(a.outcome, 'succeeded');
  assert.equal(a.pid, supervisor);
  assert.equal(b.run('result', ['--name', 'orphan']).stdout, 'orphan\n');
});

test("a batch start's supervisors run their runs while the batch is still working", async () => {
  const lines = ['one', 'two'].map((name) => JSON.stringify({ name, cli: 'shell', prompt: `echo ${name}` }));
  writeFileSync(join(b.dir, 'batch.jsonl'), lines.join('\n') + '\n');
  const s = b.spawn('start-subagent', ['--batch', join(b.dir, 'batch.jsonl')], { env: { SUBAGENT_TEST_PAUSE_AT: 'before-output' } });
  b.own.push(s.pid);
  await until('the batch stops before its output', () => isStopped(s.pid) || s.settled(), 30_000);
  assert.equal(s.settled(), false);
  // With the batch still stopped, both runs end: their supervisors did not wait for it.
  await until(
    'both runs are done while the batch is stopped',
    () => ['one', 'two'].every((n) => readJson(join(runDirOf(b.registry, n), 'record.json')).status === 'done'),
    60_000,
  );
  process.kill(s.pid, 'SIGCONT');
  const out = await s.done;
  assert.equal(out.json?.ok, true, out.stdout + out.stderr);
  assert.deepEqual(
    out.json.started.map((r: any) => r.name),
    ['one', 'two'],
  );
  const all = waitTerminal(b, ['one', 'two']);
  assert.equal(all.one.outcome, 'succeeded');
  assert.equal(all.two.outcome, 'succeeded');
});
