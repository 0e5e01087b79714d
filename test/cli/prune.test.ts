// subagent-prune through the real executable: every selector, --dry-run, the numbering of what is left,
// the usage kept, the listing and its cache after a prune, a prune racing a resume and a start, the
// worktrees, and bad input (docs/verbs/subagent-prune.md).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { usageBefore } from '../../lib/runs/usage.js';
import { readRecord } from '../../lib/registry/store.js';
import { makeBox, quiet, type Box } from '../support/box.js';
import { listTree, readJson, runDirOf, runDirPath } from '../support/registry.js';
import { assertError, assertOk } from '../support/run.js';
import { isStopped } from '../support/procs.js';
import { startShell, waitTerminal } from '../support/shell.js';
import { until } from '../support/wait.js';

const b = makeBox('prune');

/** A name with `runs` finished shell runs (run k answers "<name> k"). */
function finished(box: Box, name: string, runs: number): void {
  startShell(box, name, `echo ${name} 1`);
  waitTerminal(box, [name]);
  for (let k = 2; k <= runs; k++) {
    assertOk(box.run('resume-subagent', ['--name', name, '--prompt', `echo ${name} ${k}`]), `resume ${name} to run ${k}`);
    waitTerminal(box, [name]);
  }
}

function prune(box: Box, args: string[]): any {
  return assertOk(box.run('prune', args), `prune ${args.join(' ')}`);
}

function pairs(line: any): Array<[string, number]> {
  return line.removed.map((r: any) => [r.name, r.run]);
}

function runsOf(box: Box, name: string): number[] {
  return assertOk(box.run('status', ['--runs', '--name', name]), `status --runs ${name}`).runs.map((r: any) => r.run);
}

/** The apparent bytes of a tree, as prune counts them (lstat: a symlink is its own few bytes). */
function bytesOf(path: string): number {
  const st = lstatSync(path);
  if (!st.isDirectory()) return st.size;
  return readdirSync(path).reduce((sum, e) => sum + bytesOf(join(path, e)), 0);
}

