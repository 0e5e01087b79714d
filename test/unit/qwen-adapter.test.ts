import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { qwen } from '../../lib/agents/qwen/index.js';
import { findChildTranscript, projectDirName, qwenRuntimeDir } from '../../lib/agents/qwen/store.js';
import { qwenAgentId } from '../../lib/agents/qwen/stream.js';
import { transcriptReader } from '../../lib/agents/qwen/transcript.js';
import type { Exit, LaunchInput, Message, StreamState, Verdict } from '../../lib/agents/types.js';
import type { Usage } from '../../lib/registry/record.js';
import { cancelledChildren, NO_CAPS } from '../../lib/registry/record.js';
import { ROOT } from '../support/paths.js';
import { answered, childRows, everyFixtureCovered, exited, failed, resumesByIdOnly, tools } from '../support/replay.js';

// Replays Qwen Code 0.24.4's captured streams (test/fixtures/agents/qwen/, rows in its README) through
// the adapter, with the exit status each real run had.
const FIX = join(ROOT, 'test', 'fixtures', 'agents', 'qwen');

interface Parsed {
  messages: Message[];
  state: StreamState;
  verdict(exit: Exit): Verdict;
}

/** Feeds a text through a new run line by line, as the supervisor does. */
function parseText(text: string, threadUsageBefore: Usage | null = null): Parsed {
  const messages: Message[] = [];
  const p = qwen.open({ onMessage: (m) => messages.push(m), threadUsageBefore });
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  for (const l of lines) p.line(l);
  p.end();
  return { messages, state: p.state, verdict: (exit) => p.verdict(exit) };
}

function parseFixture(name: string, threadUsageBefore: Usage | null = null): Parsed {
  return parseText(readFileSync(join(FIX, name), 'utf8'), threadUsageBefore);
}

function launchInput(over: Partial<LaunchInput> = {}): LaunchInput {
  return { mode: 'new', cwd: '/w', model: null, variant: null, agent: null, files: [], extraArgs: [], sessionId: null, caps: NO_CAPS, ...over };
}

function usage(input: number, output: number, cacheRead = 0): Usage {
  return {
    inputTokens: input,
    outputTokens: output,
    cacheReadTokens: cacheRead,
    cacheWriteTokens: 0,
    reasoningTokens: 0,
    totalTokens: input + output + cacheRead,
    costUsd: null,
  };
}

test('every fixture of the qwen CLI is covered by this file', () => {
  everyFixtureCovered(FIX, [
    'agent-background.ndjson',
    'agent-failed.ndjson',
    'agent-foreground.ndjson',
    'api-error-401.ndjson',
    'api-error-500.ndjson',
    'auth-missing.ndjson',
    'bash-tool.ndjson',
    'max-turns.ndjson',
    'permission-denied.ndjson',
    'plain-reply.ndjson',
    'rate-limit-429.ndjson',
    'rate-limit-retry-after.ndjson',
    'resume-1.ndjson',
    'resume-2.ndjson',
    'sigterm-agent-background.ndjson',
    'sigterm-agent-background-completed.ndjson',
    'sigterm-tool.ndjson',
    'store',
  ]);
});

test('launch: a new run with our session id, --model, extra args last, no prompt on argv', () => {
  const l = qwen.launch(launchInput({ sessionId: 'aaaaaaaa-1111-4111-8111-111111111111', model: 'qwen3-coder-plus', extraArgs: ['--approval-mode', 'yolo'] }));
  assert.equal(l.command, 'qwen');
  assert.deepEqual(l.args, [
    '--output-format',
    'stream-json',
    '--chat-recording',
    '--session-id',
    'aaaaaaaa-1111-4111-8111-111111111111',
    '--model',
    'qwen3-coder-plus',
    '--approval-mode',
    'yolo',
  ]);
  assert.deepEqual(l.env, {});
});

