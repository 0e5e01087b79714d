// Every verb through the real, pinned Gemini CLI (test/.clis, 0.61.0) against the fake Gemini API
// (test/fakes/google-genai.ts) on 127.0.0.1. Each test has its own sandbox: registry, HOME (so its own
// ~/.gemini: settings, policy, chats) and TMPDIR, and a marker in the environment of every process it
// starts, by which `after` ends leftovers (by pid).
//
// The fake runs in this process, so nothing that waits on a run may block the event loop: the waiting
// verbs go through runAsync (spawnSync would hold the fake's answers until the wait times out).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startGoogleGenAI } from '../fakes/google-genai.js';
import type { FakeRequest } from '../fakes/script.js';
import { requireCli } from '../fakes/env.js';
import { assertOk } from '../support/run.js';
import { until, untilInRun } from '../support/wait.js';
import { pidsWithCmdline, pidsWithEnv } from '../support/procs.js';
import { recordOf, runDirPath, stderrTail } from '../support/registry.js';
import type { Box } from '../support/box.js';
import { cliBox, fileServer, requestsWith, uniq, waitDone, type CliBox, bigPromptLines, startBig, startLongTool, resumeAfterCancel } from '../fakes/world.js';

const server = fileServer(startGoogleGenAI);

/** A sandbox whose every process runs the Gemini CLI against the fake, in its own HOME, and works in a project directory (the CLI files its sessions per project). */
async function box(t: { after(fn: () => void | Promise<void>): void }, label: string): Promise<CliBox> {
  return cliBox(t, 'gemini', `e2e-gemini-${label}`, (await server()).url, { env: { SUBAGENT_CANCEL_GRACE_MS: '3000' } });
}

/** The text parts of every content of a request, in order, as one string. */
function contentsText(r: FakeRequest): string {
  return JSON.stringify((r.body as any)?.contents ?? []);
}

/** The session id the CLI itself reported in its stream (`init`). */
function initSessionId(b: Box, name: string, run = 1): string | undefined {
  return readFileSync(join(runDirPath(b.registry, name, run), 'events.log'), 'utf8').match(/"type":"init"[^\n]*"session_id":"([^"]+)"/)?.[1];
}

