// Gemini CLI's own end-to-end tests, beside its row of the contract suite (test/e2e/contract/gemini.ts, run
// by test/e2e/contract-*.test.ts): the real, pinned Gemini CLI (test/.clis, 0.61.0) against the fake Gemini API
// (test/fakes/google-genai.ts) on 127.0.0.1. Each test has its own sandbox: registry, HOME (so its own
// ~/.gemini: settings, policy, chats) and TMPDIR, and a marker in the environment of every process it
// starts, by which `after` ends leftovers (by pid).
//
// The fake runs in this process, so nothing that waits on a run may block the event loop: the waiting
// verbs go through runAsync (spawnSync would hold the fake's answers until the wait times out).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { requireCli } from '../fakes/env.js';
import { assertOk } from '../support/run.js';
import { until, untilInRun } from '../support/wait.js';
import { pidsWithCmdline } from '../support/procs.js';
import { recordOf, runDirPath, stderrTail } from '../support/registry.js';
import { requestsWith, uniq, waitDone, type CliBox } from '../fakes/world.js';
import { geminiBox, server } from './contract/gemini.js';

/** A sandbox whose every process runs the Gemini CLI against the fake, in its own HOME, and works in a project directory (the CLI files its sessions per project). */
async function box(t: Parameters<typeof geminiBox>[0], label: string): Promise<CliBox> {
  return (await geminiBox(t, label))!.b;
}

test('a shell call a rule asks to confirm is refused headless: the run failed, permission-denied, and the command never ran', async (t) => {
  if (!requireCli(t, 'gemini')) return;
  const b = await box(t, 'confirm');
  // The box's policy allows the shell; a rule that asks instead is what a user's own policy may say.
  const policy = b.files.find((f) => f.endsWith('.toml'))!;
  writeFileSync(policy, '[[rule]]\ntoolName = "run_shell_command"\ndecision = "ask_user"\npriority = 100\n');
  const made = join(b.project, 'made');
  assertOk(b.run('start-subagent', ['--name', 'ask', '--cli', 'gemini', '--cwd', b.project, '--prompt', `TOOL:Bash:touch ${made} && echo made`]), 'start');
  const a = await waitDone(b, 'ask', t);
  assert.equal(a.outcome, 'failed', JSON.stringify(a));
  assert.equal(a.reason, 'permission-denied');
  assert.equal(a.exitCode, 0, 'Gemini itself reports success');
  assert.match(
    a.error,
    /^gemini was refused permission for 1 tool call: run_shell_command: touch .*made && echo made \(grant what the task needs: docs\/agents\/gemini\.md, "Permissions"\)(; stderr: .*requires user confirmation.*)?$/,
  );
  assert.throws(() => readFileSync(made), 'the command never ran');
});

test("a sub-agent that failed (its request got HTTP 500) is a failed child, read from the store; a resumed run's child that succeeds is done", async (t) => {
  if (!requireCli(t, 'gemini')) return;
  const b = await box(t, 'childfail');
  const why = uniq('childboom');
  assertOk(b.run('start-subagent', ['--name', 'pf', '--cli', 'gemini', '--cwd', b.project, '--prompt', `TASK:break:ERROR:500:${why}`]), 'start');
  const a = await waitDone(b, 'pf', t);
  assert.equal(a.outcome, 'succeeded', `the parent's own run did not fail: ${a.error} ${stderrTail(b.registry, 'pf')}`);
  assert.equal(a.children.length, 1, JSON.stringify(a.children));
  const failed = a.children[0];
  // The stream said the call was a success; the session's chat says the child failed.
  assert.deepEqual(
    [failed.status, failed.statusSource, failed.error],
    ['failed', 'transcript', `API Error: ${why} (HTTP 500 INTERNAL)`],
    JSON.stringify(failed),
  );
  assert.ok(failed.startedAt && failed.finishedAt);
  assert.ok(
    requestsWith(await server(), `ERROR:500:${why}`).some((q) => !q.conversation!.lastUserText.startsWith('TASK:')),
    "the child's own request got the 500",
  );

  const r = assertOk(b.run('result', ['--name', 'pf', '--child', failed.id, '--json']), 'result --child');
  assert.equal(r.childStatus, 'failed');
  assert.equal(r.source, 'transcript');
  assert.equal(r.lastAssistantText, `Subagent 'generalist' failed. Error: {"error":{"code":500,"message":"${why}","status":"INTERNAL"}}`);
  const plain = b.run('result', ['--name', 'pf', '--child', failed.id]);
  assert.equal(plain.code, 0, plain.stderr);
  assert.ok(plain.stdout.includes(`"message":"${why}"`), plain.stdout);

  // Run 2 of the session (one chat file holds both runs' calls): its child succeeds and stays done.
  const ok = uniq('childfine');
  assertOk(b.run('resume-subagent', ['--name', 'pf', '--prompt', `TASK:look:REPLY:${ok}`]), 'resume');
  const a2 = await waitDone(b, 'pf', t);
  assert.equal(a2.outcome, 'succeeded', `${a2.error} ${stderrTail(b.registry, 'pf', 2)}`);
  assert.deepEqual(
    a2.children.map((c: any) => [c.status, c.statusSource, c.error ?? null]),
    [['done', 'stream', null]],
  );
  assert.equal(assertOk(b.run('result', ['--name', 'pf', '--child', a2.children[0].id, '--json']), 'result --child 2').lastAssistantText, ok);
  const again = assertOk(b.run('result', ['--name', 'pf', '--child', failed.id, '--json']), 'result --child of run 1');
  assert.deepEqual([again.run, again.childStatus], [1, 'failed']);
});

