/**
 * Issue 23, point 7: nothing hangs and nothing ordinary is E_INTERNAL. A FIFO, a socket or a device
 * where a registry file should be is refused at once (every verb runs here with a deadline: a verb
 * that blocks on the open of a FIFO fails the test as a hang); an unreadable folder (as a second uid,
 * since root reads everything) and a symbolic link loop are registry errors naming the path, with a
 * hint. docs/reliability.md lists these rows.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, rmSync, symlinkSync, unlinkSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { assertError, assertOk, doneWithin, type Verb } from '../support/run.js';
import { until } from '../support/wait.js';
import { runDirPath } from '../support/registry.js';
import { withBox, type Box } from '../support/box.js';
import { gate, open, startShellAsync, untilStatus, waitTerminalAsync } from '../support/shell.js';
import { giveBox, noOtherUsers, runVerbAs } from '../support/users.js';
import { skipUnlessCi } from '../support/machine.js';

/** A verb that must answer within this: a hang is a failure (and the verb is killed, by pid). */
const DEADLINE_MS = 20_000;

function mkfifo(path: string): void {
  rmSync(path, { force: true });
  const r = spawnSync('mkfifo', [path]);
  assert.equal(r.status, 0, `mkfifo ${path}: ${r.stderr}`);
}

/** A listening unix socket at `path` (the file exists while it listens). */
async function socketAt(path: string): Promise<Server> {
  rmSync(path, { force: true });
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(path, resolve));
  return server;
}

async function expectCode(b: Box, verb: Verb, args: string[], code: string, path: string): Promise<any> {
  const j = assertError(await b.runAsync(verb, args, { timeoutMs: DEADLINE_MS }), code);
  assert.equal(j.details.path, path, `${verb} ${args.join(' ')} names the file: ${JSON.stringify(j)}`);
  assert.ok(j.details.hint, `${verb}: a hint`);
  return j;
}

test('point 7: a FIFO, a socket or a device in the registry is refused without blocking, by every verb', () =>
  withBox('fifo', async (b) => {
    const release = join(b.dir, 'release');
    for (const n of ['ok', 'rec', 'log', 'sock', 'prompt', 'dev']) await startShellAsync(b, n, 'echo some-output');
    await startShellAsync(b, 'lock', gate(release));
    await waitTerminalAsync(b, ['ok', 'rec', 'log', 'sock', 'prompt', 'dev']);
    await untilStatus(b, 'lock', (a) => a.status === 'running', 'running');
    const rec = join(runDirPath(b.registry, 'rec'), 'record.json');
    mkfifo(rec);
    const log = join(runDirPath(b.registry, 'log'), 'events.log');
    mkfifo(log);
    const prompt = join(runDirPath(b.registry, 'prompt'), 'prompt');
    mkfifo(prompt);
    const lock = join(runDirPath(b.registry, 'lock'), 'record.lock');
    mkfifo(lock);
    mkfifo(join(b.registry, 'status-cache'));
    mkdirSync(join(b.registry, 'queue'), { recursive: true });
    mkfifo(join(b.registry, 'queue', 'limit'));
    const sockLog = join(runDirPath(b.registry, 'sock'), 'events.log');
    const server = await socketAt(sockLog);
    try {
      // The listing goes on: the FIFO record is the name's problem, the FIFO cache and limit are no cache and no limit.
      const listing = assertOk(await b.runAsync('status', [], { timeoutMs: DEADLINE_MS }), 'status');
      assert.ok(
        listing.agents.some((a: any) => a.name === 'ok'),
        JSON.stringify(listing),
      );
      assert.deepEqual(
        listing.problems.map((p: any) => [p.name, p.code, p.path]),
        [['rec', 'E_REGISTRY_CORRUPT', rec]],
      );
      for (const [verb, args] of [
        ['status', ['--name', 'rec']],
        ['status', ['--wait-terminal', '--name', 'rec', '--timeout', '5']],
        ['result', ['--name', 'rec']],
        ['search', ['--name', 'rec', '--pattern', 'x']],
        ['cancel', ['--name', 'rec']],
      ] as Array<[Verb, string[]]>) {
        const j = await expectCode(b, verb, args, 'E_REGISTRY_CORRUPT', rec);
        assert.match(j.error, /FIFO, not a regular file/);
      }
      for (const [verb, args, path] of [
        ['result', ['--name', 'log'], log],
        ['search', ['--name', 'log', '--pattern', 'x'], log],
        ['result', ['--name', 'sock'], sockLog],
        ['search', ['--name', 'sock', '--pattern', 'x'], sockLog],
        ['search', ['--name', 'prompt', '--pattern', 'x'], prompt],
        ['cancel', ['--name', 'lock'], lock],
      ] as Array<[Verb, string[], string]>) {
        const j = await expectCode(b, verb, args, 'E_REGISTRY_UNREADABLE', path);
        assert.match(j.error, /(FIFO|socket), not a regular file/);
        assert.equal(j.details.errno, 'EFTYPE');
      }
    } finally {
      server.close();
    }
    // A device reads without end (/dev/zero): refused too, when this machine lets us make one.
    const dev = join(runDirPath(b.registry, 'dev'), 'record.json');
    unlinkSync(dev);
    if (spawnSync('mknod', [dev, 'c', '1', '5']).status === 0) {
      const j = await expectCode(b, 'status', ['--name', 'dev'], 'E_REGISTRY_CORRUPT', dev);
      assert.match(j.error, /character device, not a regular file/);
    }
    open(release);
    unlinkSync(lock);
    await waitTerminalAsync(b, ['lock']);
  }));