describe('selectors', () => {
  test('--keep-last N per name, --name and --prefix narrow it, the latest run always stays', async () => {
    finished(b, 'k/a', 4);
    finished(b, 'k/b', 2);
    finished(b, 'other', 3);
    await quiet(b);
    const one = prune(b, ['--keep-last', '2', '--name', 'k/a']);
    assert.deepEqual(pairs(one), [
      ['k/a', 1],
      ['k/a', 2],
    ]);
    assert.equal(one.kept, 2);
    assert.equal(one.dryRun, false);
    assert.equal(
      one.freedBytes,
      one.removed.reduce((s: number, r: any) => s + r.bytes, 0),
    );
    assert.ok(one.removed.every((r: any) => r.bytes > 0));
    assert.deepEqual(runsOf(b, 'k/a'), [3, 4]);
    const prefix = prune(b, ['--keep-last', '0', '--prefix', 'k']);
    assert.deepEqual(pairs(prefix), [
      ['k/a', 3],
      ['k/b', 1],
    ]);
    assert.equal(prefix.kept, 2, 'the latest run of each name stays without --whole-names');
    assert.deepEqual(runsOf(b, 'other'), [1, 2, 3], 'a name outside the prefix is untouched');
  });

  test('--older-than DURATION: only runs that finished that long ago', async () => {
    finished(b, 'old', 2);
    // A gap between the second and the third run's ends, so that a cutoff between them is not a race.
    await new Promise((r) => setTimeout(r, 3000));
    assertOk(b.run('resume-subagent', ['--name', 'old', '--prompt', 'echo old 3']));
    waitTerminal(b, ['old']);
    assertOk(b.run('resume-subagent', ['--name', 'old', '--prompt', 'echo old 4']));
    waitTerminal(b, ['old']);
    await quiet(b);
    assert.deepEqual(pairs(prune(b, ['--older-than', '1h', '--name', 'old'])), [], 'nothing finished an hour ago');
    const t2 = Date.parse(readRecord(runDirOf(b.registry, 'old', 2)).finishedAt!);
    const t3 = Date.parse(readRecord(runDirOf(b.registry, 'old', 3)).finishedAt!);
    const between = ((Date.now() - (t2 + t3) / 2) / 1000).toFixed(3);
    assert.deepEqual(pairs(prune(b, ['--older-than', between, '--name', 'old'])), [
      ['old', 1],
      ['old', 2],
    ]);
    assert.deepEqual(pairs(prune(b, ['--older-than', '0s', '--name', 'old'])), [['old', 3]]);
    assert.deepEqual(runsOf(b, 'old'), [4]);
  });

  test('--max-size: the oldest runs first, until the registry fits', async () => {
    finished(b, 'm/x', 3);
    finished(b, 'm/y', 2);
    await quiet(b);
    const all = prune(b, ['--prefix', 'm', '--max-size', '0', '--dry-run']);
    // Oldest first by when they finished: x1, x2 ended before y1 started.
    assert.deepEqual(pairs(all), [
      ['m/x', 1],
      ['m/x', 2],
      ['m/y', 1],
    ]);
    const size = bytesOf(join(b.registry, 'agents'));
    const x1 = all.removed[0].bytes;
    // One byte less than the registry with x1 gone: x1 and x2 must go, y1 stays.
    const fit = prune(b, ['--prefix', 'm', '--max-size', String(size - x1 - 1)]);
    assert.deepEqual(pairs(fit), [
      ['m/x', 1],
      ['m/x', 2],
    ]);
    assert.ok(bytesOf(join(b.registry, 'agents')) <= size - x1 - 1);
    assert.deepEqual(pairs(prune(b, ['--prefix', 'm', '--max-size', '1T'])), [], 'a registry that fits loses nothing');
  });

  test('--dry-run removes nothing: the registry is byte for byte what it was', async () => {
    finished(b, 'dry', 3);
    await quiet(b);
    const before = listTree(b.registry).map((p) => `${p} ${statSync(join(b.registry, p)).size}`);
    const line = prune(b, ['--name', 'dry', '--keep-last', '0', '--whole-names', '--dry-run']);
    assert.equal(line.dryRun, true);
    assert.deepEqual(pairs(line), [
      ['dry', 1],
      ['dry', 2],
      ['dry', 3],
    ]);
    assert.equal(line.kept, 0);
    const after = listTree(b.registry).map((p) => `${p} ${statSync(join(b.registry, p)).size}`);
    assert.deepEqual(after, before);
  });

  test('--whole-names: a name whose every run goes is gone, and may be started anew', async () => {
    finished(b, 'w/gone', 2);
    await quiet(b);
    const line = prune(b, ['--name', 'w/gone', '--whole-names']);
    assert.deepEqual(pairs(line), [
      ['w/gone', 1],
      ['w/gone', 2],
    ]);
    assert.equal(line.kept, 0);
    const listed = assertOk(b.run('status', ['--all'])).agents.map((a: any) => a.name);
    assert.ok(!listed.includes('w/gone'), listed.join(' '));
    assertError(b.run('status', ['--runs', '--name', 'w/gone']), 'E_NAME_NOT_FOUND');
    startShell(b, 'w/gone', 'echo anew');
    assert.equal(waitTerminal(b, ['w/gone'])['w/gone'].run, 1);
  });

  test('never a run that is not done, nor a later run of its name', async () => {
    finished(b, 'busy', 1);
    assertOk(b.run('resume-subagent', ['--name', 'busy', '--prompt', 'sleep 600']));
    await until('busy running', () => assertOk(b.run('status', ['--name', 'busy'])).agents[0]?.status === 'running');
    const line = prune(b, ['--name', 'busy', '--keep-last', '0', '--whole-names']);
    assert.deepEqual(pairs(line), [['busy', 1]]);
    assert.equal(assertOk(b.run('status', ['--name', 'busy'])).agents[0].status, 'running');
    assertOk(b.run('cancel', ['--name', 'busy']));
  });
});

