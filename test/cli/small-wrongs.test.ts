/**
 * Issue 23, point 8: the smaller wrongs, each through the executables — a number too large says the
 * limit, an errno is said once, concurrent cancels: one `recorded:true`, `--version` on every verb,
 * worktree names that collide as git refs, the shell's output bytes as they are, a duration that does
 * not follow the wall clock (that one is in test/fault/time.test.ts, with libfaketime).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { makeBox, quiet } from '../support/box.js';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { assertError, assertOk } from '../support/run.js';
import { recordOf, runDirPath, settledTree } from '../support/registry.js';
import { spawnSync } from 'node:child_process';
import { BIN, ROOT } from '../support/paths.js';
import { startShellAsync, untilStatus, waitTerminalAsync } from '../support/shell.js';

const b = makeBox('small-wrongs');

test('point 8: a number too large says the limit, not "is not a whole number"', async () => {
  const cases: Array<[string, string[], RegExp]> = [
    ['start-subagent', ['--name', 'n', '--cli', 'shell', '--prompt', 'true', '--max-concurrent', '99999999999'], /"99999999999" is too large: at most 999999$/],
    ['result', ['--name', 'n', '--run', '99999999999'], /"99999999999" is too large: runs are numbered up to 999999999$/],
    ['result', ['--name', 'n', '--since', '99999999999'], /is too large: runs are numbered up to 999999999$/],
    ['start-subagent', ['--name', 'n', '--cli', 'shell', '--prompt', 'true', '--max-tokens', '9999999999999999'], /is too large: at most 999999999999999$/],
    ['start-subagent', ['--name', 'n', '--cli', 'shell', '--prompt', 'true', '--max-time', '99999999999999'], /is too large: at most 999999999999$/],
  ];
  for (const [verb, args, message] of cases) {
    const j = assertError(await b.runAsync(verb as any, args), 'E_ARG_INVALID');
    assert.match(j.error, message, `${verb} ${args.join(' ')}`);
    assert.doesNotMatch(j.error, /not a whole number/);
  }
  // What is not a number at all still says so.
  const j = assertError(await b.runAsync('start-subagent', ['--name', 'n', '--cli', 'shell', '--prompt', 'true', '--max-concurrent', 'four']), 'E_ARG_INVALID');
  assert.match(j.error, /"four" is not a whole number$/);
  const env = assertError(
    await b.runAsync('start-subagent', ['--name', 'n', '--cli', 'shell', '--prompt', 'true'], { env: { SUBAGENT_MAX_CONCURRENT: '99999999999' } }),
    'E_ARG_INVALID',
  );
  assert.match(env.error, /^SUBAGENT_MAX_CONCURRENT "99999999999" is too large: at most 999999$/);
});

test('point 8: of four concurrent cancels of one run, only the one that recorded the cancel says recorded:true', async () => {
  // The agent ignores SIGTERM, so the run stays `running` through the cancels' grace: all four find it running.
  await startShellAsync(b, 'four-cancels', "trap '' TERM; echo started; while :; do sleep 0.1; done");
  await untilStatus(b, 'four-cancels', (a) => a.status === 'running', 'running');
  const lines = await Promise.all([1, 2, 3, 4].map(() => b.runAsync('cancel', ['--name', 'four-cancels'])));
  const oks = lines.filter((r) => r.json?.ok === true).map((r) => r.json);
  for (const r of lines) if (r.json?.ok !== true) assertError(r, 'E_NOT_RUNNING');
  assert.ok(oks.length >= 2, `at least two cancels found the run running: ${lines.map((l) => l.stdout).join('')}`);
  const recorded = oks.filter((j) => j.recorded === true);
  assert.equal(recorded.length, 1, `exactly one recorded the cancel: ${JSON.stringify(oks)}`);
  for (const j of oks.filter((x) => x.recorded !== true)) {
    assert.equal(j.recorded, false);
    assert.match(j.warning, /another cancel \(pid \d+\) had already recorded the cancel/);
  }
  const record = recordOf(b.registry, 'four-cancels');
  assert.equal(record.outcome, 'cancelled');
});

test('point 8: every verb has --version: one JSON line with the package version, exit 0, nothing else done', async () => {
  const version = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version;
  const before = settledTree(b.dir);
  for (const verb of ['start-subagent', 'resume-subagent', 'status', 'result', 'search', 'cancel'] as const) {
    const r = await b.runAsync(verb, ['--version']);
    const j = assertOk(r, `${verb} --version`);
    assert.deepEqual(Object.keys(j), ['ok', 'version', 'node']);
    assert.equal(j.version, version);
    assert.equal(j.node, process.version);
    // With other flags too (it is answered before they are looked at), but --help wins.
    assert.equal(assertOk(await b.runAsync(verb, ['--name', 'x', '--version'])).version, version);
    const help = await b.runAsync(verb, ['--version', '--help']);
    assert.equal(help.code, 0);
    assert.match(help.stdout, /^usage: /);
    assert.match(help.stdout, /--version +the version, as one JSON line/);
  }
  assert.deepEqual(settledTree(b.dir), before, '--version created nothing');
  // As the value of a flag it is that value: the prompt "--version".
  const run = assertOk(await b.runAsync('start-subagent', ['--name', 'prompt-is-version', '--cli', 'shell', '--prompt', '--version']));
  assert.equal(run.name, 'prompt-is-version');
});

test('point 8: plain result prints the shell output bytes as they are (invalid UTF-8 kept); --json decodes them with U+FFFD', async () => {
  // printf's octal escapes: "café" in Latin-1 (0xE9), 0xFF 0xFE, and a UTF-8 sequence cut short (0xE2 0x82).
  await startShellAsync(b, 'bytes', "printf 'caf\\351 \\377\\376 ok\\n'; printf 'cut \\342\\202'");
  await waitTerminalAsync(b, ['bytes']);
  const log = readFileSync(join(runDirPath(b.registry, 'bytes'), 'events.log'));
  assert.deepEqual([...log.subarray(0, 4)], [0x63, 0x61, 0x66, 0xe9], 'the agent wrote Latin-1');
  const plain = spawnSync(join(BIN, 'result'), ['--name', 'bytes'], { cwd: b.dir, env: b.env });
  assert.equal(plain.status, 0);
  // Its bytes exactly, and the newline the verb adds to an output that does not end in one.
  assert.deepEqual(plain.stdout, Buffer.concat([log, Buffer.from('\n')]));
  const since = spawnSync(join(BIN, 'result'), ['--name', 'bytes', '--since', '0'], { cwd: b.dir, env: b.env });
  assert.deepEqual(since.stdout, Buffer.concat([Buffer.from('[subagents: run 1, done succeeded]\n'), log, Buffer.from('\n')]));
  const j = assertOk(await b.runAsync('result', ['--name', 'bytes', '--json']));
  assert.equal(j.lastAssistantText, log.toString('utf8'));
  assert.ok(j.lastAssistantText.includes('\uFFFD'));
  assert.equal(j.bytes, log.length);
});

test('point 8: --worktree names a/b then a (and c then c/d) are E_NAME_EXISTS naming the branch in the way, not git raw ref error', async () => {
  const repo = join(b.dir, 'wt-repo');
  mkdirSync(repo);
  const git = (args: string[]) => {
    const r = spawnSync('git', ['-c', 'user.email=t@example.com', '-c', 'user.name=T', '-c', 'init.defaultBranch=main', ...args], {
      cwd: repo,
      encoding: 'utf8',
    });
    assert.equal(r.status, 0, `git ${args.join(' ')}: ${r.stderr}`);
  };
  git(['init', '-q']);
  writeFileSync(join(repo, 'README'), 'x\n');
  git(['add', '.']);
  git(['commit', '-q', '-m', 'one']);
  await startShellAsync(b, 'wtn/a/b', 'true', ['--worktree', '--cwd', repo]);
  await startShellAsync(b, 'wtn/c', 'true', ['--worktree', '--cwd', repo]);
  await waitTerminalAsync(b, ['wtn/a/b', 'wtn/c']);
  await quiet(b);
  for (const [name, conflicting] of [
    ['wtn/a', 'subagents/wtn/a/b'],
    ['wtn/c/d', 'subagents/wtn/c'],
  ]) {
    const before = settledTree(b.registry);
    const j = assertError(
      await b.runAsync('start-subagent', ['--name', name!, '--cli', 'shell', '--prompt', 'true', '--worktree', '--cwd', repo]),
      'E_NAME_EXISTS',
    );
    assert.equal(j.details.branch, `subagents/${name}`);
    assert.equal(j.details.conflicting, conflicting);
    assert.match(j.details.hint, /git branch -D/);
    assert.deepEqual(settledTree(b.registry), before, `${name}: nothing was created`);
  }
});
