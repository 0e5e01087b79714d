/**
 * `resume-subagent --revive` (issue 25, point 3) through the real executables: runs whose supervisors and
 * agents were killed with SIGKILL (as a reboot leaves them: `unknown`, agent gone) are resumed with the
 * options they were started with — a `shell` script runs again; a CLI whose agent had begun gets the
 * continuation prompt in its session; one whose session never began gets its own prompt and files in a
 * session opened anew (a fake `claude` on PATH records its argv and stdin). Runs that are done, running,
 * or whose agent lives are skipped with why; two revives racing revive each run once; bad selections are
 * refused, changing nothing.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { FIXTURES } from '../support/paths.js';
import { assertOk } from '../support/run.js';
import { testBox, type Box } from '../support/box.js';
import { expectError, startShell, statusOf, waitTerminal, waitTerminalAsync } from '../support/shell.js';
import { recordOf, runDirPath } from '../support/registry.js';
import { until } from '../support/wait.js';

/** SIGKILL a run's supervisor and its agent's process group, as a crash (or a power cut) leaves them. */
async function killRun(b: Box, name: string): Promise<void> {
  const r = await until(
    `${name} running with its agent`,
    () => {
      const rec = recordOf(b.registry, name);
      return rec.status === 'running' && rec.agentProcess ? rec : null;
    },
    15_000,
  );
  process.kill(r.supervisor.pid, 'SIGKILL');
  process.kill(-r.agentProcess.pgid, 'SIGKILL');
  await until(`${name} unknown, its agent gone`, () => {
    const s = statusOf(b, name);
    return s.status === 'unknown' && s.agentAlive === false;
  });
}

/** A fake `claude` on PATH that writes its argv and stdin next to the box, prints a captured reply, then waits (or ends). */
function fakeClaude(b: Box, end: boolean): { argv: string; stdin: string } {
  const bin = join(b.dir, 'fakebin');
  mkdirSync(bin, { recursive: true });
  const argv = join(b.dir, 'claude-argv');
  const stdin = join(b.dir, 'claude-stdin');
  const reply = join(FIXTURES, 'agents', 'claude', 'plain-reply.ndjson');
  writeFileSync(
    join(bin, 'claude'),
    `#!/bin/sh\nprintf '%s\\n' "$@" >> '${argv}'\necho --- >> '${argv}'\ncat >> '${stdin}'\necho --- >> '${stdin}'\n` +
      (end ? `cat '${reply}'\n` : `head -n 1 '${reply}'\nexec sleep 300\n`),
  );
  chmodSync(join(bin, 'claude'), 0o755);
  b.env.PATH = `${bin}:${b.env.PATH}`;
  return { argv, stdin };
}

