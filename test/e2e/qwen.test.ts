// test-order: first — among the three longest files (real agent CLIs; qwen): started before all others (scripts/test.sh).
// Every verb through the real, pinned Qwen Code (test/.clis, 0.24.4) against the fake chat-completions
// server (test/fakes/openai-chat.ts, Qwen's flavour) on 127.0.0.1. Each test has its own sandbox:
// registry, HOME (so its own ~/.qwen: settings and sessions) and a project directory, and a marker in
// the environment of every process it starts, by which `after` ends leftovers (by pid).
//
// The fake runs in this process, so nothing that waits on a run may block the event loop: the waiting
// verbs go through runAsync (spawnSync would hold the fake's answers until the wait times out).
//
// Qwen retries a 5xx 6 times with back-off (7 requests, ~70–90 s) and nothing shortens that (its
// settings' maxRetries is its OpenAI client's, not this loop); a 429 honours `retry-after-ms`. The 500
// run is started first and checked last, so the other failures are checked while it retries.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startOpenAIChat } from '../fakes/openai-chat.js';
import { requireCli } from '../fakes/env.js';
import { assertOk } from '../support/run.js';
import { until, untilInRun } from '../support/wait.js';
import { pidsWithCmdline, pidsWithEnv } from '../support/procs.js';
import { recordOf, runDirPath, stderrTail } from '../support/registry.js';
import { cliBox, fileServer, items, requestsWith, uniq, userTexts, waitDone, type CliBox, grownText, startBig } from '../fakes/world.js';

/** A prompt holding this gets an HTTP 429 that asks for a 1 ms wait (Qwen's own retries then take no time). */
const RATE_LIMITED = 'RATELIMITED-BY-THE-FAKE';

const server = fileServer(() =>
  startOpenAIChat({
    handler: (req) =>
      (req.conversation?.lastUserText ?? '').includes(RATE_LIMITED) ? { type: 'error', status: 429, message: 'slow down', retryAfterMs: 1 } : undefined,
  }),
);

/** A sandbox whose every process runs Qwen against the fake, with its own HOME and ~/.qwen, and works in a project directory of its own (`--cwd`). */
async function box(t: { after(fn: () => void | Promise<void>): void }, label: string): Promise<CliBox> {
  return cliBox(t, 'qwen', `e2e-qwen-${label}`, (await server()).url, { env: { SUBAGENT_WAIT_TIMEOUT_SEC: '300', SUBAGENT_CANCEL_GRACE_MS: '5000' } });
}

/** Starts a run in the box's project; returns start's JSON. */
function start(b: CliBox, name: string, prompt: string, more: string[] = []): any {
  return assertOk(b.run('start-subagent', ['--name', name, '--cli', 'qwen', '--cwd', b.project, '--prompt', prompt, ...more]), `start ${name}`);
}

