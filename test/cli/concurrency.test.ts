import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { assertError } from '../support/run.js';
import { runDirOf, runDirs } from '../support/registry.js';
import { makeBox } from '../support/box.js';
import { gate, open, resultText, shellArgs, startShell, statusOf, untilStatus, waitTerminal } from '../support/shell.js';

const b = makeBox('concurrency');

describe('concurrency: one name, one owner', () => {
  test('20 concurrent starts of 20 names are all recorded and all complete', async () => {
    const names = Array.from({ length: 20 }, (_, i) => `fan/n${String(i).padStart(2, '0')}`);
    const outs = await Promise.all(names.map((n, i) => b.runAsync('start-subagent', shellArgs(n, `echo result-${i}`))));
    outs.forEach((r, i) => {
      assert.equal(r.code, 0, `${names[i]}: ${r.stdout}${r.stderr}`);
      assert.equal(r.json.ok, true);
      assert.equal(r.json.name, names[i]);
    });
    assert.equal(new Set(outs.map((r) => r.json.pid)).size, 20, 'one supervisor each');
    const all = waitTerminal(b, names);
    assert.equal(Object.keys(all).length, 20);
    names.forEach((n, i) => {
      assert.equal(all[n]!.status, 'done', n);
      assert.equal(all[n]!.outcome, 'succeeded', n);
      assert.equal(readFileSync(join(runDirOf(b.registry, n), 'events.log'), 'utf8'), `result-${i}\n`);
    });
    const listed = b.run('status', []);
    assert.deepEqual(
      listed.json.agents.map((a: any) => a.name).filter((n: string) => n.startsWith('fan/')),
      names,
    );
  });

  test('10 concurrent starts of one name: exactly one ok, nine E_NAME_EXISTS, one run directory', async () => {
    const outs = await Promise.all(Array.from({ length: 10 }, (_, i) => b.runAsync('start-subagent', shellArgs('contested', `echo winner-${i}`))));
    const ok = outs.filter((r) => r.json?.ok === true);
    const lost = outs.filter((r) => r.json?.ok === false);
    assert.equal(ok.length, 1, outs.map((r) => r.stdout).join(''));
    assert.equal(lost.length, 9);
    for (const r of lost) assertError(r, 'E_NAME_EXISTS');
    const winner = outs.indexOf(ok[0]!);
    waitTerminal(b, ['contested']);
    const runs = runDirs(b.registry).filter((r) => r.record?.name === 'contested');
    assert.equal(runs.length, 1, 'one run on disk');
    assert.deepEqual(
      readdirSync(dirname(runs[0]!.dir)).filter((e) => !e.startsWith('.')),
      ['1'],
    );
    assert.equal(readFileSync(join(runs[0]!.dir, 'prompt'), 'utf8'), `echo winner-${winner}`, "the winner's prompt");
    assert.equal(resultText(b, 'contested'), `winner-${winner}\n`);
    // The losers left nothing behind (no temp directories).
    const tmp = join(b.registry, 'tmp');
    let leftover: string[] = [];
    try {
      leftover = readdirSync(tmp);
    } catch {
      leftover = [];
    }
    assert.deepEqual(leftover, []);
  });

  test('concurrent resumes: exactly one wins, the others get E_AGENT_BUSY', async () => {
    startShell(b, 'resumed', 'echo first');
    waitTerminal(b, ['resumed']);
    const g = join(b.dir, 'gate-resume');
    // The winning run waits on a gate, so it is still running when the losers look.
    const outs = await Promise.all(
      Array.from({ length: 4 }, (_, i) => b.runAsync('resume-subagent', ['--name', 'resumed', '--prompt', `${gate(g)}; echo resume-${i}`])),
    );
    const ok = outs.filter((r) => r.json?.ok === true);
    assert.equal(ok.length, 1, outs.map((r) => r.stdout).join(''));
    assert.equal(ok[0]!.json.run, 2);
    for (const r of outs.filter((x) => x !== ok[0])) assertError(r, 'E_AGENT_BUSY');
    const winner = outs.indexOf(ok[0]!);
    await untilStatus(b, 'resumed', (a) => a.status === 'running', 'run 2 running');
    open(g);
    const a = waitTerminal(b, ['resumed']).resumed;
    assert.equal(a.run, 2);
    assert.equal(a.outcome, 'succeeded');
    assert.equal(resultText(b, 'resumed'), `resume-${winner}\n`);
    const runs = runDirs(b.registry)
      .filter((r) => r.record?.name === 'resumed')
      .map((r) => r.record.run)
      .sort();
    assert.deepEqual(runs, [1, 2]);
  });

  test('concurrent cancels of one run: it ends cancelled once; every answer is ok or E_NOT_RUNNING', async () => {
    startShell(b, 'cc', 'while :; do sleep 0.05; done');
    const a = await untilStatus(b, 'cc', (x) => x.status === 'running' && x.agentPid, 'running');
    const outs = await Promise.all(Array.from({ length: 3 }, () => b.runAsync('cancel', ['--name', 'cc'])));
    for (const r of outs) {
      assert.ok(r.json, r.stdout + r.stderr);
      if (r.json.ok !== true) assertError(r, 'E_NOT_RUNNING');
    }
    assert.ok(outs.some((r) => r.json.ok === true));
    const s = statusOf(b, 'cc');
    assert.equal(s.status, 'done');
    assert.equal(s.outcome, 'cancelled');
    assert.equal(s.agentAlive, false);
    assert.ok(a.agentPid);
  });
});
