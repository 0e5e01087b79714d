/**
 * Issue 5, point 12 (docs/guarantees.md, 11's monotonic clock, and "durations never go negative"): the wall
 * clock jumps while runs and waiters are going. libfaketime (Debian's `faketime` package, installed by
 * test/fault/setup.sh) moves the wall clock of the processes it is preloaded into; the spec file is
 * re-read on every clock read (FAKETIME_NO_CACHE), so a test can make the clock jump mid-flight. The
 * monotonic clock is left alone (FAKETIME_DONT_FAKE_MONOTONIC), as on a real machine whose NTP steps.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { updateRecord } from '../../lib/registry/store.js';
import { assertError, assertOk, doneWithin } from '../support/run.js';
import { until } from '../support/wait.js';
import { hasInotify } from '../support/procs.js';
import { runDirPath } from '../support/registry.js';
import { withBox, type Box } from '../support/box.js';
import { gate, open, startShellAsync, untilStatus, waitTerminalAsync } from '../support/shell.js';
import { skipUnlessCi } from '../support/machine.js';

function findLibfaketime(): string | null {
  for (const base of ['/usr/lib', '/usr/lib64', '/usr/local/lib']) {
    let entries: string[] = [];
    try {
      entries = readdirSync(base);
    } catch {
      continue;
    }
    for (const dir of ['', ...entries]) {
      const p = join(base, dir, 'faketime', 'libfaketime.so.1');
      if (existsSync(p)) return p;
    }
  }
  return null;
}

const LIB = findLibfaketime();
const SKIP = LIB ? false : 'libfaketime is not installed (Debian package `faketime`; test/fault/setup.sh installs it)';

function fake(b: Box, spec: string): { env: NodeJS.ProcessEnv; jump: (spec: string) => void } {
  const file = join(b.dir, 'faketime.spec');
  writeFileSync(file, spec + '\n');
  return {
    env: { LD_PRELOAD: LIB!, FAKETIME_TIMESTAMP_FILE: file, FAKETIME_NO_CACHE: '1', FAKETIME_DONT_FAKE_MONOTONIC: '1' },
    jump: (s: string) => writeFileSync(file, s + '\n'),
  };
}

/** Bytes the process has read so far (`rchar` of /proc/<pid>/io), or null when that is not readable here. */
function bytesRead(pid: number): number | null {
  try {
    const m = /^rchar: (\d+)$/m.exec(readFileSync(`/proc/${pid}/io`, 'utf8'));
    return m ? Number(m[1]) : null;
  } catch {
    return null;
  }
}

/**
 * Rewrites a harmless field of the record (a change the waiter is woken by) and waits until the waiter
 * has read again since: each of its rounds reads the record and checks its deadline. (Judged by the
 * bytes it has read, not by the file's access time: a read in the same clock tick as the write leaves
 * atime equal to mtime, which a fast file system such as tmpfs makes likely.)
 */
async function pokeAndSeeRead(dir: string, pid: number, settled: () => boolean): Promise<void> {
  const before = bytesRead(pid);
  updateRecord(dir, (r) => ({ ...r, lastActivityAt: new Date().toISOString() }));
  await until('the waiter read the record again', () => settled() || (bytesRead(pid) ?? 0) > (before ?? 0), 30_000, 10);
}