test('start → done with the session id chosen before the run → result; resume continues the session; --model and -- args reach the CLI', async (t) => {
  if (!requireCli(t, 'gemini')) return;
  const b = await box(t, 'resume');
  const s = await server();
  const one = uniq('alpha');
  const two = uniq('beta');

  const started = assertOk(
    b.run('start-subagent', [
      '--name',
      'gm',
      '--cli',
      'gemini',
      '--cwd',
      b.project,
      '--model',
      'gemini-fake-pro',
      '--prompt',
      `TOOL:Bash:echo ${one}`,
      '--',
      '--approval-mode',
      'yolo',
    ]),
    'start',
  );
  assert.equal(started.cli, 'gemini');
  assert.equal(started.model, 'gemini-fake-pro');
  assert.match(started.sessionId, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/, 'chosen before the run, in the start line');
  const a1 = await waitDone(b, 'gm', t);
  assert.equal(a1.outcome, 'succeeded', `${a1.error} ${stderrTail(b.registry, 'gm')}`);
  assert.equal(a1.exitCode, 0);
  assert.equal(a1.sessionId, started.sessionId);
  assert.equal(initSessionId(b, 'gm'), started.sessionId, 'the CLI took the id we gave it');
  assert.equal(a1.toolUses, 1);
  assert.deepEqual(a1.children, []);
  assert.ok(a1.usage && a1.usage.inputTokens > 0 && a1.usage.outputTokens > 0, JSON.stringify(a1.usage));
  assert.equal(a1.usage.totalTokens, a1.usage.inputTokens + a1.usage.cacheReadTokens + a1.usage.outputTokens);
  assert.equal(a1.usage.reasoningTokens, 2 * 2, "the fake's 2 thought tokens per answer, 2 answers");
  assert.equal(a1.usage.costUsd, null, 'the Gemini CLI reports no cost');

  const r1 = assertOk(b.run('result', ['--name', 'gm', '--json']), 'result 1');
  assert.equal(r1.lastAssistantText, `done: ${one}`, 'the fake answers "done: <first line of the tool output>"');
  assert.equal(r1.sessionId, started.sessionId);
  const plain = b.run('result', ['--name', 'gm']);
  assert.equal(plain.code, 0);
  assert.equal(plain.stdout.trim(), `done: ${one}`);

  // What the fake saw: the model asked for, the run's cwd as the workspace, the -- args (yolo offers the
  // write tools a headless run does not have otherwise).
  const first = requestsWith(s, one)[0];
  assert.ok(first, 'the fake received the first prompt');
  assert.equal(first.conversation?.model, 'gemini-fake-pro');
  assert.match(first.url, /^\/v1beta\/models\/gemini-fake-pro:streamGenerateContent\?alt=sse$/);
  assert.ok(contentsText(first).includes(`Workspace Directories:**\\n  - ${b.project}\\n`), "the CLI worked in the run's cwd");
  assert.ok(first.conversation?.toolNames.includes('write_file'), '--approval-mode yolo reached the CLI');

  const tools = assertOk(b.run('search', ['--name', 'gm', '--pattern', one, '--role', 'tool']), 'search tool');
  assert.ok(tools.matches.length >= 1, JSON.stringify(tools));
  assert.match(tools.matches[0].snippet, new RegExp(`run_shell_command: echo ${one}`));

  const resumed = assertOk(b.run('resume-subagent', ['--name', 'gm', '--prompt', `REPLY:${two}`]), 'resume');
  assert.equal(resumed.mode, 'resume');
  assert.equal(resumed.run, 2);
  assert.equal(resumed.sessionId, started.sessionId);
  const a2 = await waitDone(b, 'gm', t);
  assert.equal(a2.outcome, 'succeeded', `${a2.error} ${stderrTail(b.registry, 'gm', 2)}`);
  assert.equal(a2.sessionId, started.sessionId, 'the resume stays in the same Gemini session');
  assert.equal(initSessionId(b, 'gm', 2), started.sessionId);
  assert.deepEqual(a2.extraArgs, ['--approval-mode', 'yolo'], 'run 2 keeps the arguments of run 1');
  assert.equal(assertOk(b.run('result', ['--name', 'gm', '--json']), 'result 2').lastAssistantText, two);
  assert.equal(assertOk(b.run('result', ['--name', 'gm', '--json', '--run', '1']), 'result run 1').lastAssistantText, `done: ${one}`);
  assert.ok(a2.usage.totalTokens > 0 && a2.usage.totalTokens < a1.usage.totalTokens, `run 2's own usage, not the session's: ${a2.usage.totalTokens}`);

  // The resume's request carried the first turn: its prompt, tool call and answer; and the -- args again.
  const second = requestsWith(s, two)[0];
  assert.ok(second, 'the fake received the resume prompt');
  const history = contentsText(second);
  assert.ok(history.includes(`TOOL:Bash:echo ${one}`), 'the earlier prompt was sent again');
  assert.ok(history.includes(`done: ${one}`), 'the earlier answer was sent again');
  assert.ok(history.includes('run_shell_command'), 'the earlier tool call was sent again');
  assert.equal(second.conversation?.model, 'gemini-fake-pro');
  assert.ok(second.conversation?.toolNames.includes('write_file'), '-- args are passed again on resume');

  const both = assertOk(b.run('search', ['--name', 'gm', '--pattern', `${one}|${two}`]), 'search both');
  assert.deepEqual([...new Set(both.matches.map((m: any) => m.run))].sort(), [1, 2], JSON.stringify(both.matches));
  const roles = new Set(both.matches.map((m: any) => m.role));
  for (const role of ['user', 'assistant', 'tool']) assert.ok(roles.has(role), `a ${role} match: ${JSON.stringify(both.matches)}`);

  // Flags the CLI has no equivalent for are refused before anything is recorded.
  const attached = join(b.dir, 'notes.txt');
  writeFileSync(attached, 'notes\n');
  for (const [flag, value] of [
    ['--agent', 'generalist'],
    ['--variant', 'high'],
    ['--file', attached],
  ] as const) {
    const e = b.run('start-subagent', ['--name', `no${flag.slice(2)}`, '--cli', 'gemini', '--cwd', b.project, '--prompt', 'x', flag, value]);
    assert.equal(e.code, 1, e.stdout);
    assert.equal(e.json?.code, 'E_ARG_UNSUPPORTED', `${flag}: ${e.stdout}`);
  }
});