test('--whole-names keeps the latest run of a name whose queued follow-ups a failure stopped: they are its next runs', async () => {
  const gate = join(b.dir, 'gate-stopped');
  startShell(b, 'q/stopped', `while [ ! -e '${gate}' ]; do sleep 0.05; done; exit 3`);
  await until('q/stopped running', () => assertOk(b.run('status', ['--name', 'q/stopped'])).agents[0]?.status === 'running');
  assertOk(b.run('resume-subagent', ['--queue', '--name', 'q/stopped', '--prompt', 'echo next']));
  writeFileSync(gate, '');
  const ended = waitTerminal(b, ['q/stopped'])['q/stopped'];
  assert.deepEqual([ended.run, ended.outcome, ended.queuedPrompts.length], [1, 'failed', 1], 'the failure stopped the queue, its prompt kept');
  const line = prune(b, ['--name', 'q/stopped', '--keep-last', '0', '--whole-names']);
  assert.deepEqual(pairs(line), []);
  const still = assertOk(b.run('status', ['--name', 'q/stopped'])).agents[0];
  assert.deepEqual([still.run, still.queuedPrompts.length], [1, 1]);
});

describe('what is left', () => {
  test('runs K..N: status, status --runs, result --since, result --run, search, and the next resume is N+1', async () => {
    finished(b, 'num', 4);
    await quiet(b);
    prune(b, ['--name', 'num', '--keep-last', '2']);
    const listed = assertOk(b.run('status', ['--name', 'num'], { env: { SUBAGENT_FAST_PATHS: '0' } })).agents[0];
    assert.equal(listed.run, 4);
    assert.deepEqual(runsOf(b, 'num'), [3, 4]);
    const since = assertOk(b.run('result', ['--name', 'num', '--since', '0', '--json']));
    assert.deepEqual(
      since.runs.map((r: any) => [r.run, r.lastAssistantText.trim()]),
      [
        [3, 'num 3'],
        [4, 'num 4'],
      ],
    );
    assertError(b.run('result', ['--name', 'num', '--run', '1']), 'E_RUN_NOT_FOUND');
    assert.equal(assertOk(b.run('search', ['--name', 'num', '--pattern', 'num'])).total >= 2, true);
    assert.equal(assertOk(b.run('resume-subagent', ['--name', 'num', '--prompt', 'echo num 5'])).run, 5);
    waitTerminal(b, ['num']);
    assert.deepEqual(runsOf(b, 'num'), [3, 4, 5]);
    // A name left with one run that is not run 1 is listed with and without the status cache.
    prune(b, ['--name', 'num', '--keep-last', '1']);
    for (const fast of ['0', 'status-cache']) {
      const a = assertOk(b.run('status', ['--all'], { env: { SUBAGENT_FAST_PATHS: fast } })).agents.find((x: any) => x.name === 'num');
      assert.equal(a?.run, 5, `SUBAGENT_FAST_PATHS=${fast}`);
    }
  });

  test("later runs' usage is what it was: usageBefore (per session) and the name's usageTotal", async () => {
    finished(b, 'use', 4);
    await quiet(b);
    // Shell runs report no usage: give the records some, as a CLI's would have (before any listing caches them).
    const sessions = ['s1', 's2', 's2', 's2'];
    for (let k = 1; k <= 4; k++) {
      const path = join(runDirOf(b.registry, 'use', k), 'record.json');
      const r = readJson(path);
      r.sessionId = sessions[k - 1];
      r.usage = {
        inputTokens: 100 * k,
        outputTokens: 10 * k,
        cacheReadTokens: k,
        cacheWriteTokens: 0,
        reasoningTokens: 0,
        totalTokens: 111 * k,
        costUsd: 0.5 * k,
      };
      writeFileSync(path, JSON.stringify(r));
    }
    const latest = () => readRecord(runDirOf(b.registry, 'use', 4));
    const before = [usageBefore(b.registry, latest()), usageBefore(b.registry, latest(), false)];
    const total = () => assertOk(b.run('status', ['--name', 'use'], { env: { SUBAGENT_FAST_PATHS: '0' } })).agents[0].usageTotal;
    const totalBefore = total();
    assert.equal(totalBefore.inputTokens, 1000);
    prune(b, ['--name', 'use', '--keep-last', '3']);
    assert.deepEqual([usageBefore(b.registry, latest()), usageBefore(b.registry, latest(), false)], before, 'after run 1 went');
    prune(b, ['--name', 'use', '--keep-last', '1']);
    assert.deepEqual([usageBefore(b.registry, latest()), usageBefore(b.registry, latest(), false)], before, 'after runs 1-3 went');
    assert.equal(before[0]!.inputTokens, 500, 'the same session: runs 2 and 3');
    assert.deepEqual(total(), totalBefore);
  });

  test('a listing after a prune, with its cache, is the plain listing: no removed run, no kept run missing', async () => {
    const names = ['c/a', 'c/b', 'c/c', 'c/d'];
    for (const n of names) finished(b, n, 2);
    await quiet(b);
    const records = names.flatMap((n) => [1, 2].map((k) => join(runDirOf(b.registry, n, k), 'record.json')));
    await until('the records settled', () => records.every((r) => Date.now() - statSync(r).ctimeMs > 2300), 15_000, 100);
    const cached = () => b.run('status', ['--prefix', 'c']).stdout;
    const plain = () => b.run('status', ['--prefix', 'c'], { env: { SUBAGENT_FAST_PATHS: '0' } }).stdout;
    cached();
    assert.equal(cached(), plain(), 'the cache holds the names');
    prune(b, ['--name', 'c/a', '--whole-names']);
    prune(b, ['--name', 'c/b', '--keep-last', '1']);
    const after = cached();
    assert.equal(after, plain());
    const shown = JSON.parse(after).agents.map((a: any) => [a.name, a.run]);
    assert.deepEqual(shown, [
      ['c/b', 2],
      ['c/c', 2],
      ['c/d', 2],
    ]);
    assert.equal(cached(), plain(), 'and the cache written after it');
  });
});