test('launch: a resume passes the explicit id with --resume (never --continue, never --session-id)', () => {
  const l = qwen.launch(launchInput({ mode: 'resume', sessionId: 'aaaaaaaa-1111-4111-8111-111111111111' }));
  assert.deepEqual(l.args, ['--output-format', 'stream-json', '--chat-recording', '--resume', 'aaaaaaaa-1111-4111-8111-111111111111']);
  resumesByIdOnly(l.args, () => qwen.launch(launchInput({ mode: 'resume', sessionId: null })));
});

test('plain-reply: session id, answer, usage without cost; stream_event lines are passed over', () => {
  const p = parseFixture('plain-reply.ndjson');
  answered(p, '0a1a0000-0000-4000-8000-000000000001', 'hello world');
  assert.deepEqual(p.state.usage, usage(15737, 3));
  assert.equal(p.state.skippedLines, 0);
  assert.equal(p.state.fatalError, null);
  assert.deepEqual(p.state.children, []);
  assert.deepEqual(p.verdict(exited(0)), { outcome: 'succeeded', error: null, reason: null });
});

test('streaming: the session id is known from the first line; usage is an estimate until the result', () => {
  const lines = readFileSync(join(FIX, 'bash-tool.ndjson'), 'utf8').split('\n').filter(Boolean);
  const p = qwen.open();
  p.line(lines[0]!);
  assert.equal(p.state.sessionId, '0b2b0000-0000-4000-8000-000000000002');
  for (const l of lines.slice(1, -1)) p.line(l);
  assert.equal(p.state.usage?.inputTokens, 15738 + 15860, "the assistant lines' per-request usage, summed");
  p.line(lines.at(-1)!);
  assert.deepEqual(p.state.usage, usage(31598, 32), "the result line's");
});

test('bash-tool: run_shell_command is a tool call summarised by its command, with its output', () => {
  const p = parseFixture('bash-tool.ndjson');
  assert.equal(p.state.toolUses, 1);
  const [t] = tools(p);
  assert.equal(t!.text, 'run_shell_command: echo hi-there');
  assert.deepEqual(t!.tool, { name: 'run_shell_command', input: 'echo hi-there', output: 'hi-there', status: 'completed' });
  assert.equal(p.state.lastAssistantText, 'done: hi-there');
  assert.deepEqual(p.verdict(exited(0)), { outcome: 'succeeded', error: null, reason: null });
});

test("resume-1 / resume-2: the same session; a result's usage counts the whole session, so run 2's is its total minus run 1's", () => {
  const one = parseFixture('resume-1.ndjson');
  const two = parseFixture('resume-2.ndjson', one.state.usage);
  assert.equal(one.state.sessionId, '12900000-0000-4000-8000-000000000009');
  assert.equal(two.state.sessionId, one.state.sessionId);
  assert.deepEqual(one.state.usage, usage(31598, 33));
  assert.deepEqual(two.state.usage, usage(47491 - 31598, 36 - 33), 'this run only: its one request (15893 in, 3 out)');
  assert.equal(two.state.lastAssistantText, 'second turn');
  // Read without the supervisor's context (result, search): the session's figure.
  assert.deepEqual(parseFixture('resume-2.ndjson').state.usage, usage(47491, 36));
  // A baseline that is not this session's past is ignored.
  assert.deepEqual(parseFixture('resume-2.ndjson', usage(99_999, 1)).state.usage, usage(47491, 36));
});