test('API errors are failed with the CLI message: HTTP 500, 429 and 401, and an unknown resume id', async (t) => {
  if (!requireCli(t, 'gemini')) return;
  const b = await box(t, 'errors');
  const cases = [
    {
      name: 'e500',
      prompt: 'ERROR:500:fake upstream failure for the e2e test',
      code: 244,
      error: /^API Error: fake upstream failure for the e2e test \(HTTP 500 INTERNAL\)$/,
    },
    { name: 'e429', prompt: 'ERROR:429:fake quota exhausted', code: 173, error: /^API Error: fake quota exhausted\nPlease wait and try again later/ },
    { name: 'e401', prompt: 'ERROR:401:fake bad key', code: 145, error: /^API Error: fake bad key \(HTTP 401 UNAUTHENTICATED\)$/ },
  ];
  for (const c of cases) assertOk(b.run('start-subagent', ['--name', c.name, '--cli', 'gemini', '--cwd', b.project, '--prompt', c.prompt]), `start ${c.name}`);
  assertOk(b.run('start-subagent', ['--name', 'gone', '--cli', 'gemini', '--cwd', b.project, '--prompt', 'REPLY:first']), 'start gone');
  for (const c of cases) {
    const a = await waitDone(b, c.name, t);
    assert.equal(a.outcome, 'failed', c.name);
    assert.equal(a.exitCode, c.code, `${c.name}: the HTTP status mod 256`);
    assert.match(a.error, c.error, c.name);
    assert.ok(!a.error.includes('stderr:'), `${c.name}: the CLI's own verdict, nothing of stderr added`);
    assert.equal(a.sessionId, recordOf(b.registry, c.name).sessionId);
  }
  const e500 = requestsWith(await server(), 'ERROR:500:fake upstream failure for the e2e test');
  assert.equal(e500.length, 1, 'maxAttempts 1 in the test settings: no retry');

  // The session is gone from the CLI's store: the resume fails with the CLI's reason (exit 42, stderr).
  const g = await waitDone(b, 'gone', t);
  assert.equal(g.outcome, 'succeeded', `${g.error} ${stderrTail(b.registry, 'gone')}`);
  const chats = join(b.dir, '.gemini', 'tmp', 'project', 'chats');
  const file = readdirSync(chats).find((n) => n.endsWith(`-${g.sessionId.slice(0, 8)}.jsonl`));
  assert.ok(file, `the session's chat file in ${chats}`);
  rmSync(join(chats, file));
  assertOk(b.run('resume-subagent', ['--name', 'gone', '--prompt', 'REPLY:again']), 'resume gone');
  const r = await waitDone(b, 'gone', t);
  assert.equal(r.outcome, 'failed');
  assert.equal(r.exitCode, 42);
  assert.match(r.error, /^gemini exited with status 42 \(bad input: .*\) before it started the session; stderr: Error resuming session: /);
  assert.equal(r.sessionId, g.sessionId, 'the record keeps the session it tried to resume');
});

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

test('cancel during a long shell tool: SIGTERM to the whole tree, no process left, cancelled; the session resumes', async (t) => {
  if (!requireCli(t, 'gemini')) return;
  const b = await box(t, 'cancel');
  const marker = uniq('gmcancelmarker');
  // The marker sits in the command line of the tool's shell: `sleep 300; echo <marker>`.
  const rec = await startLongTool(b, 'gemini', marker, 'Bash', 'the shell tool running the marker command');
  const runMarker = `SUBAGENT_RUN_ID=${rec.runId}`;
  // No relaunching launcher: the agent is the CLI itself, the tool its descendant in a session of its own.
  assert.ok(readFileSync(`/proc/${rec.agentProcess.pid}/cmdline`, 'utf8').includes('gemini'), 'the agent is gemini');
  assert.ok(pidsWithEnv(runMarker).length >= 2, 'gemini and its tool carry the run marker');

  const t0 = Date.now();
  const c = assertOk(b.run('cancel', ['--name', 'long']), 'cancel');
  t.diagnostic(`cancel returned after ${Date.now() - t0} ms, ${c.processesSignalled} processes signalled`);
  assert.equal(c.signalSent, 'TERM', "SIGTERM is the Gemini adapter's graceful signal");
  assert.equal(c.previousStatus, 'running');
  assert.deepEqual(c.survivors, []);
  const a = await waitDone(b, 'long', t);
  assert.equal(a.outcome, 'cancelled');
  assert.equal(pidsWithCmdline(marker).length, 0, 'the shell tool (its own session) is gone');
  await until('no process carries the run marker', () => pidsWithEnv(runMarker).length === 0);
  const r = assertOk(b.run('result', ['--name', 'long', '--json']), 'result');
  assert.equal(r.lastAssistantText, null);

  // The cancelled session can be resumed.
  const later = await resumeAfterCancel(b, a.sessionId, 'aftercancel', t, 'result 2');
  assert.ok(contentsText(requestsWith(await server(), later)[0]!).includes(`sleep 300; echo ${marker}`), 'the cancelled turn is in the resumed history');
});

