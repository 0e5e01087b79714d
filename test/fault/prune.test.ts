/**
 * subagent-prune killed -9 in the middle (SUBAGENT_TEST_CRASH_AT): after a run was moved into the
 * trash, after a whole name was, and between the journal's two lines. Every run is whole or gone, the
 * name keeps runs K..N without a hole (status, status --runs, result --since work), a listing with the
 * status cache is the plain listing, and the next prune finishes the work (the trash emptied).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { makeBox, quiet, type Box } from '../support/box.js';
import { runDirOf } from '../support/registry.js';
import { assertOk } from '../support/run.js';
import { startShell, waitTerminal } from '../support/shell.js';
import { until } from '../support/wait.js';

const b = makeBox('prune-fault');

function finished(box: Box, name: string, runs: number): void {
  startShell(box, name, `echo ${name} 1`);
  waitTerminal(box, [name]);
  for (let k = 2; k <= runs; k++) {
    assertOk(box.run('resume-subagent', ['--name', name, '--prompt', `echo ${name} ${k}`]), `resume ${name}`);
    waitTerminal(box, [name]);
  }
}

function runsOf(name: string): number[] {
  return assertOk(b.run('status', ['--runs', '--name', name]), `status --runs ${name}`).runs.map((r: any) => r.run);
}

/** Each run directory left holds its record and its prompt: whole. */
function assertWhole(name: string, runs: number[]): void {
  for (const k of runs) {
    const dir = runDirOf(b.registry, name, k);
    assert.ok(existsSync(join(dir, 'record.json')) && existsSync(join(dir, 'prompt')), `run ${k} of ${name} is whole`);
  }
}

function listings(): [string, string] {
  return [b.run('status', []).stdout, b.run('status', [], { env: { SUBAGENT_FAST_PATHS: '0' } }).stdout];
}

async function settled(names: string[], runs: number): Promise<void> {
  await quiet(b);
  const records = names.flatMap((n) => Array.from({ length: runs }, (_, i) => join(runDirOf(b.registry, n, i + 1), 'record.json')));
  await until('the records settled', () => records.every((r) => Date.now() - statSync(r).ctimeMs > 2300), 15_000, 100);
  b.run('status', []); // the cache holds them
}

describe('a prune killed -9', () => {
  test('after its first run moved: the rest whole, no hole, the listing true; the next prune finishes', async () => {
    finished(b, 'k', 4);
    await settled(['k'], 4);
    const killed = b.run('prune', ['--name', 'k', '--keep-last', '1'], { env: { SUBAGENT_TEST_CRASH_AT: 'prune-run-moved' } });
    assert.equal(killed.signal, 'SIGKILL', killed.stdout + killed.stderr);
    assert.deepEqual(runsOf('k'), [2, 3, 4]);
    assertWhole('k', [2, 3, 4]);
    assert.equal(readdirSync(join(b.registry, 'trash')).length, 1, 'run 1 is in the trash');
    const since = assertOk(b.run('result', ['--name', 'k', '--since', '0', '--json']));
    assert.deepEqual(
      since.runs.map((r: any) => r.run),
      [2, 3, 4],
    );
    const [cached, plain] = listings();
    assert.equal(cached, plain);
    assert.equal(JSON.parse(plain).agents.find((a: any) => a.name === 'k').run, 4);
    const next = assertOk(b.run('prune', ['--name', 'k', '--keep-last', '1']));
    assert.deepEqual(
      next.removed.map((r: any) => r.run),
      [2, 3],
    );
    assert.deepEqual(readdirSync(join(b.registry, 'trash')), [], 'the trash emptied');
    assert.deepEqual(runsOf('k'), [4]);
    assert.equal(assertOk(b.run('resume-subagent', ['--name', 'k', '--prompt', 'echo k 5'])).run, 5);
    waitTerminal(b, ['k']);
  });

  test('after a whole name moved: the name is gone at once, whole; the next prune empties the trash', async () => {
    finished(b, 'w', 2);
    await settled(['w'], 2);
    const killed = b.run('prune', ['--name', 'w', '--whole-names'], { env: { SUBAGENT_TEST_CRASH_AT: 'prune-name-moved' } });
    assert.equal(killed.signal, 'SIGKILL', killed.stdout + killed.stderr);
    assert.ok(!existsSync(join(b.registry, 'agents', 'w')));
    const [cached, plain] = listings();
    assert.equal(cached, plain);
    assert.ok(!JSON.parse(plain).agents.some((a: any) => a.name === 'w'));
    assertOk(b.run('prune', ['--name', 'nothing', '--keep-last', '1']));
    assert.deepEqual(readdirSync(join(b.registry, 'trash')), []);
  });

  test('between the journal lines (its change begun, not yet published): the listing reads the name, not the cache', async () => {
    finished(b, 'j', 3);
    await settled(['j'], 3);
    const killed = b.run('prune', ['--name', 'j', '--keep-last', '1'], { env: { SUBAGENT_TEST_CRASH_AT: 'journal-published' } });
    assert.equal(killed.signal, 'SIGKILL', killed.stdout + killed.stderr);
    assert.deepEqual(runsOf('j'), [3]);
    const [cached, plain] = listings();
    assert.equal(cached, plain);
    assert.equal(JSON.parse(plain).agents.find((a: any) => a.name === 'j').run, 3);
  });
});