test('agent-background: task_started (fields under data) makes the child; its prompt carries its id; task_notification ends it; the answer is the turn after it', () => {
  const p = parseFixture('agent-background.ndjson');
  const id = 'general-purpose-call_fake_6845_6';
  assert.equal(p.state.children.length, 1);
  const c = p.state.children[0]!;
  assert.deepEqual(
    { id: c.id, cli: c.cli, description: c.description, status: c.status, statusSource: c.statusSource },
    {
      id,
      cli: 'qwen',
      description: 'sub job',
      status: 'done',
      statusSource: 'stream',
    },
  );
  assert.ok(c.startedAt && c.finishedAt);
  assert.deepEqual(
    p.messages.filter((m) => m.childId === id).map((m) => [m.role, m.text]),
    [['user', 'TOOL:Bash:echo childtool && echo childword']],
    "the child's own words are not in the stream (they are in the store)",
  );
  const [call] = tools(p);
  assert.equal(call!.tool!.name, 'agent');
  assert.equal(call!.tool!.input, 'sub job: TOOL:Bash:echo childtool && echo childword');
  assert.match(call!.tool!.output!, /^Background agent launched successfully/);
  assert.equal(p.state.lastAssistantText, 'done: done: childtool', "the parent's turn after the child reported");
  assert.equal(p.state.toolUses, 1, "the child's own tool calls are not in the stream");
  assert.deepEqual(p.state.usage, usage(78344, 90), "the child's requests included");
  assert.deepEqual(p.verdict(exited(0)), { outcome: 'succeeded', error: null, reason: null });
});

test("agent-foreground: no task_started; the child's lines carry its id from the first; the call's result is its answer", () => {
  const p = parseFixture('agent-foreground.ndjson');
  const id = 'general-purpose-call_fake_6845_15';
  assert.deepEqual(childRows(p.state), [[id, 'fg job', 'done', 'stream']]);
  assert.deepEqual(
    p.messages.filter((m) => m.childId === id).map((m) => [m.role, m.text]),
    [
      ['user', 'TOOL:Bash:echo fgtool'],
      ['tool', 'run_shell_command: echo fgtool'],
      ['assistant', 'done: fgtool'],
    ],
  );
  assert.equal(p.state.toolUses, 2, "the agent call and the child's shell call");
  assert.equal(p.state.lastAssistantText, 'done: done: fgtool');
});

test('agent-failed: a background child whose request failed is failed (task_notification status failed); the run succeeds', () => {
  const p = parseFixture('agent-failed.ndjson');
  assert.deepEqual(
    p.state.children.map((c) => [c.id, c.status, c.statusSource]),
    [['general-purpose-call_fake_6845_23', 'failed', 'stream']],
  );
  assert.deepEqual(p.verdict(exited(0)), { outcome: 'succeeded', error: null, reason: null });
});

test('sigterm-agent-background: a child the cancel killed is reported by Qwen itself (task_notification cancelled); no result line → failed', () => {
  const p = parseFixture('sigterm-agent-background.ndjson');
  assert.deepEqual(
    p.state.children.map((c) => [c.status, c.statusSource]),
    [['cancelled', 'stream']],
  );
  const v = p.verdict(exited(null, 'SIGTERM'));
  assert.equal(v.outcome, 'failed');
  assert.match(v.error!, /qwen was killed by SIGTERM before reporting a result/);
});

test("sigterm-agent-background-completed: the child the cancel ended, reported completed (its tool got the SIGTERM before Qwen), is done by the stream and cancelled by the run's end", () => {
  const p = parseFixture('sigterm-agent-background-completed.ndjson');
  assert.deepEqual(
    p.state.children.map((c) => [c.status, c.statusSource]),
    [['done', 'stream']],
  );
  // The supervisor ends a cancelled run with cancelledChildren, given when the cancel was requested.
  const requested = new Date(Date.parse(p.state.children[0]!.finishedAt!) - 1).toISOString();
  assert.deepEqual(
    cancelledChildren(p.state.children, requested, { since: requested }).map((c) => [c.status, c.statusSource]),
    [['cancelled', 'inferred']],
  );
});

