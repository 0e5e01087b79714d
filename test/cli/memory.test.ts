/**
 * Memory (issue 25, point 4) through the real executables: the supervisor samples the resident memory of
 * a run's process tree into `memory` (status, the table, the done record); `--max-memory` stops a run past
 * it (failed, max-memory, nothing of it left) on start, resume and batch lines; `--min-free-memory` holds
 * queued runs, in order, until the machine has that much memory available — the machine's memory made
 * short, then plenty, through the documented test knob SUBAGENT_TEST_FREE_MEMORY_FILE. Bad values are
 * refused before anything is recorded.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { assertOk } from '../support/run.js';
import { makeBox, testBox } from '../support/box.js';
import { expectError, startShell, statusOf, waitTerminal, waitTerminalAsync } from '../support/shell.js';
import { pidsWithEnv } from '../support/procs.js';
import { recordOf } from '../support/registry.js';
import { until } from '../support/wait.js';

const MIB = 1024 * 1024;
const box = makeBox('memory');

/** A shell script that starts a Node process holding `mib` MiB it has written to, says so, and waits. */
function holding(mib: number, then = 'wait'): string {
  const js = `const b = Buffer.alloc(${mib} * 1024 * 1024, 1); setInterval(() => b[0]++, 1000); process.stdout.write('held\\n')`;
  return `"${process.execPath}" -e "${js}" & ${then}`;
}

describe('the memory of a run: sampled into status, the table and the done record', () => {
  test('a running run shows the RSS of its processes, a grandchild included; the done run keeps the last sample and the peak', async () => {
    const gate = join(box.dir, 'mem-gate');
    // sh → sh → node: the memory is summed over the whole tree.
    const inner = join(box.dir, 'mem-inner.sh');
    writeFileSync(inner, holding(80, `while [ ! -e '${gate}' ]; do sleep 0.1; done; kill $!`) + '\n');
    startShell(box, 'mem/seen', `sh '${inner}'`);
    const running = await until(
      'memory sampled past 80 MiB',
      () => {
        const s = statusOf(box, 'mem/seen');
        return s.status === 'running' && s.memory && s.memory.rssBytes >= 80 * MIB ? s : null;
      },
      30_000,
    );
    assert.ok(running.memory.peakRssBytes >= running.memory.rssBytes, JSON.stringify(running.memory));
    const table = box.run('status', ['--name', 'mem/seen', '--format', 'table']);
    assert.equal(table.code, 0, table.stderr);
    assert.match(table.stdout, /\bMEM\b/);
    assert.match(table.stdout, /\b(8\d|9\d|1\d\d)(\.\d)?M\b/, `the MEM column shows the RSS: ${table.stdout}`);
    writeFileSync(gate, '');
    const done = (await waitTerminalAsync(box, ['mem/seen']))['mem/seen'];
    assert.equal(done.outcome, 'succeeded', JSON.stringify(done));
    assert.ok(done.memory.peakRssBytes >= 80 * MIB, `the peak is kept: ${JSON.stringify(done.memory)}`);
    assert.deepEqual(recordOf(box.registry, 'mem/seen').memory, done.memory, 'the record holds what status shows');
  });
});