describe('races', () => {
  test('a prune racing a resume and a start of the same names leaves the live runs untouched', async () => {
    for (let round = 0; round < 3; round++) {
      const r = `race${round}`;
      finished(b, `${r}/kept`, 3);
      finished(b, `${r}/whole`, 2);
      await quiet(b);
      const [p, res, res2] = await Promise.all([
        b.runAsync('prune', ['--prefix', r, '--keep-last', '1', '--whole-names']),
        b.runAsync('resume-subagent', ['--name', `${r}/kept`, '--prompt', `sleep 600; echo ${r}`]),
        b.runAsync('resume-subagent', ['--name', `${r}/whole`, '--prompt', 'sleep 600']),
      ]);
      assertOk(p, 'prune');
      const line = assertOk(res, 'the resume of a name keeping its latest run');
      await until('the resumed run runs', () => assertOk(b.run('status', ['--name', `${r}/kept`])).agents[0]?.status === 'running');
      const live = assertOk(b.run('status', ['--name', `${r}/kept`])).agents[0];
      assert.equal(live.run, line.run);
      assert.equal(readFileSync(join(runDirOf(b.registry, `${r}/kept`, line.run), 'prompt'), 'utf8'), `sleep 600; echo ${r}`);
      assert.ok(runsOf(b, `${r}/kept`).includes(line.run));
      // The name being removed whole: either the resume came first (its run is there, running) or the
      // name went first (the resume found nothing to resume).
      if (res2.code === 0) {
        await until('the other resumed run runs', () => assertOk(b.run('status', ['--name', `${r}/whole`])).agents[0]?.status === 'running');
        assert.ok(runsOf(b, `${r}/whole`).includes(res2.json.run));
      } else {
        assert.ok(['E_SESSION_NOT_FOUND', 'E_NAME_NOT_FOUND', 'E_REGISTRY_UNWRITABLE'].includes(res2.json?.code), res2.stdout);
      }
      for (const n of [`${r}/kept`, `${r}/whole`]) b.run('cancel', ['--name', n]);
      // A start of a name being removed whole: refused while it is there, or a new name of its own.
      finished(b, `${r}/again`, 1);
      await quiet(b);
      const [p2, s] = await Promise.all([
        b.runAsync('prune', ['--name', `${r}/again`, '--whole-names']),
        b.runAsync('start-subagent', ['--cli', 'shell', '--name', `${r}/again`, '--prompt', 'sleep 600']),
      ]);
      assertOk(p2, 'prune of a name being started');
      if (s.code === 0) {
        await until('the new run runs', () => assertOk(b.run('status', ['--name', `${r}/again`])).agents[0]?.status === 'running');
        assert.equal(readFileSync(join(runDirOf(b.registry, `${r}/again`, 1), 'prompt'), 'utf8'), 'sleep 600');
      } else {
        assertError(s, 'E_NAME_EXISTS');
      }
      b.run('cancel', ['--name', `${r}/again`]);
    }
  });
});