test("api errors (500 after its 7 attempts, 401, 429): result/error_during_execution with is_error → failed with Qwen's own message", () => {
  for (const [file, want, reason] of [
    ['api-error-500.ndjson', '[API Error: 500 upstream exploded]', 'api-error'],
    ['api-error-401.ndjson', '[API Error: 401 invalid api key]', 'auth'],
    ['rate-limit-429.ndjson', '[API Error: 429 slow down please]\nPossible quota limitations', 'rate-limit'],
  ] as const) {
    const p = parseFixture(file);
    assert.ok(p.state.fatalError?.startsWith(`error_during_execution: ${want}`), `${file}: ${p.state.fatalError}`);
    const v = p.verdict(exited(1));
    assert.equal(v.outcome, 'failed');
    assert.equal(v.reason, reason, `${file}: an API error in Qwen's error_during_execution, by its words`);
    assert.equal(v.error, p.state.fatalError);
  }
});

test('auth-missing: a result line only (no init), with the session id and the reason', () => {
  const p = parseFixture('auth-missing.ndjson');
  assert.equal(p.state.sessionId, '0c3c0000-0000-4000-8000-000000000003');
  const v = p.verdict(exited(1));
  assert.equal(v.outcome, 'failed');
  assert.equal(v.reason, 'auth');
  assert.match(v.error!, /Missing API key for OpenAI-compatible auth/);
});

test('permission-denied: the refused tool is an error tool result listed in permission_denials; exit 0, but the run failed: permission-denied (as Claude)', () => {
  const p = parseFixture('permission-denied.ndjson');
  const [t] = tools(p);
  assert.equal(t!.tool!.status, 'error');
  assert.match(t!.tool!.output!, /requires permission to use "run_shell_command"/);
  const v = p.verdict(exited(0));
  assert.equal(v.outcome, 'failed');
  assert.equal(v.reason, 'permission-denied');
  assert.match(v.error!, /^qwen was refused permission for 1 tool call: run_shell_command: touch created-by-tool/);
});

test('max-turns: exit 53 and no result line (the reason is on stderr) → failed', () => {
  const p = parseFixture('max-turns.ndjson');
  assert.equal(tools(p).length, 1);
  assert.deepEqual(p.verdict(exited(53)), failed('qwen exited with status 53 before reporting a result', 'max-turns'));
  assert.deepEqual(qwen.caps, { cost: null, tokens: 'stream', turns: 'stream' });
});

test('the caps the supervisor holds for qwen: its turns (model messages) and tokens (their usage) while the run goes', () => {
  const p = qwen.open();
  const seen: Array<[number, number | null]> = [];
  for (const line of readFileSync(join(FIX, 'bash-tool.ndjson'), 'utf8').split('\n')) {
    p.line(line);
    if (line.includes('"type":"assistant"')) seen.push([p.state.turns, p.state.usage?.totalTokens ?? null]);
  }
  assert.deepEqual(seen, [
    [1, 15766],
    [2, 31630],
  ]);
});

test('sigterm-tool: the cancelled tool call is in the transcript; killed by SIGTERM → failed', () => {
  const p = parseFixture('sigterm-tool.ndjson');
  const [t] = tools(p);
  assert.equal(t!.tool!.status, 'error');
  assert.match(t!.tool!.output!, /^\[Operation Cancelled\]/);
  assert.equal(p.verdict(exited(null, 'SIGTERM')).outcome, 'failed');
});

test('noise and a torn last line are skipped and counted, never fatal', () => {
  const lines = readFileSync(join(FIX, 'bash-tool.ndjson'), 'utf8').split('\n').filter(Boolean);
  const torn = lines.at(-1)!.slice(0, 120);
  const p = parseText(['Ripgrep not available: …', lines[0], '', ...lines.slice(1, -1), torn].join('\n'));
  assert.equal(p.state.skippedLines, 2);
  assert.equal(p.state.lastAssistantText, 'done: hi-there');
  assert.equal(p.verdict(exited(0)).outcome, 'failed', 'no result line: exit 0 is not enough');
});