describe('the memory cap: --max-memory, held by the supervisor for every CLI', () => {
  test('a run past its memory is stopped and fails with max-memory; nothing of it is left; one within it succeeds', async () => {
    startShell(box, 'mem/over', holding(160), ['--max-memory', '100M']);
    startShell(box, 'mem/under', 'echo small', ['--max-memory', '1G']);
    const got = await waitTerminalAsync(box, ['mem/over', 'mem/under']);
    const over = got['mem/over'];
    assert.equal(over.outcome, 'failed', JSON.stringify(over));
    assert.equal(over.reason, 'max-memory');
    assert.match(over.error, /^stopped at --max-memory 100M: the run's processes held \d+(\.\d)?M$/);
    assert.equal(over.cancelRequested, true, 'stopped the way a cancel stops a run');
    assert.equal(over.caps.maxMemoryBytes, 100 * MIB);
    assert.ok(over.memory.peakRssBytes > 100 * MIB, JSON.stringify(over.memory));
    const runId = recordOf(box.registry, 'mem/over').runId;
    await until('no process of mem/over left', () => pidsWithEnv(`SUBAGENT_RUN_ID=${runId}`).length === 0, 10_000);
    assert.equal(got['mem/under'].outcome, 'succeeded');
    assert.equal(got['mem/under'].caps.maxMemoryBytes, 1024 * MIB);
  });

  test('checked (E_ARG_INVALID, nothing recorded), kept by a resume, dropped with none; batch lines take maxMemory', async () => {
    for (const value of ['0', '12Q', '1K', 'lots', '', '-1G']) {
      const e = expectError(box, 'start-subagent', ['--name', 'mem/bad', '--cli', 'shell', '--prompt', 'true', '--max-memory', value], 'E_ARG_INVALID');
      assert.equal(e.details.flag, '--max-memory', value);
      assert.match(e.details.hint, /2G/);
    }
    assert.equal(statusOf(box, 'mem/bad'), undefined, 'nothing recorded');
    startShell(box, 'mem/kept', 'echo one', ['--max-memory', '1.5G']);
    waitTerminal(box, ['mem/kept']);
    assertOk(box.run('resume-subagent', ['--name', 'mem/kept', '--prompt', 'echo two']), 'resume');
    assert.equal(waitTerminal(box, ['mem/kept'])['mem/kept'].caps.maxMemoryBytes, 1.5 * 1024 * MIB, 'a resume keeps it');
    assertOk(box.run('resume-subagent', ['--name', 'mem/kept', '--prompt', 'echo three', '--max-memory', 'none']), 'resume');
    assert.equal(waitTerminal(box, ['mem/kept'])['mem/kept'].caps.maxMemoryBytes, null, 'none drops it');

    const lines = [
      { name: 'mem/b1', cli: 'shell', prompt: 'true', maxMemory: '300M' },
      { name: 'mem/b2', cli: 'shell', prompt: 'true' },
      { name: 'mem/b3', cli: 'shell', prompt: 'true', maxMemory: 2 * 1024 * MIB },
      { name: 'mem/b4', cli: 'shell', prompt: 'true', maxMemory: 'plenty' },
    ];
    const r = box.run('start-subagent', ['--batch', '-', '--max-memory', '2G'], { input: lines.map((l) => JSON.stringify(l)).join('\n') + '\n' });
    assert.equal(r.json.code, 'E_BATCH_INCOMPLETE', r.stdout);
    assert.deepEqual(
      r.json.failed.map((f: any) => [f.line, f.code]),
      [[4, 'E_ARG_INVALID']],
    );
    const b = waitTerminal(box, ['mem/b1', 'mem/b2', 'mem/b3']);
    assert.equal(b['mem/b1'].caps.maxMemoryBytes, 300 * MIB);
    assert.equal(b['mem/b2'].caps.maxMemoryBytes, 2 * 1024 * MIB, 'the default from --max-memory');
    assert.equal(b['mem/b3'].caps.maxMemoryBytes, 2 * 1024 * MIB, 'bytes as a number');
  });
});

describe('the free-memory floor: --min-free-memory holds queued runs until the machine has the memory', () => {
  test('runs wait, first in line saying why, and start in order once memory is there; 0 removes the floor', async (t) => {
    const q = testBox(t, 'memory-floor');
    const free = join(q.dir, 'free-bytes');
    writeFileSync(free, String(1024 * MIB));
    const knob = { env: { SUBAGENT_TEST_FREE_MEMORY_FILE: free } };
    const order = join(q.dir, 'order');
    startShell(q, 'floor/a', `echo a >> '${order}'`, ['--min-free-memory', '4G'], knob);
    startShell(q, 'floor/b', `echo b >> '${order}'`, [], knob);
    const listing = await until(
      'both wait, queued',
      () => {
        const r = assertOk(q.run('status', [], knob), 'status');
        return r.agents.length === 2 && r.agents.every((a: any) => a.status === 'scheduled' && a.queued) ? r : null;
      },
      15_000,
    );
    const [a, b] = listing.agents;
    assert.equal(a.queuePosition, 1);
    assert.equal(a.statusReason, 'waiting for 4G of available memory (--min-free-memory); 1G available');
    assert.equal(b.queuePosition, 2);
    assert.equal(b.statusReason, null, 'the second waits for its turn');
    assert.deepEqual(listing.queue, { limit: null, running: 0, queued: 2, minFreeMemory: 4096 * MIB, availableMemory: 1024 * MIB });
    // Still held a while later: memory does not come back by itself.
    await until('the waiters looked again', () => Date.now() - Date.parse(a.startedAt) > 2500, 10_000);
    assert.equal(statusOf(q, 'floor/a', knob).status, 'scheduled');
    writeFileSync(free, String(8192 * MIB));
    const got = await waitTerminalAsync(q, ['floor/a', 'floor/b'], knob);
    assert.equal(got['floor/a'].outcome, 'succeeded', JSON.stringify(got['floor/a']));
    assert.equal(got['floor/b'].outcome, 'succeeded');
    assert.ok(got['floor/a'].agentPid !== null);
    // 0 removes the floor: the next run does not wait although memory is short again.
    writeFileSync(free, '0');
    startShell(q, 'floor/c', 'echo c', ['--min-free-memory', '0'], knob);
    assert.equal((await waitTerminalAsync(q, ['floor/c'], knob))['floor/c'].outcome, 'succeeded');
    assert.equal(assertOk(q.run('status', [], knob)).queue.minFreeMemory, null, 'the floor is gone');
  });

  test('a bad floor is E_ARG_INVALID naming the flag or the variable; refused with --executor slurm; nothing recorded', () => {
    for (const value of ['lots', '-1', '4Q']) {
      const e = expectError(box, 'start-subagent', ['--name', 'floor/bad', '--cli', 'shell', '--prompt', 'true', '--min-free-memory', value], 'E_ARG_INVALID');
      assert.match(e.error, /^--min-free-memory /);
      assert.match(e.details.hint, /4G/);
    }
    const v = expectError(box, 'start-subagent', ['--name', 'floor/bad', '--cli', 'shell', '--prompt', 'true'], 'E_ARG_INVALID', {
      env: { SUBAGENT_MIN_FREE_MEMORY: 'plenty' },
    });
    assert.equal(v.details.variable, 'SUBAGENT_MIN_FREE_MEMORY');
    const s = expectError(
      box,
      'start-subagent',
      ['--name', 'floor/bad', '--cli', 'shell', '--prompt', 'true', '--min-free-memory', '1G', '--executor', 'slurm'],
      'E_ARG_INVALID',
    );
    assert.match(s.error, /--min-free-memory limits this machine's runs/);
    assert.equal(statusOf(box, 'floor/bad'), undefined, 'nothing recorded');
  });
});