test('start → done with our session id → result; a tool call; resume continues the same session (the fake sees run 1) with its own usage; --model reaches the API', async (t) => {
  if (!requireCli(t, 'qwen')) return;
  const b = await box(t, 'resume');
  const s = await server();
  const one = uniq('alpha');
  const two = uniq('beta');

  const started = start(b, 'qw', `TOOL:Bash:echo ${one}`);
  assert.equal(started.cli, 'qwen');
  assert.equal(started.mode, 'new');
  assert.match(started.sessionId, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/, 'we choose the session id before launch');
  const a1 = await waitDone(b, 'qw');
  assert.equal(a1.outcome, 'succeeded', `${a1.error} ${stderrTail(b.registry, 'qw')}`);
  assert.equal(a1.exitCode, 0);
  assert.equal(a1.sessionId, started.sessionId);
  assert.equal(a1.toolUses, 1);
  assert.ok(a1.usage && a1.usage.inputTokens > 0 && a1.usage.outputTokens > 0, JSON.stringify(a1.usage));
  assert.equal(a1.usage.costUsd, null, 'Qwen reports no cost');
  assert.deepEqual(a1.children, []);
  // Qwen filed the session under the id we gave it.
  const chats = join(b.dir, '.qwen', 'projects', b.project.replace(/[^A-Za-z0-9]/g, '-'), 'chats');
  assert.deepEqual(readdirSync(chats), [`${started.sessionId}.jsonl`]);

  const r1 = assertOk(b.run('result', ['--name', 'qw', '--json']), 'result 1');
  assert.equal(r1.lastAssistantText, `done: ${one}`, 'the fake answers "done: <first line of the tool output>"');
  assert.equal(b.run('result', ['--name', 'qw']).stdout.trim(), `done: ${one}`);
  const tools = assertOk(b.run('search', ['--name', 'qw', '--pattern', one, '--role', 'tool']), 'search tool');
  assert.deepEqual(items(tools), ['1:1'], JSON.stringify(tools));
  assert.match(tools.matches[0].snippet, new RegExp(`run_shell_command: echo ${one}`));

  const resumed = assertOk(b.run('resume-subagent', ['--name', 'qw', '--model', 'other-model', '--prompt', `REPLY:${two}`]), 'resume');
  assert.equal(resumed.mode, 'resume');
  assert.equal(resumed.sessionId, started.sessionId);
  const a2 = await waitDone(b, 'qw');
  assert.equal(a2.outcome, 'succeeded', `${a2.error} ${stderrTail(b.registry, 'qw', 2)}`);
  assert.equal(a2.run, 2);
  assert.equal(a2.sessionId, started.sessionId);
  const second = requestsWith(s, two, { main: true })[0];
  assert.ok(second, 'the fake received the second prompt');
  assert.equal(second.conversation?.model, 'other-model', '--model becomes --model');
  const history = JSON.stringify((second.body as any).messages);
  assert.ok(history.includes(`TOOL:Bash:echo ${one}`), 'the earlier prompt is in the resumed conversation');
  assert.ok(history.includes(`done: ${one}`), 'the earlier answer is in the resumed conversation');
  // Qwen's result counts the whole session; the record keeps this run's: its one request.
  assert.equal(requestsWith(s, two, { main: true }).length, 1);
  assert.ok(
    a2.usage.inputTokens > 0 && a2.usage.inputTokens < a1.usage.inputTokens,
    `run 2 (${a2.usage.inputTokens} in) is one request, run 1 (${a1.usage.inputTokens}) two`,
  );
  assert.equal(assertOk(b.run('result', ['--name', 'qw', '--json']), 'result 2').lastAssistantText, two);
  assert.equal(assertOk(b.run('result', ['--name', 'qw', '--run', '1', '--json']), 'result run 1').lastAssistantText, `done: ${one}`);
  const both = assertOk(b.run('search', ['--name', 'qw', '--pattern', `${one}|${two}`]), 'search both');
  assert.deepEqual([...new Set(both.matches.map((m: any) => m.run))].sort(), [1, 2], JSON.stringify(both));
});

test('a 300 KB prompt arrives whole and byte-exact at the model (Qwen appends its "\\n\\n" separator)', async (t) => {
  if (!requireCli(t, 'qwen')) return;
  const b = await box(t, 'big');
  const s = await server();
  const tag = uniq('bigok');
  const prompt = grownText(`REPLY:${tag}\n`, (i) => `line ${i}: ünïcödé ☃ "quotes" \\ back\\slash \t tab -- not-a-flag $HOME \`x\`\n`, 300 * 1024);
  assert.ok(Buffer.byteLength(prompt) > 300 * 1024);
  await startBig(b, ['--cli', 'qwen', '--cwd', b.project], prompt);
  const req = requestsWith(s, tag, { main: true })[0];
  assert.ok(req, 'the fake received the prompt');
  const texts = userTexts(req);
  assert.equal(texts.at(-1), `${prompt}\n\n`, 'the last user text is the prompt, byte for byte, and the separator Qwen puts after stdin');
  assert.equal(assertOk(b.run('result', ['--name', 'big', '--json']), 'result').lastAssistantText, tag);
});

test('cancel during a long tool: SIGTERM reaches the inner qwen process, no process of the run is left, cancelled is recorded', async (t) => {
  if (!requireCli(t, 'qwen')) return;
  const b = await box(t, 'cancel');
  const marker = uniq('loopmark');
  // Qwen refuses a command that starts with a long `sleep`; a loop of short ones is a long tool it runs.
  const started = start(b, 'slow', `TOOL:Bash:for i in $(seq 600); do sleep 1; done; echo ${marker}`);
  const runId = recordOf(b.registry, 'slow').runId as string;
  await untilInRun('the shell tool to be running', runDirPath(b.registry, 'slow'), () => pidsWithCmdline(marker).length > 0);
  const running = assertOk(await b.runAsync('status', ['--name', 'slow']), 'status').agents[0];
  assert.equal(running.status, 'running');
  assert.equal(running.sessionId, started.sessionId);
  // qwen → node cli.js → node cli.js, and the tool: four processes at least, each with the run's marker.
  assert.ok(pidsWithEnv(`SUBAGENT_RUN_ID=${runId}`).length >= 4, 'the launcher, its relaunch, the inner process and the tool carry the run marker');
  const cancelAt = Date.now();
  const c = assertOk(await b.runAsync('cancel', ['--name', 'slow']), 'cancel');
  assert.equal(c.signalSent, 'TERM', "SIGTERM to every process of the run is Qwen's graceful stop");
  assert.equal(c.previousStatus, 'running');
  assert.deepEqual(c.survivors, []);
  const a = await waitDone(b, 'slow');
  assert.equal(a.outcome, 'cancelled');
  t.diagnostic(`cancel → done in ${Date.now() - cancelAt} ms (exit ${a.exitCode}, signal ${a.signal})`);
  await until('no process of the run', () => pidsWithEnv(`SUBAGENT_RUN_ID=${runId}`).length === 0 && pidsWithCmdline(marker).length === 0);
  // The transcript keeps the interrupted call (Qwen writes "[Operation Cancelled]" as its result).
  await until('the cancelled tool result in the log', () =>
    readFileSync(join(runDirPath(b.registry, 'slow'), 'events.log'), 'utf8').includes('[Operation Cancelled]'),
  );
  const found = assertOk(b.run('search', ['--name', 'slow', '--pattern', marker, '--role', 'tool']), 'search');
  assert.equal(items(found).length, 1, JSON.stringify(found));
  assert.match(found.matches[0].snippet, /run_shell_command/);
});