describe('readers during a prune', () => {
  test('status --runs, result --since and search read a name while a prune takes its runs: a suffix, never a hole, never an error', async () => {
    finished(b, 'mid', 8);
    await quiet(b);
    // Held right after its first run moved: the name is runs 2..8.
    const held = b.spawn('prune', ['--name', 'mid', '--keep-last', '1'], { env: { SUBAGENT_TEST_PAUSE_AT: 'prune-run-moved' } });
    await until('the prune held after its first run', () => isStopped(held.pid));
    assert.deepEqual(runsOf(b, 'mid'), [2, 3, 4, 5, 6, 7, 8]);
    assert.deepEqual(
      assertOk(b.run('result', ['--name', 'mid', '--since', '0', '--json'])).runs.map((r: any) => r.run),
      [2, 3, 4, 5, 6, 7, 8],
    );
    // Let it go on while readers read.
    process.kill(held.pid, 'SIGCONT');
    const readers = await Promise.all([
      ...Array.from({ length: 3 }, () => b.runAsync('status', ['--runs', '--name', 'mid'])),
      ...Array.from({ length: 3 }, () => b.runAsync('result', ['--name', 'mid', '--since', '0', '--json'])),
      b.runAsync('search', ['--name', 'mid', '--pattern', 'mid']),
    ]);
    for (const r of readers) {
      const line = assertOk(r, 'a reader during the prune');
      if (!line.runs) continue;
      const runs = line.runs.map((x: any) => x.run);
      assert.deepEqual(
        runs,
        Array.from({ length: runs.length }, (_, i) => 9 - runs.length + i),
        `a suffix of 1..8: ${runs}`,
      );
    }
    assertOk(await held.done, 'the prune');
    assert.deepEqual(runsOf(b, 'mid'), [8]);
  });
});

describe('worktrees', () => {
  test('--worktrees: a clean worktree goes with its name through git, a dirty one keeps it; the branch stays', async () => {
    const repo = join(b.dir, 'repo');
    mkdirSync(repo);
    const git = (...args: string[]) => {
      const r = spawnSync('git', ['-C', repo, ...args], { encoding: 'utf8' });
      assert.equal(r.status, 0, r.stderr);
      return r.stdout.trim();
    };
    git('init', '-q');
    git('-c', 'user.email=t@t', '-c', 'user.name=t', 'commit', '-q', '--allow-empty', '-m', 'root');
    for (const n of ['wt/clean', 'wt/dirty']) {
      assertOk(b.run('start-subagent', ['--cli', 'shell', '--name', n, '--worktree', '--prompt', 'echo done', '--cwd', repo]));
    }
    const done = waitTerminal(b, ['wt/clean', 'wt/dirty']);
    await quiet(b);
    writeFileSync(join(done['wt/dirty'].worktree.path, 'work.txt'), 'not committed');
    assertError(b.run('prune', ['--prefix', 'wt', '--worktrees']), 'E_ARG_INVALID');
    const line = prune(b, ['--prefix', 'wt', '--whole-names', '--worktrees']);
    assert.deepEqual(pairs(line), [['wt/clean', 1]]);
    assert.deepEqual(
      line.worktrees.map((w: any) => [w.name, w.removed]),
      [
        ['wt/clean', true],
        ['wt/dirty', false],
      ],
    );
    assert.match(line.worktrees[1].reason, /untracked|modified/);
    assert.ok(!existsSync(done['wt/clean'].worktree.path));
    assert.ok(existsSync(join(done['wt/dirty'].worktree.path, 'work.txt')), 'the work is where it was');
    assert.equal(git('branch', '--list', 'subagents/wt/clean'), 'subagents/wt/clean', 'the branch stays');
    assert.deepEqual(runsOf(b, 'wt/dirty'), [1]);
  });
});