test('a sub-agent (invoke_agent) is a child; result --child and search --child read its own chat from the Gemini store', async (t) => {
  if (!requireCli(t, 'gemini')) return;
  const b = await box(t, 'child');
  const out = uniq('childout');
  assertOk(b.run('start-subagent', ['--name', 'parent', '--cli', 'gemini', '--cwd', b.project, '--prompt', `TASK:look around:TOOL:Bash:echo ${out}`]), 'start');
  const a = await waitDone(b, 'parent', t);
  assert.equal(a.outcome, 'succeeded', `${a.error} ${stderrTail(b.registry, 'parent')}`);
  assert.equal(a.children.length, 1, JSON.stringify(a.children));
  const child = a.children[0];
  assert.match(child.id, /^invoke_agent__invoke_agent_\d+_\d+$/, "the call's id: the stream has nothing else");
  assert.equal(child.cli, 'gemini');
  assert.equal(child.description, `generalist: TOOL:Bash:echo ${out}`);
  assert.equal(child.status, 'done');
  assert.equal(child.statusSource, 'stream');
  assert.ok(child.startedAt && child.finishedAt);
  assert.equal(a.toolUses, 1, "the child's calls are not in the parent's stream");
  assert.equal(assertOk(b.run('result', ['--name', 'parent', '--json']), 'result').lastAssistantText, `done: done: ${out}`);

  const r = assertOk(b.run('result', ['--name', 'parent', '--child', child.id, '--json']), 'result --child');
  assert.equal(r.lastAssistantText, `done: ${out}`, "the child's answer (its complete_task)");
  assert.equal(r.source, 'transcript', "read from the child's own chat file");
  // search --child reads the child's own transcript: its prompt and its shell call are there.
  const sc = assertOk(b.run('search', ['--name', 'parent', '--child', child.id, '--pattern', out]), 'search --child');
  const roles = new Set(sc.matches.map((m: any) => m.role));
  assert.ok(roles.has('user') && roles.has('tool') && roles.has('assistant'), JSON.stringify(sc));
  assert.ok(!sc.matches.some((m: any) => m.snippet.includes('TASK:')), "the parent's prompt is not the child's");
  // The child's requests came from its own prompt, with the shell tool offered (the policy applies).
  const childReqs = requestsWith(await server(), `TOOL:Bash:echo ${out}`).filter((q) => !q.conversation!.lastUserText.startsWith('TASK:'));
  assert.ok(childReqs.length >= 2 && childReqs[0]!.conversation!.toolNames.includes('complete_task'), 'the child asked the model itself');
  // Ids that are not this run's children.
  for (const foreign of [a.sessionId, 'invoke_agent__invoke_agent_0_0']) {
    const e = b.run('result', ['--name', 'parent', '--child', foreign, '--json']);
    assert.equal(e.code, 1, e.stdout);
    assert.equal(e.json?.code, 'E_CHILD_NOT_FOUND', e.stdout);
    assert.deepEqual(e.json.details.children, [child.id]);
  }
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

test('a 300 KB prompt reaches the model byte for byte (stdin, never argv)', async (t) => {
  if (!requireCli(t, 'gemini')) return;
  const b = await box(t, 'big');
  const tag = uniq('bigok');
  const lines = bigPromptLines(tag);
  const prompt = `${lines}\n`;
  await startBig(b, ['--cli', 'gemini', '--cwd', b.project], prompt, t);
  assert.equal(assertOk(b.run('result', ['--name', 'big', '--json']), 'result').lastAssistantText, tag);
  const req = requestsWith(await server(), tag)[0];
  assert.ok(req, 'the fake received the prompt');
  const got = req.conversation!.lastUserText;
  assert.equal(Buffer.byteLength(got), Buffer.byteLength(prompt), 'same size');
  assert.ok(got === prompt, 'same bytes');
});