test('cancel while a background child runs its tool: the child is cancelled (never done), no process of the run is left', async (t) => {
  if (!requireCli(t, 'qwen')) return;
  const b = await box(t, 'cancel-child');
  const marker = uniq('childloop');
  start(b, 'bg', `TASK:slow child:TOOL:Bash:for i in $(seq 600); do sleep 1; done; echo ${marker}`);
  const runId = recordOf(b.registry, 'bg').runId as string;
  await untilInRun("the child's shell tool to be running", runDirPath(b.registry, 'bg'), () => pidsWithCmdline(marker).length > 0);
  const running = await until('the child listed running', async () => {
    const a = assertOk(await b.runAsync('status', ['--name', 'bg']), 'status').agents[0];
    return a.children.length === 1 && a.children[0].status === 'running' ? a : null;
  });
  assert.match(running.children[0].id, /^general-purpose-call_/);
  const c = assertOk(await b.runAsync('cancel', ['--name', 'bg']), 'cancel');
  assert.deepEqual(c.survivors, []);
  const a = await waitDone(b, 'bg');
  assert.equal(a.outcome, 'cancelled');
  assert.deepEqual(
    a.children.map((k: any) => [k.id, k.status]),
    [[running.children[0].id, 'cancelled']],
  );
  await until('no process of the run', () => pidsWithEnv(`SUBAGENT_RUN_ID=${runId}`).length === 0 && pidsWithCmdline(marker).length === 0);
});

test("failures are recorded failed with Qwen's own words: HTTP 500 (after its retries), 401, 429, an unknown resume id; unsupported flags are refused", async (t) => {
  if (!requireCli(t, 'qwen')) return;
  const b = await box(t, 'errors');
  const s = await server();
  const why = uniq('boom');
  start(b, 'e500', `ERROR:500:${why}`);
  start(b, 'e401', `ERROR:401:${why}`);
  start(b, 'e429', `${RATE_LIMITED} ${why}`);
  start(b, 'gone', 'REPLY:first');

  for (const [name, want] of [
    ['e401', `[API Error: 401 ${why}]`],
    ['e429', '[API Error: 429 slow down]'],
  ] as const) {
    const a = await waitDone(b, name);
    assert.equal(a.outcome, 'failed', JSON.stringify(a));
    assert.equal(a.exitCode, 1);
    assert.ok(a.error.includes(want), a.error);
  }
  assert.equal(requestsWith(s, `${RATE_LIMITED} ${why}`, { main: true }).length, 7, 'a 429 is retried 6 times, here without waiting (retry-after-ms: 1)');

  // A session Qwen no longer has: the resume fails with its message (on stderr), nothing new is made.
  const g = await waitDone(b, 'gone');
  assert.equal(g.outcome, 'succeeded', `${g.error} ${stderrTail(b.registry, 'gone')}`);
  rmSync(join(b.dir, '.qwen', 'projects', b.project.replace(/[^A-Za-z0-9]/g, '-'), 'chats', `${g.sessionId}.jsonl`));
  assertOk(b.run('resume-subagent', ['--name', 'gone', '--prompt', 'REPLY:second']), 'resume');
  const g2 = await waitDone(b, 'gone');
  assert.equal(g2.outcome, 'failed');
  assert.equal(g2.exitCode, 1);
  assert.match(g2.error, new RegExp(`No saved session found with ID ${g.sessionId}`), g2.error);
  assert.equal(requestsWith(s, 'REPLY:second', { main: true }).length, 0, 'no model request');

  // --agent, --variant, --file have no Qwen flag: refused before anything is recorded.
  writeFileSync(join(b.dir, 'f.txt'), 'x');
  for (const flag of [
    ['--agent', 'reviewer'],
    ['--variant', 'high'],
    ['--file', join(b.dir, 'f.txt')],
  ]) {
    const refused = b.run('start-subagent', ['--name', 'refused', '--cli', 'qwen', ...flag, '--prompt', 'REPLY:x']);
    assert.equal(refused.code, 1, refused.stdout);
    assert.equal(refused.json?.code, 'E_ARG_UNSUPPORTED', `${flag[0]}: ${refused.stdout}`);
  }
  assert.throws(() => recordOf(b.registry, 'refused'));

  const a = await waitDone(b, 'e500');
  assert.equal(a.outcome, 'failed', JSON.stringify(a));
  assert.equal(a.exitCode, 1);
  assert.ok(a.error.includes(`[API Error: 500 ${why}]`), a.error);
  assert.equal(requestsWith(s, `ERROR:500:${why}`, { main: true }).length, 7, 'Qwen retries a 500 six times, whatever its settings say');
});