describe('trust and bad input', () => {
  test('a registry not made here (found by walking up, copied in) is refused, and nothing in it goes', async () => {
    finished(b, 'copied', 2);
    await quiet(b);
    const clone = join(b.dir, 'clone');
    mkdirSync(clone);
    cpSync(b.registry, join(clone, '.subagents'), { recursive: true });
    const r = b.run('prune', ['--keep-last', '0'], { cwd: clone, env: { SUBAGENT_DIR: undefined } });
    assertError(r, 'E_REGISTRY_UNTRUSTED');
    assert.ok(existsSync(join(clone, '.subagents', 'agents', 'copied', '1', 'record.json')));
    // --dry-run only reads: it answers.
    assert.ok(assertOk(b.run('prune', ['--keep-last', '0', '--dry-run'], { cwd: clone, env: { SUBAGENT_DIR: undefined } })).removed.length >= 1);
  });

  test('never through a symlink, never what another user owns or may write: such names and runs are kept', async () => {
    finished(b, 'real', 2);
    finished(b, 'owned', 2);
    finished(b, 'loose', 2);
    await quiet(b);
    symlinkSync(join(b.registry, 'agents', 'real'), join(b.registry, 'agents', 'link'));
    chmodSync(runDirPath(b.registry, 'loose', 1), 0o777);
    const uid = process.getuid?.();
    if (uid === 0) chownSync(runDirPath(b.registry, 'owned', 1), 4343, 4343);
    const line = prune(b, ['--keep-last', '0', '--whole-names', '--name', 'link', '--name', 'loose', '--name', 'owned']);
    assert.deepEqual(
      pairs(line),
      uid === 0
        ? []
        : [
            ['owned', 1],
            ['owned', 2],
          ],
    );
    assert.ok(existsSync(join(runDirPath(b.registry, 'real', 1), 'record.json')), 'the target of the symlink is untouched');
    assert.deepEqual(runsOf(b, 'loose'), [1, 2]);
    rmSync(join(b.registry, 'agents', 'link'));
    chmodSync(runDirPath(b.registry, 'loose', 1), 0o700);
  });

  test('bad input is one JSON error line with a stable code', () => {
    for (const [args, code] of [
      [[], 'E_ARG_INVALID'],
      [['--dry-run'], 'E_ARG_INVALID'],
      [['--older-than', '3 weeks'], 'E_ARG_INVALID'],
      [['--older-than', '-1d'], 'E_ARG_INVALID'],
      [['--keep-last', 'two'], 'E_ARG_INVALID'],
      [['--keep-last', '-1'], 'E_ARG_INVALID'],
      [['--max-size', 'big'], 'E_ARG_INVALID'],
      [['--name', 'a', '--prefix', 'b'], 'E_ARG_INVALID'],
      [['--name', '../x'], 'E_NAME_INVALID'],
      [['--keep-last', '1', '--worktrees'], 'E_ARG_INVALID'],
      [['--keep-last', '1', '--keep-last', '2'], 'E_ARG_INVALID'],
      [['--bogus'], 'E_ARG_UNKNOWN'],
    ] as const) {
      const j = assertError(b.run('prune', [...args]), code);
      assert.ok(j.details.hint, `${args.join(' ')}: a hint`);
    }
  });
});