describe('resume-subagent --revive', () => {
  test('shell runs killed with SIGKILL are revived with their options (the script runs again); the rest are skipped with why', async (t) => {
    const b = testBox(t, 'revive');
    const mark = join(b.dir, 'marks');
    const hook = join(b.dir, 'hook-ran');
    const gate = join(b.dir, 'gate');
    const script = (n: string) => `echo ${n} >> '${mark}'; while [ ! -e '${gate}' ]; do sleep 0.1; done; echo ${n}-done`;
    startShell(b, 'night/a', script('a'), ['--max-time', '300', '--stall-after', '120', '--on-end', `echo $SUBAGENT_NAME >> '${hook}'`, '--max-memory', '1G']);
    startShell(b, 'night/b', script('b'));
    startShell(b, 'night/done', 'echo finished');
    startShell(b, 'night/alive', `while [ ! -e '${gate}' ]; do sleep 0.1; done`);
    await killRun(b, 'night/a');
    await killRun(b, 'night/b');
    await waitTerminalAsync(b, ['night/done']);
    const before = recordOf(b.registry, 'night/a');

    const r = assertOk(b.run('resume-subagent', ['--revive', '--prefix', 'night']), 'revive');
    assert.deepEqual(r.revived.map((x: any) => [x.name, x.run, x.mode, x.prompt]).sort(), [
      ['night/a', 2, 'resume', 'original'],
      ['night/b', 2, 'resume', 'original'],
    ]);
    const skipped = Object.fromEntries(r.skipped.map((s: any) => [s.name, s.why]));
    assert.deepEqual(Object.keys(skipped).sort(), ['night/alive', 'night/done']);
    assert.match(skipped['night/done'], /^it is done \(succeeded\)/);
    assert.match(skipped['night/alive'], /^it is running$/);

    const after = recordOf(b.registry, 'night/a', 2);
    assert.equal(after.run, 2);
    for (const key of [
      'cli',
      'cwd',
      'model',
      'variant',
      'agent',
      'extraArgs',
      'caps',
      'stallAfterSec',
      'stallAction',
      'onEnd',
      'executor',
      'worktree',
      'keepChildren',
    ])
      assert.deepEqual(after[key], before[key], `${key} is kept`);
    assert.equal(readFileSync(join(b.registry, 'agents', 'night+a', '2', 'prompt'), 'utf8'), script('a'), 'the script runs again');
    await until('both scripts started again', () => readFileSync(mark, 'utf8').split('\n').filter(Boolean).sort().join(',') === 'a,a,b,b');
    writeFileSync(gate, '');
    const got = await waitTerminalAsync(b, ['night/a', 'night/b', 'night/alive']);
    assert.equal(got['night/a'].outcome, 'succeeded', JSON.stringify(got['night/a']));
    assert.equal(got['night/b'].outcome, 'succeeded');
    assert.equal(assertOk(b.run('result', ['--name', 'night/a', '--json'])).lastAssistantText, 'a-done\n');
    await until('the revived run ran its end hook', () => {
      try {
        return readFileSync(hook, 'utf8').includes('night/a');
      } catch {
        return false;
      }
    });
    const nothing = assertOk(b.run('resume-subagent', ['--revive', '--all']), 'revive again');
    assert.deepEqual(nothing.revived, [], 'nothing is left to revive');
  });

  test('two revives racing revive each run once', async (t) => {
    const b = testBox(t, 'revive-race');
    const gate = join(b.dir, 'gate');
    const names = ['race/1', 'race/2', 'race/3'];
    for (const n of names) startShell(b, n, `while [ ! -e '${gate}' ]; do sleep 0.1; done`);
    for (const n of names) await killRun(b, n);
    const [x, y] = await Promise.all([b.runAsync('resume-subagent', ['--revive', '--all']), b.runAsync('resume-subagent', ['--revive', '--all'])]);
    const one = assertOk(x, 'revive 1');
    const two = assertOk(y, 'revive 2');
    const revived = [...one.revived, ...two.revived].map((r: any) => r.name).sort();
    assert.deepEqual(revived, names, 'each run revived by exactly one of the two');
    for (const s of [...one.skipped, ...two.skipped]) assert.ok(names.includes(s.name), JSON.stringify(s));
    for (const n of names) {
      assert.equal(recordOf(b.registry, n, 2).run, 2, `${n}: its next run`);
      assert.ok(!existsSync(runDirPath(b.registry, n, 3)), `${n}: one new run, not two`);
    }
    writeFileSync(gate, '');
    const got = await waitTerminalAsync(b, names);
    for (const n of names) assert.equal(got[n].outcome, 'succeeded', n);
  });

  test('a CLI run: the continuation prompt in its session once its agent had begun; its own prompt in a new session when it had not', async (t) => {
    const b = testBox(t, 'revive-claude');
    const { argv, stdin } = fakeClaude(b, false);
    // Begun: the fake printed its first line (the session's init) before it was killed.
    assertOk(
      b.run('start-subagent', ['--name', 'cl/begun', '--cli', 'claude', '--prompt', 'first task', '--model', 'sonnet', '--', '--permission-mode', 'plan']),
    );
    await until('the agent wrote its first line', () => statusOf(b, 'cl/begun').sessionId !== null && recordOf(b.registry, 'cl/begun').eventBytes > 0, 15_000);
    await killRun(b, 'cl/begun');
    const session = recordOf(b.registry, 'cl/begun').sessionId;
    // Never begun: its supervisor is killed before it started the agent.
    assertOk(
      b.run('start-subagent', ['--name', 'cl/never', '--cli', 'claude', '--prompt', 'second task'], {
        env: { SUBAGENT_TEST_CRASH_AT: 'before-agent-spawn' },
      }),
    );
    await until('cl/never: its supervisor died before the agent', () => statusOf(b, 'cl/never').status === 'unknown');
    writeFileSync(argv, '');
    writeFileSync(stdin, '');
    fakeClaude(b, true);
    const r = assertOk(b.run('resume-subagent', ['--revive', '--prefix', 'cl']), 'revive');
    assert.deepEqual(r.revived.map((x: any) => [x.name, x.prompt]).sort(), [
      ['cl/begun', 'continuation'],
      ['cl/never', 'original'],
    ]);
    const got = await waitTerminalAsync(b, ['cl/begun', 'cl/never']);
    assert.equal(got['cl/begun'].outcome, 'succeeded', JSON.stringify(got['cl/begun']));
    assert.equal(got['cl/never'].outcome, 'succeeded', JSON.stringify(got['cl/never']));
    const calls = readFileSync(argv, 'utf8').split('---\n').filter(Boolean);
    const inputs = readFileSync(stdin, 'utf8').split('---\n').filter(Boolean);
    const begun = calls.findIndex((c) => c.includes(`--resume\n${session}\n`));
    assert.ok(begun >= 0, `cl/begun resumed its session ${session}:\n${calls.join('\n===\n')}`);
    assert.match(calls[begun]!, /--model\nsonnet\n/, 'its model kept');
    assert.match(calls[begun]!, /--permission-mode\nplan\n/, 'its -- ARGS kept: no more permission than it had');
    assert.match(inputs[begun]!, /^Your previous turn was interrupted/);
    const never = 1 - begun;
    assert.doesNotMatch(calls[never]!, /--resume/, 'a session that never began is opened anew');
    const revived = recordOf(b.registry, 'cl/never', 2);
    assert.ok(calls[never]!.includes(`--session-id\n${revived.sessionId}\n`), `a new session id of ours:\n${calls[never]}`);
    assert.notEqual(revived.sessionId, recordOf(b.registry, 'cl/never').sessionId, 'not the id the first run never used');
    assert.match(inputs[never]!, /^second task/);
    assert.equal(revived.newSession, true);
  });

  test('bad selections are refused and change nothing; --revive takes no other option', (t) => {
    const b = testBox(t, 'revive-bad');
    startShell(b, 'one', 'true');
    waitTerminal(b, ['one']);
    for (const [args, re] of [
      [['--revive'], /needs the runs/],
      [['--revive', '--all', '--prefix', 'x'], /one of/],
      [['--revive', '--all', '--model', 'x'], /--model cannot be given/],
      [['--revive', '--all', '--', 'x'], /-- ARGS cannot be given/],
      [['--all'], /needs --revive/],
      [['--prefix', 'x', '--name', 'one', '--prompt', 'p'], /needs --revive/],
    ] as const) {
      const e = expectError(b, 'resume-subagent', [...args], 'E_ARG_INVALID');
      assert.match(e.error, re, args.join(' '));
    }
    expectError(b, 'resume-subagent', ['--revive', '--name', 'nope'], 'E_NAME_NOT_FOUND');
  });
});