test('sub-agents: a background child (the default) and a foreground one are children; result --child reads their own answers from the store; search --child finds their words', async (t) => {
  if (!requireCli(t, 'qwen')) return;
  const b = await box(t, 'child');
  const s = await server();
  const word = uniq('childword');
  const toolWord = uniq('childtool');
  const fgWord = uniq('fgword');
  start(b, 'par', `TASK:sub job:TOOL:Bash:echo ${toolWord} && echo ${word}`);
  const fgCall = { description: 'fg job', prompt: `TOOL:Bash:echo ${fgWord}`, subagent_type: 'general-purpose', run_in_background: false };
  start(b, 'fg', `TOOL:agent:${JSON.stringify(fgCall)}`);

  const a = await waitDone(b, 'par');
  assert.equal(a.outcome, 'succeeded', `${a.error} ${stderrTail(b.registry, 'par')}`);
  assert.equal(a.children.length, 1, JSON.stringify(a.children));
  const child = a.children[0];
  assert.match(child.id, /^general-purpose-call_/, "the id is Qwen's task id, <subagent_type>-<tool_use_id>");
  assert.equal(child.cli, 'qwen');
  assert.equal(child.description, 'sub job');
  assert.equal(child.status, 'done');
  assert.equal(child.statusSource, 'stream');
  assert.ok(child.startedAt && child.finishedAt);
  assert.ok(
    s
      .modelRequests()
      .some((r) => r.conversation?.lastUserText.includes(`TOOL:Bash:echo ${toolWord}`) && /You are a general-purpose subagent/.test(r.conversation.system)),
    "the fake saw the child's own request",
  );
  const r = assertOk(b.run('result', ['--name', 'par', '--child', child.id, '--json']), 'result --child');
  assert.equal(r.child, child.id);
  assert.equal(r.lastAssistantText, `done: ${toolWord}`);
  assert.equal(r.source, 'transcript', 'read from projects/<project>/subagents/<session>/agent-<id>.jsonl');
  const parent = assertOk(b.run('result', ['--name', 'par', '--json']), 'result');
  assert.equal(parent.lastAssistantText, `done: done: ${toolWord}`, "the run's answer is the turn after the child reported");
  const sc = assertOk(b.run('search', ['--name', 'par', '--child', child.id, '--pattern', word]), 'search --child');
  assert.ok(sc.matches.length >= 1, JSON.stringify(sc));
  assert.equal(b.run('result', ['--name', 'par', '--child', 'anotherchild', '--json']).json?.code, 'E_CHILD_NOT_FOUND');

  const f = await waitDone(b, 'fg');
  assert.equal(f.outcome, 'succeeded', `${f.error} ${stderrTail(b.registry, 'fg')}`);
  assert.equal(f.children.length, 1, JSON.stringify(f.children));
  assert.equal(f.children[0].status, 'done');
  assert.equal(f.children[0].description, 'fg job');
  assert.equal(f.toolUses, 2, "the agent call and the child's shell call (a foreground child's calls are in the stream)");
  const rf = assertOk(b.run('result', ['--name', 'fg', '--child', f.children[0].id, '--json']), 'result --child fg');
  assert.equal(rf.lastAssistantText, `done: ${fgWord}`);
  assert.equal(assertOk(b.run('result', ['--name', 'fg', '--json']), 'result fg').lastAssistantText, `done: done: ${fgWord}`);
});
