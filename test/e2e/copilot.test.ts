// Every verb through the real, pinned GitHub Copilot CLI (test/.clis, 1.0.102) in its offline
// bring-your-own-key mode against the fake chat-completions server (test/fakes/openai-chat.ts) on
// 127.0.0.1. Each test has its own sandbox: registry, HOME and COPILOT_HOME (so its own sessions), and a
// marker in the environment of every process it starts, by which `after` ends leftovers (by pid). The
// CLI's package is unpacked once into a shared cache (COPILOT_PKG_CACHE_HOME), not once per HOME.
//
// Copilot retries a 5xx or a 429 five times (1 s apart with the fake's `retry-after-ms: 0`, ~16 s with
// its own back-off) and no setting shortens it: an HTTP 500 costs ~6 s here.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startOpenAIChat } from '../fakes/openai-chat.js';
import { requireCli } from '../fakes/env.js';
import type { FakeRequest } from '../fakes/script.js';
import { assertError, assertOk } from '../support/run.js';
import { until } from '../support/wait.js';
import { pidsWithCmdline, pidsWithEnv } from '../support/procs.js';
import { readJson, recordOf, runDirPath, stderrTail } from '../support/registry.js';
import { cliBox, fileServer, requestsWith, uniq, waitDone, type CliBox, bigPromptLines, startBig, startLongTool, resumeAfterCancel } from '../fakes/world.js';

const server = fileServer(startOpenAIChat);

/** A box whose runs work in a project directory, with `copilotHome` its Copilot store. */
type CopilotBox = CliBox & { copilotHome: string };

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/**
 * The usage a run must record for `requests` (there must be `count`): the token counts the fake reported
 * for them, summed, in our shape (no cache: the fake reports none; no cost: BYOK has none).
 */
function usageReported(requests: FakeRequest[], count: number) {
  assert.equal(requests.length, count, `the run's model requests: ${requests.map((r) => r.conversation?.lastUserText).join(' | ')}`);
  const input = requests.reduce((n, r) => n + r.reportedUsage!.promptTokens, 0);
  const output = requests.reduce((n, r) => n + r.reportedUsage!.completionTokens, 0);
  return { inputTokens: input, outputTokens: output, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0, totalTokens: input + output, costUsd: null };
}

/** A sandbox whose every process runs Copilot against the fake, in its own HOME and COPILOT_HOME. */
async function box(t: { after(fn: () => void | Promise<void>): void }, label: string): Promise<CopilotBox> {
  // Nothing of the caller's own Copilot setup or GitHub tokens may leak in.
  const b = cliBox(t, 'copilot', `e2e-copilot-${label}`, (await server()).url, { clear: /^(COPILOT_|GH_TOKEN$|GITHUB_TOKEN$)/ }) as CopilotBox;
  b.copilotHome = b.env.COPILOT_HOME!;
  return b;
}