test('point 7: an unreadable folder, as a second uid, is E_REGISTRY_UNREADABLE naming it — in a listing, the name is a problem', async (t) => {
  const missing = noOtherUsers();
  if (missing) return skipUnlessCi(t, missing);
  await withBox('eacces', async (b) => {
    giveBox(b);
    for (const n of ['ok', 'shut']) assertOk(await runVerbAs(b, 'start-subagent', ['--name', n, '--cli', 'shell', '--prompt', 'echo hi']), n);
    assertOk(await runVerbAs(b, 'status', ['--wait-terminal', '--name', 'ok', '--name', 'shut', '--timeout', '60']));
    const shut = runDirPath(b.registry, 'shut');
    chmodSync(shut, 0);
    try {
      const listing = assertOk(await runVerbAs(b, 'status', [], { timeoutMs: DEADLINE_MS }), 'status');
      assert.deepEqual(
        listing.agents.map((a: any) => a.name),
        ['ok'],
      );
      assert.equal(listing.problems.length, 1, JSON.stringify(listing));
      assert.equal(listing.problems[0].code, 'E_REGISTRY_UNREADABLE');
      assert.ok(listing.problems[0].path.startsWith(shut), listing.problems[0].path);
      for (const [verb, args] of [
        ['status', ['--name', 'shut']],
        ['result', ['--name', 'shut']],
        ['search', ['--name', 'shut', '--pattern', 'hi']],
        ['cancel', ['--name', 'shut']],
      ] as Array<[Verb, string[]]>) {
        const j = assertError(await runVerbAs(b, verb, args, { timeoutMs: DEADLINE_MS }), 'E_REGISTRY_UNREADABLE');
        assert.ok(j.details.path.startsWith(shut), `${verb}: ${JSON.stringify(j)}`);
        assert.equal(j.details.errno, 'EACCES');
        assert.match(j.details.hint, /chmod u\+rwX/);
      }
    } finally {
      chmodSync(shut, 0o700);
    }
    const agents = join(b.registry, 'agents');
    chmodSync(agents, 0);
    try {
      const j = assertError(await runVerbAs(b, 'status', [], { timeoutMs: DEADLINE_MS }), 'E_REGISTRY_UNREADABLE');
      assert.equal(j.details.path, agents);
      assert.equal(j.details.registry, b.registry);
    } finally {
      chmodSync(agents, 0o700);
    }
  });
});

test('point 7: a .subagents symlink loop is E_REGISTRY_UNREADABLE (reading) or E_REGISTRY_UNWRITABLE (start), naming it', () =>
  withBox('loop', async (b) => {
    const repo = join(b.dir, 'repo');
    mkdirSync(repo);
    const loop = join(repo, '.subagents');
    symlinkSync(loop, loop);
    const env = { SUBAGENT_DIR: loop };
    for (const [verb, args] of [
      ['status', []],
      ['status', ['--wait']],
      ['result', ['--name', 'x']],
    ] as Array<[Verb, string[]]>) {
      const j = assertError(await b.runAsync(verb, args, { env, timeoutMs: DEADLINE_MS }), 'E_REGISTRY_UNREADABLE');
      assert.equal(j.details.errno, 'ELOOP', JSON.stringify(j));
      assert.ok(j.details.path.startsWith(loop), j.details.path);
      assert.match(j.details.hint, /symbolic link loop/);
    }
    const j = assertError(
      await b.runAsync('start-subagent', ['--name', 'x', '--cli', 'shell', '--prompt', 'echo'], { env, timeoutMs: DEADLINE_MS }),
      'E_REGISTRY_UNWRITABLE',
    );
    assert.equal(j.details.errno, 'ELOOP');
    assert.doesNotMatch(j.error, /ELOOP ELOOP/);
  }));

