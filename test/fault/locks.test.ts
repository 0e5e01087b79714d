/**
 * Issue 5, point 8 (docs/guarantees.md, 6): stale locks. A lock whose owner is proven dead is taken over by
 * exactly one process; a live owner's lock is never broken (the wait is bounded: E_LOCK_TIMEOUT); a
 * lock with unreadable owner data follows the documented rule (waited for while younger than 5 s, then
 * treated as abandoned).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { FIXTURES } from '../support/paths.js';
import { assertError, assertOk, spawnProgram } from '../support/run.js';
import { until } from '../support/wait.js';
import { bootId, pidAlive, procStartTime, startTimeForm } from '../support/procs.js';
import { fileSha, runDirPath, strays } from '../support/registry.js';
import { own, quiet, withBox, type Box } from '../support/box.js';
import { gate, open, startShellAsync, statusOfAsync, untilStatus, waitTerminalAsync } from '../support/shell.js';

function deadPid(): number {
  return Number(String(spawnSync('/bin/sh', ['-c', 'echo $$']).stdout).trim());
}

/** Owner data of locks that are provably abandoned, one way or another. */
function deadOwner(round: number): { text: string; old: boolean; kind: string } {
  switch (round % 4) {
    case 0:
      return { kind: 'exited process', text: JSON.stringify({ pid: deadPid(), startTime: '12345', bootId: bootId() }), old: false };
    case 1:
      return { kind: 'live pid, other start time', text: JSON.stringify({ pid: process.pid, startTime: startTimeForm(1), bootId: bootId() }), old: false };
    case 2:
      return {
        kind: 'another boot',
        text: JSON.stringify({ pid: 1, startTime: procStartTime(1), bootId: '00000000-0000-0000-0000-000000000000' }),
        old: false,
      };
    default:
      return { kind: 'unreadable, older than 5 s', text: '{"pid": 12', old: true };
  }
}

function plant(path: string, text: string, old = false): void {
  writeFileSync(path, text, { flag: 'wx' });
  if (old) {
    const t = (Date.now() - 60_000) / 1000;
    utimesSync(path, t, t);
  }
}

/** Plants a lock on a live run's record.lock (retrying while the supervisor briefly holds its own). */
async function plantOnRun(dir: string, text: string, old = false): Promise<string> {
  const path = join(dir, 'record.lock');
  await until(
    'the lock is free to plant',
    () => {
      try {
        plant(path, text, old);
        return true;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
        throw err;
      }
    },
    20_000,
    5,
  );
  return path;
}

async function gatedRun(b: Box, name: string): Promise<{ g: string; dir: string; a: any }> {
  const g = join(b.dir, `gate-${name}`);
  await startShellAsync(b, name, `${gate(g)}; echo finished`);
  const a = await untilStatus(b, name, (x) => x.status === 'running' && x.agentPid, 'running');
  return { g, dir: runDirPath(b.registry, name), a };
}

