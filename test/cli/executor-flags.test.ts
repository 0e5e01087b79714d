// test-matrix: once — executor flag checks and sbatch's refusals (a fake sbatch), the same on every Node and
// process backend (scripts/test.sh).
/**
 * --executor, --slurm-arg and SUBAGENT_EXECUTOR checked at a start's entrance, without a cluster: a fake
 * `sbatch` on PATH stands for Slurm's client (the real one runs in test/slurm/).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { makeBox } from '../support/box.js';
import { recordOf } from '../support/registry.js';
import { assertError, assertOk } from '../support/run.js';
import { expectError, shellArgs, startShell, waitTerminal } from '../support/shell.js';

const b = makeBox('executor-flags');
const nodeOnly = dirname(process.execPath);
/**
 * A directory with an `sbatch` as a cluster whose controller refuses every submission, as sbatch does
 * (stderr, exit 1), and whose `--test-only` check refuses a partition named `nope` and takes the rest.
 */
const refusing = join(b.dir, 'refusing');
mkdirSync(refusing);
writeFileSync(
  join(refusing, 'sbatch'),
  [
    '#!/bin/sh',
    'case " $* " in *--partition=nope*) echo "sbatch: error: invalid partition specified: nope" >&2; exit 1;; esac',
    'case " $* " in *" --test-only "*) echo "sbatch: Job 1 to start at 2026-11-24T23:17:43" >&2; exit 0;; esac',
    'cat >/dev/null',
    'echo "sbatch: error: Batch job submission failed: Job violates accounting/QOS policy" >&2',
    'exit 1',
    '',
  ].join('\n'),
);
chmodSync(join(refusing, 'sbatch'), 0o755);
// The ps process backend (SUBAGENT_PROC_BACKEND=ps) needs its `ps` beside it.
symlinkSync(execFileSync('sh', ['-c', 'command -v ps'], { encoding: 'utf8' }).trim(), join(refusing, 'ps'));
const withFake = { env: { PATH: `${refusing}:${nodeOnly}` } };

test('an unknown executor, from the flag or from SUBAGENT_EXECUTOR: E_ARG_INVALID, nothing recorded', () => {
  const e = expectError(b, 'start-subagent', shellArgs('x', 'echo', ['--executor', 'kubernetes']), 'E_ARG_INVALID');
  assert.match(e.details.hint, /local or slurm/);
  expectError(b, 'start-subagent', shellArgs('x', 'echo'), 'E_ARG_INVALID', { env: { SUBAGENT_EXECUTOR: 'cloud' } });
});

test('--slurm-arg needs --executor slurm; options that would run the supervisor twice are refused', () => {
  expectError(b, 'start-subagent', shellArgs('x', 'echo', ['--slurm-arg', '--time=5']), 'E_ARG_INVALID');
  for (const bad of ['--array=1-3', '-a1-3', '--requeue', '--wrap=true'])
    expectError(b, 'start-subagent', shellArgs('x', 'echo', ['--executor', 'slurm', `--slurm-arg=${bad}`]), 'E_ARG_INVALID', withFake);
});

test('--executor slurm without sbatch on PATH: E_CMD_MISSING; with --max-concurrent: E_ARG_INVALID', () => {
  const e = expectError(b, 'start-subagent', shellArgs('x', 'echo', ['--executor', 'slurm']), 'E_CMD_MISSING', { env: { PATH: nodeOnly } });
  assert.equal(e.details.program, 'sbatch');
  const l = expectError(b, 'start-subagent', shellArgs('x', 'echo', ['--executor', 'slurm', '--max-concurrent', '2']), 'E_ARG_INVALID', withFake);
  assert.match(l.error, /--max-concurrent/);
});

test('--slurm-arg options sbatch refuses (asked with --test-only): E_ARG_INVALID with its words, nothing recorded', () => {
  const e = expectError(b, 'start-subagent', shellArgs('bad-args', 'echo', ['--executor', 'slurm', '--slurm-arg=--partition=nope']), 'E_ARG_INVALID', withFake);
  assert.match(e.error, /invalid partition specified: nope/);
  assert.deepEqual(e.details.value, ['--partition=nope']);
});

test('a submission sbatch refuses: E_EXECUTOR_FAILED with its words, the run recorded failed', () => {
  const e = assertError(b.run('start-subagent', shellArgs('refused', 'echo', ['--executor', 'slurm', '--slurm-arg=--time=5']), withFake), 'E_EXECUTOR_FAILED');
  assert.match(e.error, /violates accounting\/QOS policy/);
  assert.deepEqual(e.details.args, ['--time=5']);
  const r = recordOf(b.registry, 'refused');
  assert.equal(r.status, 'done');
  assert.equal(r.outcome, 'failed');
  assert.equal(r.endReason, 'executor-failed');
  assert.deepEqual(r.executor, { name: 'slurm', args: ['--time=5'], jobId: null });
  const line = assertOk(b.run('status', ['--name', 'refused']));
  assert.equal(line.agents[0].executor, 'slurm');
});

test('local is the default and is recorded; a batch line may name its executor', () => {
  const j = startShell(b, 'here', 'echo here');
  assert.equal(j.executor, 'local');
  assert.equal(j.jobId, null);
  assert.equal(typeof j.pid, 'number');
  assert.deepEqual(recordOf(b.registry, 'here').executor, { name: 'local', args: [], jobId: null });
  assert.equal(waitTerminal(b, ['here']).here.executor, 'local');
  const file = join(b.dir, 'lines.jsonl');
  writeFileSync(
    file,
    [
      JSON.stringify({ name: 'bl/ok', cli: 'shell', prompt: 'echo ok', executor: 'local' }),
      JSON.stringify({ name: 'bl/bad', cli: 'shell', prompt: 'echo', executor: 'moon' }),
    ].join('\n'),
  );
  const out = assertError(b.run('start-subagent', ['--batch', file]), 'E_BATCH_INCOMPLETE');
  assert.deepEqual(
    out.failed.map((f: any) => [f.name, f.code]),
    [['bl/bad', 'E_ARG_INVALID']],
  );
  assert.equal(out.started[0].executor, 'local');
  waitTerminal(b, ['bl/ok']);
});