test('point 7: a catastrophic pattern is stopped at its bound with E_PATTERN_TIMEOUT; ordinary patterns answer the same with and without the in-thread fast path', () =>
  withBox('pattern', async (b) => {
    // 64 × "a" then "b": (a+)+$ tries 2^64 ways to split the a's before it gives up at each start.
    await startShellAsync(b, 'evil', `printf 'error: first\\n'; printf '%s' "$(head -c 64 /dev/zero | tr '\\0' a)b"; echo; echo fail-second`);
    await waitTerminalAsync(b, ['evil']);
    const env = { SUBAGENT_SEARCH_TIMEOUT_SEC: '2' };
    for (const fast of [undefined, '0']) {
      const t0 = Date.now();
      const r = await b.runAsync('search', ['--name', 'evil', '--pattern', '(a+)+$'], { env: { ...env, SUBAGENT_FAST_PATHS: fast }, timeoutMs: DEADLINE_MS });
      const ms = Date.now() - t0;
      const j = assertError(r, 'E_PATTERN_TIMEOUT');
      assert.equal(j.details.pattern, '(a+)+$');
      assert.equal(j.details.timeoutSec, 2);
      assert.match(j.details.hint, /SUBAGENT_SEARCH_TIMEOUT_SEC/);
      assert.ok(ms >= 2000 && ms < 12_000, `stopped at its bound, not before and not long after: ${ms} ms`);
    }
    // The same answers in this thread (a pattern that cannot backtrack, fast path on) and in the worker.
    for (const pattern of ['error|fail', 'fail-sec', 'a{3}b', '(a+)b', '^err\\w+', 'nothing']) {
      const lines = [undefined, '0'].map(async (fast) =>
        assertOk(
          await b.runAsync('search', ['--name', 'evil', '--pattern', pattern], { env: { ...env, SUBAGENT_FAST_PATHS: fast }, timeoutMs: DEADLINE_MS }),
          pattern,
        ),
      );
      const [on, off] = await Promise.all(lines);
      assert.deepEqual(on, off, pattern);
    }
    // The bound is on matching: a thread slow to start (an overloaded machine) is not a slow pattern.
    const slowStart = assertOk(
      await b.runAsync('search', ['--name', 'evil', '--pattern', '(a+)b'], {
        env: { SUBAGENT_SEARCH_TIMEOUT_SEC: '1', SUBAGENT_TEST_MATCHER_START_MS: '3000' },
        timeoutMs: DEADLINE_MS,
      }),
      'a matching thread 3 s late to start, with a 1 s bound',
    );
    assert.equal(slowStart.total, 1, JSON.stringify(slowStart));
    const hits = assertOk(await b.runAsync('search', ['--name', 'evil', '--pattern', 'error|fail'], { timeoutMs: DEADLINE_MS }));
    assert.deepEqual(
      hits.matches.filter((m: any) => m.role === 'assistant').map((m: any) => m.line),
      [1, 3],
    );
    const bad = assertError(
      await b.runAsync('search', ['--name', 'evil', '--pattern', 'x'], { env: { SUBAGENT_SEARCH_TIMEOUT_SEC: 'soon' } }),
      'E_ARG_INVALID',
    );
    assert.match(bad.error, /SUBAGENT_SEARCH_TIMEOUT_SEC/);
  }));

test('point 7: status --watch with nothing selected says what it waits for, and ends once that run is done; an interval too long for a timer is refused', () =>
  withBox('watch', async (b) => {
    // An empty registry (named by the box's SUBAGENT_DIR, it must exist: a missing one is E_REGISTRY_NOT_FOUND).
    mkdirSync(b.registry, { recursive: true, mode: 0o700 });
    const w = b.spawn('status', ['--watch', '1'], { env: { COLUMNS: '200' } });
    const waiting = `waiting for a run to appear in ${b.registry} (Ctrl-C stops the watch)`;
    await until('the watch says what it waits for', () => w.stdout().includes(waiting), DEADLINE_MS);
    assert.ok(!w.settled(), 'it keeps watching');
    await startShellAsync(b, 'late', 'echo late');
    const end = await doneWithin(w, 60_000);
    assert.ok(end, 'the watch ended once the run was done');
    assert.equal(end.code, 0);
    assert.match(end.stdout.trimEnd().split('\n').at(-1)!, /^1 run: 0 running · 0 queued · 1 succeeded · 0 failed$/);
    // 99999999999 s does not fit a timer (it would fire at once, redrawing without pause): refused, saying the limit.
    const j = assertError(await b.runAsync('status', ['--watch', '99999999999'], { timeoutMs: DEADLINE_MS }), 'E_ARG_INVALID');
    assert.match(j.error, /at most 86400/);
  }));