describe('point 8: stale locks', { concurrency: 3 }, () => {
  test("a dead owner's lock is taken over by exactly one of 8 racing processes, 24 rounds, 4 kinds of dead owner", () =>
    withBox('locks-race', async (b) => {
      const lock = join(b.dir, 'record.lock');
      const rounds = 24;
      const n = 8;
      const kids = Array.from(
        { length: n },
        (_, w) =>
          spawnProgram(process.execPath, [join(FIXTURES, 'fault-locker.mjs'), lock, b.dir, String(w), String(rounds)], { cwd: process.cwd(), env: b.env }).done,
      );
      for (let r = 0; r < rounds; r++) {
        const owner = deadOwner(r);
        plant(lock, owner.text, owner.old);
        if (r % 6 === 5) {
          // A breaker that died holding the break file must not block anyone either.
          plant(`${lock}.break`, JSON.stringify({ pid: deadPid(), startTime: '7', bootId: bootId() }));
        }
        open(join(b.dir, `go-${r}`));
        await until(
          `round ${r} (${owner.kind}): every process got the lock once`,
          () => {
            for (let w = 0; w < n; w++) if (!existsSync(join(b.dir, `done-${r}-${w}`))) return false;
            return true;
          },
          60_000,
          10,
        );
        assert.equal(existsSync(lock), false, `round ${r}: the lock is released`);
        assert.equal(existsSync(`${lock}.break`), false, `round ${r}: no break file left`);
      }
      for (const k of await Promise.all(kids)) {
        assert.equal(k.code, 0, k.stderr);
        const rep = JSON.parse(k.stdout);
        assert.deepEqual(rep.errors, [], `worker ${rep.worker}`);
        assert.equal(rep.overlaps, 0, `worker ${rep.worker} found someone else inside the lock: two takers won`);
        assert.equal(rep.notMine, 0, `worker ${rep.worker} held a lock file naming another owner`);
      }
    }));

  test("a dead owner's lock on a run does not stop its end from being recorded, nor a cancel", () =>
    withBox('locks-dead', async (b) => {
      const one = await gatedRun(b, 'ends');
      await plantOnRun(one.dir, JSON.stringify({ pid: deadPid(), startTime: '99', bootId: bootId() }));
      open(one.g);
      const a = (await waitTerminalAsync(b, ['ends'])).ends;
      assert.equal(a.status, 'done');
      assert.equal(a.outcome, 'succeeded');
      assert.equal(a.exitCode, 0);
      const two = await gatedRun(b, 'cancelled');
      await plantOnRun(two.dir, JSON.stringify({ pid: process.pid, startTime: startTimeForm(1), bootId: bootId() }));
      const c = assertOk(await b.runAsync('cancel', ['--name', 'cancelled']), 'cancel past a dead lock');
      assert.equal(c.outcome, 'cancelled');
      // The supervisor of a cancelled run removes its lock file just after the record says done.
      await quiet(b);
      assert.deepEqual(strays(b.registry), []);
    }));

  test("a live owner's lock is never broken: cancel gives up with E_LOCK_TIMEOUT (bounded), changing nothing", () =>
    withBox('locks-live', async (b) => {
      const { dir, a } = await gatedRun(b, 'held');
      const holder = own(b, 'sleep', ['300']);
      await until('the holder runs', () => procStartTime(holder), 30_000);
      const lock = await plantOnRun(dir, JSON.stringify({ pid: holder, startTime: procStartTime(holder), bootId: bootId() }));
      const lockSha = fileSha(lock);
      const ino = statSync(lock).ino;
      const recSha = fileSha(join(dir, 'record.json'));
      const r = await b.runAsync('cancel', ['--name', 'held'], { timeoutMs: 60_000 });
      const j = assertError(r, 'E_LOCK_TIMEOUT');
      assert.equal(j.details.path, lock);
      assert.equal(statSync(lock).ino, ino, "the live owner's lock is the same file");
      assert.equal(fileSha(lock), lockSha);
      assert.equal(fileSha(join(dir, 'record.json')), recSha, 'the record did not change');
      assert.ok(pidAlive(holder) && pidAlive(a.agentPid), 'nothing was killed');
      assert.equal((await statusOfAsync(b, 'held')).status, 'running');
      // Once the owner is gone, the same cancel goes through.
      process.kill(holder, 'SIGKILL');
      await until('the holder is gone', () => !pidAlive(holder), 30_000);
      assertOk(await b.runAsync('cancel', ['--name', 'held']), 'cancel once the owner died');
      // The supervisor of a cancelled run removes its lock file just after the record says done.
      await quiet(b);
      assert.deepEqual(strays(b.registry), []);
    }));

  test('unreadable owner data: waited for while younger than 5 s, then treated as abandoned', () =>
    withBox('locks-unreadable', async (b) => {
      const { dir } = await gatedRun(b, 'young');
      const lock = await plantOnRun(dir, '{"pid":');
      const planted = statSync(lock);
      const c = b.spawn('cancel', ['--name', 'young']);
      // While the data is young, the lock is not broken.
      while (!c.settled() && Date.now() - planted.mtimeMs < 4000) {
        assert.ok(existsSync(lock) && statSync(lock).ino === planted.ino, 'a lock with young unreadable data was broken early');
        await new Promise((r) => setTimeout(r, 50));
      }
      const r = await c.done;
      assertOk(r, 'cancel after the unreadable lock aged');
      assert.ok(Date.now() - planted.mtimeMs >= 4000, 'the cancel could not have gone through before the rule allows');

      const old = await gatedRun(b, 'old');
      await plantOnRun(old.dir, 'not json at all', true);
      assertOk(await b.runAsync('cancel', ['--name', 'old']), 'cancel past an old unreadable lock');
      // The supervisor of a cancelled run removes its lock file just after the record says done.
      await quiet(b);
      assert.deepEqual(strays(b.registry), []);
    }));
});