test("qwenAgentId: Qwen's task id is <subagent_type>-<tool_use_id>; none without a type", () => {
  assert.equal(qwenAgentId('call_1', { subagent_type: 'Explore', prompt: 'x' }), 'Explore-call_1');
  assert.equal(qwenAgentId('call_1', { prompt: 'x' }), null);
  assert.equal(qwenAgentId('call_1', null), null);
});

/** A store holding every captured sub-agent transcript, filed as Qwen files them for `cwd`. */
function storeFor(root: string, cwd: string): string {
  const sub = join(root, 'projects', projectDirName(cwd), 'subagents');
  mkdirSync(sub, { recursive: true });
  cpSync(join(FIX, 'store'), sub, { recursive: true });
  return sub;
}

test("childMessages: a sub-agent's transcript (Gemini-style parts) from projects/<project>/subagents/<session>/ of the run's store", async () => {
  const home = mkdtempSync(join(tmpdir(), 'qwen-store-'));
  try {
    const cwd = '/tmp/qwcap/agent-background/work';
    assert.equal(projectDirName(cwd), '-tmp-qwcap-agent-background-work');
    storeFor(join(home, '.qwen'), cwd);
    const session = '0d4d0000-0000-4000-8000-000000000004';
    const read = async (q: { childId: string; storeEnv?: Record<string, string>; cwd?: string; sessionId?: string | null }) => {
      const got: Message[] = [];
      const found = await qwen.childMessages!(
        { sessionId: q.sessionId === undefined ? session : q.sessionId, cwd: q.cwd ?? cwd, childId: q.childId, storeEnv: q.storeEnv ?? { HOME: home } },
        (m) => got.push(m),
      );
      return { found, got };
    };
    const id = 'general-purpose-call_fake_6845_6';
    const r = await read({ childId: id });
    assert.equal(r.found, true);
    assert.deepEqual(
      r.got.map((m) => [m.role, m.text, m.childId]),
      [
        ['user', 'TOOL:Bash:echo childtool && echo childword', id],
        ['tool', 'run_shell_command: echo childtool && echo childword', id],
        ['assistant', 'done: childtool', id],
      ],
    );
    const tool = r.got[1]!.tool!;
    assert.equal(tool.input, 'echo childtool && echo childword');
    assert.match(tool.output!, /^Command: echo childtool && echo childword\nDirectory: \(root\)\nOutput: childtool\nchildword/);
    assert.equal(tool.status, 'completed');
    // by the agent tool_use id, and by the agent id in another case (the .meta.json names both)
    assert.equal((await read({ childId: 'call_fake_6845_6' })).found, true);
    assert.equal((await read({ childId: 'General-Purpose-call_fake_6845_6' })).found, true);
    // found by scanning the projects when the run's cwd is not the project's
    assert.equal((await read({ childId: id, cwd: '/some/where/else' })).found, true);
    // QWEN_HOME, and QWEN_RUNTIME_DIR over it
    const other = join(home, 'other');
    storeFor(other, cwd);
    assert.equal((await read({ childId: id, storeEnv: { HOME: '/nonexistent', QWEN_HOME: other } })).found, true);
    assert.equal((await read({ childId: id, storeEnv: { HOME: home, QWEN_HOME: '/nonexistent', QWEN_RUNTIME_DIR: other } })).found, true);
    assert.equal(qwenRuntimeDir({ HOME: '/h' }), '/h/.qwen');
    assert.equal(qwenRuntimeDir({ HOME: '/h', QWEN_HOME: '/q' }), '/q');
    assert.equal(qwenRuntimeDir({ HOME: '/h', QWEN_HOME: '/q', QWEN_RUNTIME_DIR: '/r' }), '/r');
    assert.equal(qwenRuntimeDir({ HOME: '/h', QWEN_HOME: '~/q' }), '/h/q');
    assert.equal(qwenRuntimeDir({ HOME: '/h', QWEN_RUNTIME_DIR: 'out' }, '/w/p'), '/w/p/out', "relative: the run's cwd's");
    // another session's child, an unknown child, another store, no session, hostile ids
    assert.equal((await read({ childId: 'general-purpose-call_fake_6845_15' })).found, false);
    assert.equal((await read({ childId: 'general-purpose-call_nope' })).found, false);
    assert.equal((await read({ childId: id, storeEnv: { HOME: join(home, 'nope') } })).found, false);
    assert.equal((await read({ childId: id, sessionId: null })).found, false);
    assert.equal((await read({ childId: '../../../etc/passwd' })).found, false);
    assert.equal(findChildTranscript({ sessionId: '../x', cwd, childId: id, storeEnv: { HOME: home } }), null);
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
});

test('childMessages: a child cut off by a cancel (its tool answered with an error), and one that failed before answering', async () => {
  const home = mkdtempSync(join(tmpdir(), 'qwen-store-'));
  try {
    storeFor(join(home, '.qwen'), '/w');
    const read = async (sessionId: string, childId: string) => {
      const got: Message[] = [];
      assert.equal(await qwen.childMessages!({ sessionId, cwd: '/w', childId, storeEnv: { HOME: home } }, (m) => got.push(m)), true);
      return got;
    };
    const cancelled = await read('14b00000-0000-4000-8000-000000000011', 'general-purpose-call_fake_6845_42');
    assert.deepEqual(
      cancelled.map((m) => [m.role, m.tool?.status ?? null]),
      [
        ['user', null],
        ['tool', 'error'],
      ],
    );
    assert.match(cancelled[1]!.tool!.output!, /Signal: 15/);
    const failed = await read('0f6f0000-0000-4000-8000-000000000006', 'general-purpose-call_fake_6845_23');
    assert.deepEqual(
      failed.map((m) => [m.role, m.text]),
      [['user', 'ERROR:400:child broke']],
    );
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
});

test("transcriptReader: Qwen's own additions to a user turn are not the child's words; reasoning is skipped; an unanswered call is incomplete", () => {
  const got: Message[] = [];
  const r = transcriptReader('c1', (m) => got.push(m));
  const line = (o: unknown) => r.line(JSON.stringify(o));
  line({ type: 'user', message: { role: 'user', parts: [{ text: '<system-reminder>\nrestored\n</system-reminder>\n\n' }, { text: 'do the thing' }] } });
  line({ type: 'system', subtype: 'ui_telemetry', systemPayload: {} });
  line({ type: 'assistant', message: { role: 'model', parts: [{ text: 'thinking…', thought: true }, { text: 'on it' }] } });
  line({ type: 'user', subtype: 'notification', message: { role: 'user', parts: [{ text: '<task-notification>…</task-notification>' }] } });
  line({ type: 'assistant', message: { role: 'model', parts: [{ functionCall: { id: 'k1', name: 'read_file', args: { file_path: '/etc/hosts' } } }] } });
  r.line('{"type":"tool_res');
  r.end();
  assert.deepEqual(
    got.map((m) => [m.role, m.text, m.tool?.status ?? null, m.childId]),
    [
      ['user', 'do the thing', null, 'c1'],
      ['assistant', 'on it', null, 'c1'],
      ['tool', 'read_file: /etc/hosts', 'incomplete', 'c1'],
    ],
  );
});

test('rate-limit-retry-after: a 429 with Retry-After (Qwen waits it out, 7 attempts) is rate-limit; Qwen says no reset time, so none is recorded', () => {
  const p = parseFixture('rate-limit-retry-after.ndjson');
  const v = p.verdict({ code: 1, signal: null });
  assert.equal(v.reason, 'rate-limit');
  assert.match(v.error ?? '', /API Error: 429 Rate limit reached for requests/);
  assert.equal(p.state.resetsAt, null);
  assert.equal(p.state.limitWarning, null);
});