test('start → done with our session id → result; a tool call; resume continues the same session; search sees both runs; --model and --variant reach the model', async (t) => {
  if (!requireCli(t, 'copilot')) return;
  const b = await box(t, 'resume');
  const s = await server();
  const one = uniq('alpha');
  const two = uniq('beta');

  const started = assertOk(
    b.run('start-subagent', [
      '--name',
      'cp',
      '--cli',
      'copilot',
      '--cwd',
      b.project,
      '--model',
      'other-model',
      '--variant',
      'high',
      '--prompt',
      `TOOL:Bash:echo ${one}`,
    ]),
    'start',
  );
  assert.equal(started.cli, 'copilot');
  assert.match(started.sessionId, UUID, 'we choose the session id, so it is known at once');
  const a1 = await waitDone(b, 'cp', t);
  assert.equal(a1.outcome, 'succeeded', `${a1.error} ${stderrTail(b.registry, 'cp')}`);
  assert.equal(a1.exitCode, 0);
  assert.equal(a1.sessionId, started.sessionId);
  assert.equal(a1.toolUses, 1);
  assert.deepEqual(a1.usage, usageReported(requestsWith(s, one), 2), "run 1's usage: what the fake reported for its two requests, from Copilot's store");
  assert.deepEqual(a1.children, []);
  // The session is Copilot's own, under the id we gave it, and its stream's result line says so too.
  const events = readFileSync(join(runDirPath(b.registry, 'cp'), 'events.log'), 'utf8');
  assert.ok(events.includes(`"sessionId":"${started.sessionId}"`), 'the result line names our session id');
  assert.ok(readFileSync(join(b.copilotHome, 'session-state', started.sessionId, 'events.jsonl'), 'utf8').includes(one));

  const r1 = assertOk(b.run('result', ['--name', 'cp', '--json']), 'result 1');
  assert.equal(r1.lastAssistantText, `done: ${one}`, 'the fake answers "done: <first line of the tool output>"');
  assert.equal(b.run('result', ['--name', 'cp']).stdout.trim(), `done: ${one}`);
  const first = requestsWith(s, one)[0];
  assert.ok(first, 'the fake received the first prompt');
  assert.equal(first.conversation?.model, 'other-model', '--model');
  assert.equal((first.body as any).reasoning_effort, 'high', '--variant is --reasoning-effort');
  const tools = assertOk(b.run('search', ['--name', 'cp', '--pattern', one, '--role', 'tool']), 'search tool');
  assert.ok(tools.matches.length >= 1, JSON.stringify(tools));
  assert.match(tools.matches[0].snippet, new RegExp(`bash: echo ${one}`));

  const resumed = assertOk(b.run('resume-subagent', ['--name', 'cp', '--prompt', `REPLY:${two}`]), 'resume');
  assert.equal(resumed.run, 2);
  assert.equal(resumed.sessionId, started.sessionId);
  const a2 = await waitDone(b, 'cp', t);
  assert.equal(a2.outcome, 'succeeded', `${a2.error} ${stderrTail(b.registry, 'cp', 2)}`);
  assert.equal(a2.sessionId, started.sessionId, 'the resume stays in the same Copilot session');
  // The session's log holds both runs' usage records: run 2 counts its own request only.
  assert.deepEqual(a2.usage, usageReported(requestsWith(s, two), 1), "run 2's usage: its own request, not run 1's");
  assert.deepEqual(recordOf(b.registry, 'cp', 1).usage, a1.usage, "run 1's record keeps its own");
  assert.equal(assertOk(b.run('result', ['--name', 'cp', '--json']), 'result 2').lastAssistantText, two);
  assert.equal(assertOk(b.run('result', ['--name', 'cp', '--json', '--run', '1']), 'result run 1').lastAssistantText, `done: ${one}`);
  // The resumed request carried the first turn: its prompt, its tool call and its answer.
  const second = requestsWith(s, two)[0];
  assert.ok(second, 'the fake received the resume prompt');
  const history = JSON.stringify(second.body);
  for (const earlier of [`TOOL:Bash:echo ${one}`, `done: ${one}`]) assert.ok(history.includes(earlier), `the earlier turn was sent again: ${earlier}`);
  assert.equal(second.conversation?.model, 'other-model', 'run 2 keeps the model of run 1');

  const both = assertOk(b.run('search', ['--name', 'cp', '--pattern', `${one}|${two}`]), 'search both');
  assert.deepEqual([...new Set(both.matches.map((m: any) => m.run))].sort(), [1, 2], JSON.stringify(both.matches));
});

test('--agent runs a custom agent of the store, on start and again on resume; --file is E_ARG_UNSUPPORTED before anything is recorded', async (t) => {
  if (!requireCli(t, 'copilot')) return;
  const b = await box(t, 'agent');
  const s = await server();
  const marker = uniq('REVIEWER-AGENT-INSTRUCTIONS');
  mkdirSync(join(b.copilotHome, 'agents'), { recursive: true });
  writeFileSync(join(b.copilotHome, 'agents', 'reviewer.agent.md'), `---\nname: reviewer\ndescription: Reviews for the e2e test\n---\n\n${marker}\n`);
  const words = [uniq('agent-one'), uniq('agent-two')];
  assertOk(b.run('start-subagent', ['--name', 'ag', '--cli', 'copilot', '--cwd', b.project, '--agent', 'reviewer', '--prompt', `REPLY:${words[0]}`]), 'start');
  const a1 = await waitDone(b, 'ag', t);
  assert.equal(a1.outcome, 'succeeded', `${a1.error} ${stderrTail(b.registry, 'ag')}`);
  assertOk(b.run('resume-subagent', ['--name', 'ag', '--prompt', `REPLY:${words[1]}`]), 'resume');
  const a2 = await waitDone(b, 'ag', t);
  assert.equal(a2.outcome, 'succeeded', `${a2.error} ${stderrTail(b.registry, 'ag', 2)}`);
  for (const w of words) {
    const req = requestsWith(s, w)[0];
    assert.ok(req && JSON.stringify(req.body).includes(marker), `the custom agent's instructions reached the model (${w})`);
  }

  const file = join(b.dir, 'notes.txt');
  writeFileSync(file, 'x\n');
  const e = assertError(
    b.run('start-subagent', ['--name', 'nofile', '--cli', 'copilot', '--cwd', b.project, '--file', file, '--prompt', 'REPLY:x']),
    'E_ARG_UNSUPPORTED',
  );
  assert.equal(e.details.cli, 'copilot');
  assertError(b.run('result', ['--name', 'nofile', '--json']), 'E_NAME_NOT_FOUND');
});