describe('point 12: time', { concurrency: 3 }, () => {
  test('libfaketime is there to move the wall clock (required when CI is set)', (t) => {
    if (!LIB) skipUnlessCi(t, SKIP as string);
  });

  test('the wall clock jumps back two days during a run: finishedAt is before startedAt, and durationMs is not negative', { skip: SKIP }, () =>
    withBox('time-back', async (b) => {
      const clock = fake(b, '+1d');
      const g = join(b.dir, 'gate');
      await startShellAsync(b, 'x', `${gate(g)}; echo over`, [], { env: clock.env });
      await untilStatus(b, 'x', (a) => a.status === 'running', 'running');
      clock.jump('-1d');
      open(g);
      const a = (await waitTerminalAsync(b, ['x'])).x;
      assert.equal(a.status, 'done');
      assert.equal(a.outcome, 'succeeded');
      assert.ok(Date.parse(a.finishedAt) < Date.parse(a.startedAt), `the jump took effect: started ${a.startedAt}, finished ${a.finishedAt}`);
      assert.ok(a.durationMs !== null && a.durationMs >= 0, `durationMs ${a.durationMs} must never be negative`);
      // The same through a waiter that itself lives in the jumped clock.
      const w = assertOk(await b.runAsync('status', ['--wait-terminal', '--name', 'x', '--timeout', '30'], { env: clock.env }), 'wait under faketime');
      assert.ok(w.agents[0].durationMs >= 0);
      assert.equal((await b.runAsync('result', ['--name', 'x'])).stdout, 'over\n');
    }),
  );

  test(
    'issue 23 point 8: the wall clock steps a day ahead during a run: durationMs is the time it took, not 24 h (the supervisor measures it on the monotonic clock)',
    { skip: SKIP },
    () =>
      withBox('time-step', async (b) => {
        const clock = fake(b, '+0');
        const g = join(b.dir, 'gate');
        const t0 = Date.now();
        await startShellAsync(b, 'step', `${gate(g)}; echo over`, [], { env: clock.env });
        await untilStatus(b, 'step', (a) => a.status === 'running', 'running');
        clock.jump('+1d');
        open(g);
        const a = (await waitTerminalAsync(b, ['step'])).step;
        const took = Date.now() - t0;
        assert.equal(a.outcome, 'succeeded');
        assert.ok(Date.parse(a.finishedAt) - Date.parse(a.startedAt) > 23 * 3600_000, `the step took effect: ${a.startedAt} → ${a.finishedAt}`);
        assert.ok(
          a.durationMs !== null && a.durationMs >= 0 && a.durationMs <= took,
          `durationMs ${a.durationMs} is at most the ${took} ms the test waited, not a day`,
        );
        // The run's JUnit case says the same.
        const junit = join(b.dir, 'step.xml');
        assertOk(await b.runAsync('status', ['--name', 'step', '--junit', junit]));
        const time = Number(/<testcase[^>]* time="([0-9.]+)"/.exec(readFileSync(junit, 'utf8'))?.[1]);
        assert.ok(time <= took / 1000, `JUnit time ${time} s`);
      }),
  );

  test('a wait with --timeout 30 does not time out when the wall clock jumps two days ahead', { skip: SKIP }, (t) =>
    withBox('time-fwd', async (b) => {
      if (bytesRead(process.pid) === null) {
        t.skip('/proc/<pid>/io is not readable here, which this test uses to see the waiter read');
        return;
      }
      const g = join(b.dir, 'gate');
      await startShellAsync(b, 'x', gate(g));
      await untilStatus(b, 'x', (a) => a.status === 'running', 'running');
      const clock = fake(b, '+0');
      const w = b.spawn('status', ['--wait-terminal', '--name', 'x', '--timeout', '30'], { env: clock.env });
      await until('the waiter watches', () => hasInotify(w.pid) || w.settled(), 30_000);
      clock.jump('+2d');
      // Make sure the waiter looked at the run (and so at its deadline) several times after the jump.
      const dir = runDirPath(b.registry, 'x');
      for (let i = 0; i < 3; i++) await pokeAndSeeRead(dir, w.pid, w.settled);
      assert.equal(w.settled(), false, `the waiter gave up after a wall-clock jump: ${w.settled() ? JSON.stringify((await w.done).json) : ''}`);
      open(g);
      const r = await w.done;
      const j = assertOk(r, 'the wait');
      assert.equal(j.agents[0].status, 'done');
    }),
  );

  test('a wait with --timeout 3 still times out (exit 124) when the wall clock jumps a day back', { skip: SKIP }, () =>
    withBox('time-bwd', async (b) => {
      const g = join(b.dir, 'gate');
      await startShellAsync(b, 'x', gate(g));
      await untilStatus(b, 'x', (a) => a.status === 'running', 'running');
      const clock = fake(b, '+0');
      const w = b.spawn('status', ['--wait-terminal', '--name', 'x', '--timeout', '3'], { env: clock.env });
      await until('the waiter watches', () => hasInotify(w.pid) || w.settled(), 30_000);
      clock.jump('-1d');
      const r = await doneWithin(w, 40_000);
      if (!r) assert.fail('the wait did not time out after its 3 s: it follows the wall clock');
      const j = assertError(r, 'E_WAIT_TIMEOUT', 124);
      assert.equal(j.agents[0].status, 'running');
      open(g);
    }),
  );
});
