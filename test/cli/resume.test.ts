import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { BIN } from '../support/paths.js';
import { ISO_UTC } from '../support/run.js';
import { readJson, runDirOf } from '../support/registry.js';
import { makeBox } from '../support/box.js';
import { expectError, gate, open, resultText, startShell, statusOf, untilStatus, waitTerminal } from '../support/shell.js';

const b = makeBox('resume');
const work = join(b.dir, 'work');
mkdirSync(work);

describe('resume-subagent', () => {
  test('a new run (run 2) in the same cwd; result gives run 2; search covers both runs', () => {
    startShell(b, 'r/main', 'echo alpha-output; echo kept > state.txt', ['--cwd', work]);
    waitTerminal(b, ['r/main']);
    const r = b.run('resume-subagent', ['--name', 'r/main', '--prompt', 'echo beta-output; cat state.txt; pwd']);
    assert.equal(r.code, 0, r.stdout);
    const j = r.json;
    assert.equal(j.registry, b.registry);
    for (const k of ['ok', 'name', 'pid', 'status', 'sessionId', 'cli', 'model', 'mode', 'run', 'startedAt']) assert.ok(k in j, `missing ${k}`);
    assert.equal(j.ok, true);
    assert.equal(j.name, 'r/main');
    assert.equal(j.mode, 'resume');
    assert.equal(j.run, 2);
    assert.equal(j.cli, 'shell');
    assert.equal(j.model, null);
    assert.equal(typeof j.pid, 'number');
    assert.ok(['scheduled', 'running'].includes(j.status));
    assert.match(j.startedAt, ISO_UTC);

    const a = waitTerminal(b, ['r/main'])['r/main'];
    assert.equal(a.run, 2);
    assert.equal(a.resumeCount, 1);
    assert.equal(a.outcome, 'succeeded');
    assert.equal(a.cwd, realpathSync(work));
    assert.equal(resultText(b, 'r/main'), `beta-output\nkept\n${realpathSync(work)}\n`);
    // Both runs are on disk, each with its own prompt.
    assert.equal(readFileSync(join(runDirOf(b.registry, 'r/main', 1), 'prompt'), 'utf8'), 'echo alpha-output; echo kept > state.txt');
    assert.equal(readFileSync(join(runDirOf(b.registry, 'r/main', 2), 'prompt'), 'utf8'), 'echo beta-output; cat state.txt; pwd');

    const s = b.run('search', ['--name', 'r/main', '--pattern', '(alpha|beta)-output']);
    assert.equal(s.code, 0);
    const seen = new Set(s.json.matches.map((m: any) => `${m.run}/${m.role}`));
    assert.deepEqual([...seen].sort(), ['1/assistant', '1/user', '2/assistant', '2/user']);
    const asst = b.run('search', ['--name', 'r/main', '--pattern', 'output', '--role', 'assistant']);
    assert.deepEqual(
      asst.json.matches.map((m: any) => [m.run, m.role, m.snippet]),
      [
        [1, 'assistant', 'alpha-output'],
        [2, 'assistant', 'beta-output'],
      ],
    );
    const user = b.run('search', ['--name', 'r/main', '--pattern', 'output', '--role', 'user']);
    assert.deepEqual(
      user.json.matches.map((m: any) => m.run),
      [1, 2],
    );
    assert.ok(user.json.matches.every((m: any) => m.role === 'user'));
  });

  test('resume from stdin and from --prompt-file; the third run keeps counting', () => {
    const r = b.run('resume-subagent', ['--name', 'r/main', '--prompt', '-'], { input: 'echo gamma' });
    assert.equal(r.code, 0, r.stdout);
    assert.equal(r.json.run, 3);
    waitTerminal(b, ['r/main']);
    assert.equal(resultText(b, 'r/main'), 'gamma\n');
  });

  test('resume inherits the CLI (SUBAGENT_CLI does not change it); a matching --cwd (relative) is accepted', () => {
    const r = b.run('resume-subagent', ['--name', 'r/main', '--prompt', 'echo delta', '--cwd', 'work'], { env: { SUBAGENT_CLI: 'opencode' } });
    assert.equal(r.code, 0, r.stdout);
    assert.equal(r.json.cli, 'shell');
    assert.equal(r.json.run, 4);
    const a = waitTerminal(b, ['r/main'])['r/main'];
    assert.equal(a.cli, 'shell');
    assert.equal(a.outcome, 'succeeded');
  });

  test('-- ARGS are repeated on resume, and replaced by a resume that gives its own', () => {
    startShell(b, 'r/args', 'echo "$#:$*"', ['--', 'a', 'b c']);
    waitTerminal(b, ['r/args']);
    assert.equal(resultText(b, 'r/args'), '2:a b c\n');
    assert.equal(b.run('resume-subagent', ['--name', 'r/args', '--prompt', 'echo "$#:$*"']).code, 0);
    assert.deepEqual(waitTerminal(b, ['r/args'])['r/args'].extraArgs, ['a', 'b c']);
    assert.equal(resultText(b, 'r/args'), '2:a b c\n');
    assert.equal(b.run('resume-subagent', ['--name', 'r/args', '--prompt', 'echo "$#:$*"', '--', 'z']).code, 0);
    assert.deepEqual(waitTerminal(b, ['r/args'])['r/args'].extraArgs, ['z']);
    assert.equal(resultText(b, 'r/args'), '1:z\n');
    // result --run K reads an earlier run.
    const first = b.run('result', ['--name', 'r/args', '--run', '1', '--json']);
    assert.equal(first.json.run, 1);
    assert.equal(first.json.lastAssistantText, '2:a b c\n');
  });

  test('an unknown run: E_AGENT_BUSY while its orphaned agent lives; resumable once the agent is dead', async () => {
    startShell(b, 'r/orphan', 'while :; do sleep 0.05; done');
    const a = await untilStatus(b, 'r/orphan', (x) => x.status === 'running' && x.agentPid, 'running');
    process.kill(a.pid, 'SIGKILL');
    await untilStatus(b, 'r/orphan', (x) => x.status === 'unknown', 'unknown');
    const j = expectError(b, 'resume-subagent', ['--name', 'r/orphan', '--prompt', 'echo no'], 'E_AGENT_BUSY');
    assert.match(j.details.hint, /cancel/);
    process.kill(a.agentPid, 'SIGKILL');
    await untilStatus(b, 'r/orphan', (x) => x.status === 'unknown' && x.agentAlive === false, 'agent dead');
    // Nothing to cancel any more.
    expectError(b, 'cancel', ['--name', 'r/orphan'], 'E_NOT_RUNNING');
    const r = b.run('resume-subagent', ['--name', 'r/orphan', '--prompt', 'echo back']);
    assert.equal(r.code, 0, r.stdout);
    assert.equal(r.json.run, 2);
    assert.equal(waitTerminal(b, ['r/orphan'])['r/orphan'].outcome, 'succeeded');
    assert.equal(resultText(b, 'r/orphan'), 'back\n');
  });

  test('resume after a failure and after a cancel is allowed', async () => {
    startShell(b, 'r/failed', 'exit 9');
    waitTerminal(b, ['r/failed']);
    const r = b.run('resume-subagent', ['--name', 'r/failed', '--prompt', 'echo recovered']);
    assert.equal(r.code, 0, r.stdout);
    assert.equal(waitTerminal(b, ['r/failed'])['r/failed'].outcome, 'succeeded');

    startShell(b, 'r/cancelled', 'while :; do sleep 0.05; done');
    await untilStatus(b, 'r/cancelled', (a) => a.status === 'running', 'running');
    assert.equal(b.run('cancel', ['--name', 'r/cancelled']).code, 0);
    const r2 = b.run('resume-subagent', ['--name', 'r/cancelled', '--prompt', 'echo again']);
    assert.equal(r2.code, 0, r2.stdout);
    assert.equal(r2.json.run, 2);
    waitTerminal(b, ['r/cancelled']);
  });

  test('errors: E_AGENT_BUSY (running), E_CWD_MISMATCH, E_SESSION_NOT_FOUND, E_PROMPT_REQUIRED, E_ARG_UNSUPPORTED', async () => {
    const g = join(b.dir, 'gate-busy');
    startShell(b, 'r/busy', gate(g), ['--cwd', work]);
    await untilStatus(b, 'r/busy', (a) => a.status === 'running', 'running');
    const busy = expectError(b, 'resume-subagent', ['--name', 'r/busy', '--prompt', 'echo no'], 'E_AGENT_BUSY');
    assert.match(busy.error, /r\/busy/);
    open(g);
    waitTerminal(b, ['r/busy']);

    const other = join(b.dir, 'other');
    mkdirSync(other, { recursive: true });
    const mm = expectError(b, 'resume-subagent', ['--name', 'r/busy', '--prompt', 'echo no', '--cwd', other], 'E_CWD_MISMATCH');
    assert.match(mm.error, /work/);
    expectError(b, 'resume-subagent', ['--name', 'r/busy', '--prompt', 'echo no', '--cwd', '.'], 'E_CWD_MISMATCH');
    expectError(b, 'resume-subagent', ['--name', 'r/busy', '--prompt', 'echo no', '--cwd', 'no/such'], 'E_CWD_INVALID');
    expectError(b, 'resume-subagent', ['--name', 'r/never', '--prompt', 'echo no'], 'E_SESSION_NOT_FOUND');
    expectError(b, 'resume-subagent', ['--name', 'r/busy'], 'E_PROMPT_REQUIRED');
    expectError(b, 'resume-subagent', ['--name', 'r/busy', '--prompt', ''], 'E_PROMPT_REQUIRED');
    expectError(b, 'resume-subagent', ['--name', 'r/busy', '--prompt', '-'], 'E_PROMPT_REQUIRED', { input: '' });
    expectError(b, 'resume-subagent', ['--name', 'r/busy', '--prompt', 'echo no', '--model', 'x'], 'E_ARG_UNSUPPORTED');
    expectError(b, 'resume-subagent', ['--name', 'r/busy', '--prompt', 'echo no', '--cli', 'shell'], 'E_ARG_UNKNOWN');
    // None of these made a run 2.
    assert.equal(statusOf(b, 'r/busy').run, 1);
    // A symlink to the run's directory is the same directory.
    symlinkSync(work, join(b.dir, 'work-link'));
    const ok = b.run('resume-subagent', ['--name', 'r/busy', '--prompt', 'pwd', '--cwd', 'work-link']);
    assert.equal(ok.code, 0, ok.stdout);
    waitTerminal(b, ['r/busy']);
    assert.equal(resultText(b, 'r/busy'), realpathSync(work) + '\n');
  });

  test('the run survives the caller exit and SIGHUP / SIGINT sent to the caller process group (start and resume)', async () => {
    const g = join(b.dir, 'gate-hup');
    const out = join(b.dir, 'hup-out');
    for (const [verb, sig, args] of [
      ['start-subagent', 'HUP', ['--name', 'r/hup', '--cli', 'shell', '--prompt', `${gate(g)}; echo survived-1 >> '${out}'; echo ok1`]],
      ['resume-subagent', 'INT', ['--name', 'r/hup', '--prompt', `${gate(g)}; echo survived-2 >> '${out}'; echo ok2`]],
    ] as const) {
      // A caller in its own session and group: runs the verb, then signals its whole group (itself included).
      const wrapper = spawn('setsid', ['bash', '-c', `"$0" "$@" > '${out}.json'; kill -${sig} 0; sleep 30`, join(BIN, verb), ...args], {
        cwd: b.dir,
        env: b.env,
        stdio: 'ignore',
      });
      const ended = await new Promise<{ code: number | null; signal: string | null }>((resolve) =>
        wrapper.on('exit', (code, signal) => resolve({ code, signal })),
      );
      assert.equal(ended.signal, `SIG${sig}`, 'the caller was killed by the signal it sent its group');
      assert.equal(readJson(`${out}.json`).ok, true);
      const a = await untilStatus(b, 'r/hup', (x) => x.status === 'running', 'running after the caller died');
      // Even a hang-up or Ctrl-C delivered to the supervisor itself does not end the run.
      process.kill(a.pid, 'SIGHUP');
      process.kill(a.pid, 'SIGINT');
      assert.equal(statusOf(b, 'r/hup').status, 'running');
      open(g);
      const d = waitTerminal(b, ['r/hup'])['r/hup'];
      assert.equal(d.status, 'done', verb);
      assert.equal(d.outcome, 'succeeded', verb);
      assert.equal(d.pid, a.pid);
      // Remove the gate for the next round.
      rmSync(g);
    }
    assert.equal(readFileSync(out, 'utf8'), 'survived-1\nsurvived-2\n');
    assert.equal(resultText(b, 'r/hup'), 'ok2\n');
  });
});