test("API errors are outcome failed with Copilot's own message: HTTP 500 after its retries, HTTP 401; a resume of a session Copilot no longer has fails with its stderr", async (t) => {
  if (!requireCli(t, 'copilot')) return;
  const b = await box(t, 'errors');
  assertOk(
    b.run('start-subagent', ['--name', 'e500', '--cli', 'copilot', '--cwd', b.project, '--prompt', 'ERROR:500:fake upstream failure for the e2e test']),
    'start e500',
  );
  assertOk(
    b.run('start-subagent', ['--name', 'e401', '--cli', 'copilot', '--cwd', b.project, '--prompt', 'ERROR:401:fake bad key for the e2e test']),
    'start e401',
  );
  assertOk(b.run('start-subagent', ['--name', 'gone', '--cli', 'copilot', '--cwd', b.project, '--prompt', 'REPLY:here today']), 'start gone');

  const f = await waitDone(b, 'e500', t);
  assert.equal(f.outcome, 'failed');
  assert.equal(f.exitCode, 1);
  assert.match(f.error, /^Failed to get response from the AI model; retried 5 times .*Last error: 500 fake upstream failure for the e2e test$/);
  const tries = requestsWith(await server(), 'ERROR:500:fake upstream failure');
  t.diagnostic(`HTTP 500: ${tries.length} requests in ${tries.at(-1)!.receivedAt - tries[0]!.receivedAt} ms`);
  assert.equal(tries.length, 6, 'one request and five retries');

  const u = await waitDone(b, 'e401', t);
  assert.equal(u.outcome, 'failed');
  assert.equal(u.exitCode, 1);
  assert.match(u.error, /^Authentication failed with provider at http:\/\/127\.0\.0\.1:\d+\/v1 \(HTTP 401\)\. Check your COPILOT_PROVIDER_API_KEY/);
  assert.equal(assertOk(b.run('result', ['--name', 'e401', '--json']), 'result e401').lastAssistantText, null);

  // A session id Copilot does not know: it must fail (exit 1, its message on stderr), never start a new session.
  const g = await waitDone(b, 'gone', t);
  assert.equal(g.outcome, 'succeeded', `${g.error} ${stderrTail(b.registry, 'gone')}`);
  rmSync(join(b.copilotHome, 'session-state', g.sessionId), { recursive: true, force: true });
  assertOk(b.run('resume-subagent', ['--name', 'gone', '--prompt', 'REPLY:is anyone there']), 'resume gone');
  const g2 = await waitDone(b, 'gone', t);
  assert.equal(g2.outcome, 'failed');
  assert.equal(g2.exitCode, 1);
  assert.equal(g2.error, `copilot exited with status 1; stderr: Error: No session, task, or name matched '${g.sessionId}'.`);
  assert.equal(requestsWith(await server(), 'is anyone there').length, 0, 'no new session was started to answer it');
});

test('not signed in (no GitHub token, no provider key): failed with reason auth, with the line Copilot printed', async (t) => {
  if (!requireCli(t, 'copilot')) return;
  const b = await box(t, 'noauth');
  // The box's bring-your-own-key setup taken away: Copilot then has nothing to sign in with.
  const unset = { COPILOT_OFFLINE: undefined, COPILOT_PROVIDER_BASE_URL: undefined, COPILOT_PROVIDER_API_KEY: undefined };
  assertOk(b.run('start-subagent', ['--name', 'noauth', '--cli', 'copilot', '--cwd', b.project, '--prompt', 'REPLY:never asked'], { env: unset }), 'start');
  const a = await waitDone(b, 'noauth', t);
  assert.equal(a.outcome, 'failed', JSON.stringify(a));
  assert.equal(a.exitCode, 1);
  assert.equal(a.reason, 'auth');
  assert.equal(a.error, 'copilot exited with status 1; stderr: Error: No authentication information found.');
  assert.equal(requestsWith(await server(), 'REPLY:never asked').length, 0, 'no model request');
});