test('while a sub-agent runs, result --child reads what its own chat holds so far', async (t) => {
  if (!requireCli(t, 'gemini')) return;
  const b = await box(t, 'childlive');
  const marker = uniq('gmchildsleep');
  assertOk(
    b.run('start-subagent', ['--name', 'live', '--cli', 'gemini', '--cwd', b.project, '--prompt', `TASK:slow:TOOL:Bash:sleep 300; echo ${marker}`]),
    'start',
  );
  await untilInRun("the child's shell tool running", runDirPath(b.registry, 'live'), () => pidsWithCmdline(marker).length > 0);
  await until('the child in the record', () => recordOf(b.registry, 'live').children.length > 0);
  const rec = recordOf(b.registry, 'live');
  assert.deepEqual(
    rec.children.map((c: any) => [c.status, c.statusSource]),
    [['running', 'stream']],
  );
  const r = assertOk(b.run('result', ['--name', 'live', '--child', rec.children[0].id, '--json']), 'result --child while it runs');
  assert.equal(r.childStatus, 'running');
  assert.equal(r.source, 'transcript', "the child's own chat, found by its task");
  const sc = assertOk(b.run('search', ['--name', 'live', '--child', rec.children[0].id, '--pattern', marker]), 'search --child while it runs');
  assert.deepEqual(
    sc.matches.map((m: any) => m.role),
    ['user'],
    'its prompt (its shell call is recorded when it ends)',
  );
  assertOk(b.run('cancel', ['--name', 'live']), 'cancel');
  const a = await waitDone(b, 'live', t);
  assert.equal(a.outcome, 'cancelled');
  assert.deepEqual(
    a.children.map((c: any) => c.status),
    ['cancelled'],
  );
});

test('a resume a minute or more after the session’s chat was made leaves no empty second chat: the session survives another session’s start', async (t) => {
  if (!requireCli(t, 'gemini')) return;
  const b = await box(t, 'tidy');
  const [first, second, third] = [uniq('tidyfirst'), uniq('tidysecond'), uniq('tidythird')];
  assertOk(b.run('start-subagent', ['--name', 'keep', '--cli', 'gemini', '--cwd', b.project, '--prompt', `REPLY:${first}`]), 'start');
  const one = await waitDone(b, 'keep', t);
  assert.equal(one.outcome, 'succeeded', one.error);
  // As when the resume comes a minute or more later: the CLI's own fresh chat of the session (made before
  // it loads the session's) then gets a name of its own, not the session's file.
  const tmp = join(b.env.HOME!, '.gemini', 'tmp');
  /** The session's chat files, by path. */
  const chats = (): string[] =>
    readdirSync(tmp).flatMap((p) => {
      const dir = join(tmp, p, 'chats');
      return existsSync(dir)
        ? readdirSync(dir)
            .filter((n) => n.endsWith(`-${one.sessionId.slice(0, 8)}.jsonl`))
            .map((n) => join(dir, n))
        : [];
    });
  const [chat] = chats();
  assert.ok(chat, 'run 1 left its chat');
  const kept = join(chat, '..', `session-2000-01-01T00-00-${one.sessionId.slice(0, 8)}.jsonl`);
  renameSync(chat, kept);
  assertOk(b.run('resume-subagent', ['--name', 'keep', '--prompt', `REPLY:${second}`]), 'resume');
  assert.equal((await waitDone(b, 'keep', t)).outcome, 'succeeded');
  assert.deepEqual(chats(), [kept], 'the session’s chat alone: no empty second one');
  // Another session's start runs the CLI's clean-up (an empty chat is deleted with every file of its short id).
  assertOk(b.run('start-subagent', ['--name', 'other', '--cli', 'gemini', '--cwd', b.project, '--prompt', 'REPLY:another session']), 'start other');
  assert.equal((await waitDone(b, 'other', t)).outcome, 'succeeded');
  assertOk(b.run('resume-subagent', ['--name', 'keep', '--prompt', `REPLY:${third}`]), 'resume again');
  const three = await waitDone(b, 'keep', t);
  assert.equal(three.outcome, 'succeeded', `${three.error} ${stderrTail(b.registry, 'keep', 3)}`);
  const request = requestsWith(await server(), third)[0];
  assert.ok(request && JSON.stringify(request.body).includes(first), 'the session’s whole conversation reached the model');
});