test('cancel during a long bash tool leaves no process of the run; the cancelled session resumes', async (t) => {
  if (!requireCli(t, 'copilot')) return;
  const b = await box(t, 'cancel');
  const marker = uniq('cp-cancel-marker');
  const rec = await startLongTool(b, 'copilot', marker, 'Bash', 'the bash tool running the marker command');
  const runMarker = `SUBAGENT_RUN_ID=${rec.runId}`;
  // The npm loader, the native binary it runs, and the tool's shell (in a session of its own).
  assert.ok(pidsWithEnv(runMarker).length >= 3, `the loader, copilot and its tool carry the run marker: ${pidsWithEnv(runMarker).length}`);

  const t0 = Date.now();
  const c = assertOk(b.run('cancel', ['--name', 'long']), 'cancel');
  t.diagnostic(`cancel returned after ${Date.now() - t0} ms`);
  assert.equal(c.signalSent, 'TERM', "SIGTERM to every process: Copilot's loader passes no signal on");
  assert.equal(c.previousStatus, 'running');
  assert.deepEqual(c.survivors, []);
  const a = await waitDone(b, 'long', t);
  assert.equal(a.outcome, 'cancelled');
  assert.equal(a.error, 'cancelled with SIGTERM');
  assert.equal(pidsWithCmdline(marker).length, 0, 'the tool is gone');
  assert.equal(pidsWithEnv(runMarker).length, 0, 'no process carries the run marker');
  const aborted = readFileSync(join(runDirPath(b.registry, 'long'), 'events.log'), 'utf8');
  // user_initiated or user_abort (both measured): the native binary got the signal itself and aborted its turn.
  assert.match(aborted, /"type":"abort","data":\{"reason":"user_[a-z]+"\}/, 'the turn was aborted');
  const search = assertOk(b.run('search', ['--name', 'long', '--pattern', marker, '--role', 'tool']), 'search');
  assert.equal(new Set(search.matches.map((m: any) => m.index)).size, 1, `the cut tool call is in the transcript, once: ${JSON.stringify(search.matches)}`);

  await resumeAfterCancel(b, a.sessionId, 'after-cancel', t);
  await until('no process of the run', () => pidsWithEnv(runMarker).length === 0);
});

test('a sub-agent (task tool) is listed in children by its agentId, and result --child reads its answer from the Copilot store', async (t) => {
  if (!requireCli(t, 'copilot')) return;
  const b = await box(t, 'child');
  const answer = uniq('child-answer');
  assertOk(b.run('start-subagent', ['--name', 'parent', '--cli', 'copilot', '--cwd', b.project, '--prompt', `TASK:look around:REPLY:${answer}`]), 'start');
  const a = await waitDone(b, 'parent', t);
  assert.equal(a.outcome, 'succeeded', `${a.error} ${stderrTail(b.registry, 'parent')}`);
  assert.equal(a.children.length, 1, JSON.stringify(a.children));
  const child = a.children[0];
  assert.match(child.id, UUID);
  assert.notEqual(child.id, a.sessionId);
  assert.equal(child.cli, 'copilot');
  assert.equal(child.description, 'look around');
  assert.equal(child.status, 'done');
  assert.equal(child.statusSource, 'stream');
  assert.ok(child.startedAt && child.finishedAt);
  assert.equal(a.toolUses, 1);
  // The run's usage counts its sub-agent's model calls too: the parent's two requests and the child's one.
  assert.deepEqual(a.usage, usageReported(requestsWith(await server(), answer), 3));
  assert.equal(assertOk(b.run('result', ['--name', 'parent', '--json']), 'result').lastAssistantText, `done: ${answer}`);

  const r = assertOk(b.run('result', ['--name', 'parent', '--child', child.id, '--json']), 'result --child');
  assert.equal(r.lastAssistantText, answer);
  assert.equal(r.source, 'transcript', "read from the session's events.jsonl in the run's own store");
  const sc = assertOk(b.run('search', ['--name', 'parent', '--child', child.id, '--pattern', 'REPLY:']), 'search --child');
  assert.ok(sc.matches.length >= 1 && sc.matches.every((m: any) => m.role === 'user'), JSON.stringify(sc));
  assert.ok(!sc.matches.some((m: any) => m.snippet.includes('TASK:')), 'the parent prompt is not the child transcript');
  for (const foreign of [a.sessionId, '00000000-0000-4000-8000-000000000000']) {
    const e = assertError(b.run('result', ['--name', 'parent', '--child', foreign, '--json']), 'E_CHILD_NOT_FOUND');
    assert.deepEqual(e.details.children, [child.id]);
  }
});

test('a 300 KB prompt reaches the model byte for byte (stdin, never argv)', async (t) => {
  if (!requireCli(t, 'copilot')) return;
  const b = await box(t, 'big');
  const tag = uniq('big-ok');
  const lines = bigPromptLines(tag);
  // Copilot trims the prompt's trailing white space before sending it: this one has none.
  const prompt = lines;
  const a = await startBig(b, ['--cli', 'copilot', '--cwd', b.project], prompt, t);
  assert.equal(assertOk(b.run('result', ['--name', 'big', '--json']), 'result').lastAssistantText, tag);
  const req = requestsWith(await server(), tag)[0];
  assert.ok(req, 'the fake received the prompt');
  const got = req.conversation!.lastUserText;
  const head = /^<current_datetime>[^<]*<\/current_datetime>\n\n/.exec(got)?.[0];
  assert.ok(head, 'Copilot puts the date before the prompt');
  assert.equal(Buffer.byteLength(got) - Buffer.byteLength(head), Buffer.byteLength(prompt), 'same size');
  assert.ok(got.slice(head.length) === prompt, 'same bytes');
  assert.equal(readJson(join(runDirPath(b.registry, 'big'), 'record.json')).sessionId, a.sessionId);
});
