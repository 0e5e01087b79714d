import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, copyFileSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { codex } from '../../lib/agents/codex/index.js';
import { commandText } from '../../lib/agents/codex/items.js';
import { usageFromCodex, type CodexRun } from '../../lib/agents/codex/stream.js';
import type { Message, RunOptions } from '../../lib/agents/types.js';
import { runUsage } from '../../lib/agents/shared/stream.js';
import { SubagentError } from '../../lib/base/errors.js';
import { NO_CAPS } from '../../lib/registry/record.js';
import { ROOT } from '../support/paths.js';
import { failed } from '../support/replay.js';
import { withTempDir } from '../support/temp.js';
import { usage } from '../support/usage.js';

const FIXTURES = join(ROOT, 'test', 'fixtures', 'agents', 'codex');
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

function lines(name: string): string[] {
  return readFileSync(join(FIXTURES, name), 'utf8').split('\n');
}

/** Feeds a fixture line by line, as the supervisor does; returns the run and the messages. */
function parse(name: string, opts: RunOptions = {}, feed: string[] = lines(name)): { p: CodexRun; messages: Message[] } {
  const messages: Message[] = [];
  const p = codex.open({ ...opts, onMessage: (m) => messages.push(m) });
  for (const l of feed) p.line(l);
  return { p, messages };
}

test('every codex fixture is covered by this file', () => {
  const covered = [
    'api-error-400.jsonl',
    'api-error-401.jsonl',
    'api-error-429.jsonl',
    'api-error-500.jsonl',
    'file-change.jsonl',
    'plain-reply.jsonl',
    'quota-exceeded.jsonl',
    'reasoning-and-search.jsonl',
    'response-failed.jsonl',
    'resume-turn1.jsonl',
    'resume-turn2.jsonl',
    'shell-tool-failing.jsonl',
    'shell-tool.jsonl',
    'sigint-mid-run.jsonl',
    'sigterm-during-tool.jsonl',
    'spawn-subagent.jsonl',
    'usage-limit.jsonl',
    'usage-limit-resets.jsonl',
    'limit-warning.jsonl',
  ];
  assert.deepEqual(
    readdirSync(FIXTURES)
      .filter((f) => f.endsWith('.jsonl'))
      .sort(),
    covered.sort(),
  );
  assert.deepEqual(readdirSync(join(FIXTURES, 'rollouts')).sort(), [
    'limit-warning.rollout.jsonl',
    'plain-reply.rollout.jsonl',
    'resume-4-turns.rollout.jsonl',
    'sigint-during-tool.rollout.jsonl',
    'spawn-subagent.child.rollout.jsonl',
    'spawn-subagent.parent.rollout.jsonl',
    'usage-limit.rollout.jsonl',
  ]);
});

test('launch: a new run reads the prompt from stdin; model, variant and extra args map to codex flags', () => {
  const base = { cwd: '/w d', agent: null, files: [], sessionId: null, caps: NO_CAPS };
  const plain = codex.launch({ ...base, mode: 'new', model: null, variant: null, extraArgs: [] });
  assert.deepEqual(plain, { command: 'codex', args: ['exec', '--json', '--skip-git-repo-check', '-C', '/w d', '-'], env: {} });
  const full = codex.launch({ ...base, mode: 'new', model: 'gpt-5', variant: 'high', extraArgs: ['-s', 'workspace-write', '-c', 'x="y z"'] });
  assert.deepEqual(full.args, [
    'exec',
    '-s',
    'workspace-write',
    '-c',
    'x="y z"',
    '--json',
    '--skip-git-repo-check',
    '-C',
    '/w d',
    '-m',
    'gpt-5',
    '-c',
    'model_reasoning_effort="high"',
    '-',
  ]);
  assert.equal(full.args.at(-1), '-', 'the prompt is "-" = stdin, never on argv');
});

test('launch: extra args come first, so a multi-value option (-i FILE…) ends at our flags, not at `-`', () => {
  const base = { cwd: '/w', agent: null, files: [], model: null, variant: null, extraArgs: ['-i', 'a.png', 'b.png'], caps: NO_CAPS };
  const id = '01a2007c-86cb-7dd1-9a18-08e1dd2dd4f6';
  const ours = ['exec', '-i', 'a.png', 'b.png', '--json', '--skip-git-repo-check', '-C', '/w'];
  assert.deepEqual(codex.launch({ ...base, mode: 'new', sessionId: null }).args, [...ours, '-']);
  assert.deepEqual(codex.launch({ ...base, mode: 'resume', sessionId: id }).args, [...ours, 'resume', id, '-']);
});

test('launch: resume puts every exec option before `resume <thread_id>` and refuses anything but a thread UUID', () => {
  const id = '01a2007c-86cb-7dd1-9a18-08e1dd2dd4f6';
  const base = { cwd: '/w', agent: null, files: [], mode: 'resume' as const, caps: NO_CAPS };
  const r = codex.launch({ ...base, model: 'm', variant: 'low', extraArgs: ['-s', 'read-only'], sessionId: id });
  assert.deepEqual(r.args, [
    'exec',
    '-s',
    'read-only',
    '--json',
    '--skip-git-repo-check',
    '-C',
    '/w',
    '-m',
    'm',
    '-c',
    'model_reasoning_effort="low"',
    'resume',
    id,
    '-',
  ]);
  // `codex exec resume <name>` treats a non-UUID as a thread name and silently starts a new thread.
  for (const bad of [null, 'not-a-uuid', '--last']) {
    assert.throws(
      () => codex.launch({ ...base, model: null, variant: null, extraArgs: [], sessionId: bad }),
      (e: unknown) => e instanceof SubagentError && e.code === 'E_SESSION_NOT_FOUND',
    );
  }
});

test('plain-reply: session id, answer, usage, success', () => {
  const { p, messages } = parse('plain-reply.jsonl');
  assert.equal(p.state.sessionId, '01a2007a-062a-73a1-a57c-afc0accdc977');
  assert.equal(p.state.lastAssistantText, 'Hello from the fake model');
  assert.deepEqual(messages, [{ role: 'assistant', text: 'Hello from the fake model' }], 'the "Model metadata" warning item is not a message');
  assert.deepEqual(p.state.usage, usage(5170, 6));
  assert.equal(p.state.toolUses, 0);
  assert.equal(p.state.skippedLines, 0);
  assert.equal(p.state.fatalError, null);
  assert.match(p.state.lastActivityAt!, ISO);
  assert.deepEqual(p.verdict({ code: 0, signal: null }), { outcome: 'succeeded', error: null, reason: null });
});

test('shell-tool: a command_execution becomes one tool message with a readable command and short output', () => {
  const { p, messages } = parse('shell-tool.jsonl');
  assert.equal(p.state.toolUses, 1, 'started + completed of one item count once');
  assert.deepEqual(messages, [
    {
      role: 'tool',
      text: 'Bash: echo hi-from-tool && pwd',
      tool: { name: 'Bash', input: 'echo hi-from-tool && pwd', output: 'hi-from-tool\n/tmp/codex-capture/tool/work', status: 'completed' },
    },
    { role: 'assistant', text: 'tool finished' },
  ]);
  assert.equal(p.state.lastAssistantText, 'tool finished');
  assert.deepEqual(p.state.usage, usage(10465, 17));
});

test('shell-tool-failing: a failed command says so; the run itself succeeded', () => {
  const { p, messages } = parse('shell-tool-failing.jsonl');
  assert.deepEqual(messages[0]!.tool, { name: 'Bash', input: 'echo oops >&2; exit 3', output: '[exit 3] oops', status: 'failed' });
  assert.equal(p.state.lastAssistantText, 'handled failure');
  assert.deepEqual(p.verdict({ code: 0, signal: null }), { outcome: 'succeeded', error: null, reason: null });
});

test('file-change: the change list is the tool input', () => {
  const { p, messages } = parse('file-change.jsonl');
  assert.equal(p.state.toolUses, 1);
  assert.deepEqual(messages[0], {
    role: 'tool',
    text: 'file_change: add /tmp/codex-capture/tool/work/hello.txt',
    tool: { name: 'file_change', input: 'add /tmp/codex-capture/tool/work/hello.txt', output: null, status: 'completed' },
  });
  assert.equal(p.state.lastAssistantText, 'file written');
  assert.deepEqual(p.state.usage, usage(13945, 22));
});

test('reasoning-and-search: reasoning is not transcript; web_search (duplicate "id" key) is one tool use', () => {
  const { p, messages } = parse('reasoning-and-search.jsonl');
  assert.equal(p.state.toolUses, 1);
  assert.equal(p.state.skippedLines, 0, 'a duplicate key is still valid JSON');
  assert.deepEqual(
    messages.map((m) => [m.role, m.text]),
    [
      ['tool', 'web_search: codex exec json events'],
      ['assistant', 'answer after reasoning and search'],
    ],
  );
});

test('api errors and response.failed: turn.failed is the verdict, with a readable error and the reason its words give', () => {
  const cases: Array<[string, string, string]> = [
    ['api-error-400.jsonl', 'fake server: simulated HTTP 400 (invalid_request_error)', 'api-error'],
    [
      'api-error-401.jsonl',
      'unexpected status 401 Unauthorized: fake upstream error 401, url: http://127.0.0.1:35743/v1/responses, request id: req_fake_5208_1',
      'auth',
    ],
    ['api-error-429.jsonl', 'exceeded retry limit, last status: 429 Too Many Requests, request id: req_fake_5305_1', 'rate-limit'],
    [
      'usage-limit.jsonl',
      'You’ve hit your usage limit. Upgrade to Pro (https://chatgpt.com/explore/pro), visit https://chatgpt.com/settings/usage to purchase more credits or try again later.',
      'rate-limit',
    ],
    ['quota-exceeded.jsonl', 'Quota exceeded. Check your plan and billing details.', 'rate-limit'],
    ['api-error-500.jsonl', 'We’re currently experiencing high demand, which may cause temporary errors.', 'api-error'],
    ['response-failed.jsonl', 'stream disconnected before completion: the model exploded', 'api-error'],
  ];
  for (const [file, error, reason] of cases) {
    const { p, messages } = parse(file);
    assert.equal(p.state.fatalError, error, file);
    assert.equal(p.state.lastAssistantText, null, file);
    assert.equal(p.state.usage, null, file);
    assert.deepEqual(messages, [], file);
    assert.match(p.state.sessionId!, /^01a20/);
    assert.deepEqual(p.verdict({ code: 1, signal: null }), { outcome: 'failed', error, reason }, file);
    // The CLI's verdict wins over the exit code.
    assert.equal(p.verdict({ code: 0, signal: null }).outcome, 'failed', file);
  }
});

test('a retry ("Reconnecting…") error line is not fatal', () => {
  const feed = lines('plain-reply.jsonl');
  feed.splice(3, 0, '{"type":"error","message":"Reconnecting... 1/5 (stream disconnected before completion)"}');
  const { p } = parse('plain-reply.jsonl', {}, feed);
  assert.equal(p.state.fatalError, null);
  assert.deepEqual(p.verdict({ code: 0, signal: null }), { outcome: 'succeeded', error: null, reason: null });
  // …but it explains a non-zero exit that has no turn.failed.
  assert.match(p.verdict({ code: 1, signal: null }).error!, /status 1: Reconnecting\.\.\. 1\/5/);
  assert.equal(p.verdict({ code: 1, signal: null }).reason, 'api-error', 'the retried error says what went wrong');
});

test('a 500 with codex\'s default retries: five "Reconnecting…" lines, then turn.failed with the real message', () => {
  // Captured from codex 0.169 with model_providers.<p>.request_max_retries=4, stream_max_retries=5 (25 s).
  const msg = 'We’re currently experiencing high demand, which may cause temporary errors.';
  const feed = [
    '{"type":"thread.started","thread_id":"01a200e7-7be4-7060-9d89-caa06ea6a974"}',
    '{"type":"turn.started"}',
    ...[1, 2, 3, 4, 5].map((i) => JSON.stringify({ type: 'error', message: `Reconnecting... ${i}/5 (${msg})` })),
    JSON.stringify({ type: 'error', message: msg }),
    JSON.stringify({ type: 'turn.failed', error: { message: msg } }),
  ];
  const { p } = parse('', {}, feed);
  assert.deepEqual(p.verdict({ code: 1, signal: null }), { outcome: 'failed', error: msg, reason: 'api-error' });
  // The same retries followed by a success are not a failure.
  const ok = parse('', {}, [
    ...feed.slice(0, 4),
    '{"type":"item.completed","item":{"id":"item_1","type":"agent_message","text":"fine"}}',
    '{"type":"turn.completed","usage":{"input_tokens":10,"output_tokens":1}}',
  ]).p;
  assert.deepEqual(ok.verdict({ code: 0, signal: null }), { outcome: 'succeeded', error: null, reason: null });
  assert.equal(ok.state.lastAssistantText, 'fine');
});

test("resume: same thread id; usage is cumulative, the run's own share needs the previous run's thread total", () => {
  const one = parse('resume-turn1.jsonl').p;
  const two = parse('resume-turn2.jsonl').p;
  assert.equal(two.state.sessionId, one.state.sessionId);
  assert.equal(two.state.sessionId, '01a2007c-86cb-7dd1-9a18-08e1dd2dd4f6');
  assert.equal(one.state.lastAssistantText, 'first turn answer');
  assert.equal(two.state.lastAssistantText, 'second turn answer');
  assert.deepEqual(one.state.threadUsage, usage(5168, 4));
  assert.deepEqual(two.state.threadUsage, usage(10413, 9), 'what codex reports: the thread total');
  assert.deepEqual(two.state.usage, usage(10413, 9), 'without a baseline the run usage is the thread total');
  const withBase = parse('resume-turn2.jsonl', { threadUsageBefore: one.state.threadUsage }).p;
  assert.deepEqual(withBase.state.usage, usage(5245, 5), 'turn 2 alone (the rollout says 5245 in / 5 out)');
  assert.deepEqual(withBase.state.threadUsage, usage(10413, 9));
});

test('usage: cache and reasoning figures are mapped; a baseline that does not fit is ignored', () => {
  const u = usageFromCodex({ input_tokens: 1000, cached_input_tokens: 600, cache_write_input_tokens: 100, output_tokens: 50, reasoning_output_tokens: 20 });
  assert.deepEqual(u, usage(300, 50, { cacheReadTokens: 600, cacheWriteTokens: 100, reasoningTokens: 20, totalTokens: 1050 }));
  assert.equal(u.inputTokens + u.cacheReadTokens + u.cacheWriteTokens + u.outputTokens, u.totalTokens);
  assert.deepEqual(runUsage(u, null), u);
  assert.deepEqual(runUsage(u, usage(5000, 1)), u, "a baseline bigger than the total is not this thread's past");
  assert.deepEqual(
    runUsage(u, { ...usage(100, 10), cacheReadTokens: 100, totalTokens: 210 }),
    usage(200, 40, { cacheReadTokens: 500, cacheWriteTokens: 100, reasoningTokens: 20, totalTokens: 840 }),
  );
});

test('sigint-mid-run: cut off after turn.started; exit 1 with no turn end is a failure', () => {
  const { p, messages } = parse('sigint-mid-run.jsonl');
  assert.equal(p.state.sessionId, '01a2007b-aa7e-7602-88e3-2cb5210ffd06');
  assert.equal(p.state.turn, 'started');
  assert.deepEqual(messages, []);
  assert.deepEqual(p.verdict({ code: 1, signal: null }), { outcome: 'failed', error: 'codex exited with status 1', reason: 'crashed' });
});

test('sigterm-during-tool: the unfinished command is counted, and end() puts it in the transcript as in_progress', () => {
  const { p, messages } = parse('sigterm-during-tool.jsonl');
  assert.equal(p.state.toolUses, 1);
  assert.deepEqual(messages, [], 'a started tool is not a message until it ends');
  p.end();
  assert.deepEqual(messages, [
    { role: 'tool', text: 'Bash: sleep 60; echo slept', tool: { name: 'Bash', input: 'sleep 60; echo slept', output: null, status: 'in_progress' } },
  ]);
  assert.deepEqual(p.verdict({ code: 143, signal: null }), { outcome: 'failed', error: 'codex exited with status 143', reason: 'crashed' });
  assert.match(p.verdict({ code: null, signal: 'SIGKILL' }).error!, /stopped by SIGKILL before its turn ended/);
});

test("spawn-subagent: the child is listed from the stream, its answer carries childId, the parent answer is the parent's", () => {
  const feed = lines('spawn-subagent.jsonl');
  const messages: Message[] = [];
  const p = codex.open({ onMessage: (m) => messages.push(m) });
  const child = '01a2007a-6c58-73d2-87b7-9908ebb79c3f';
  // Streaming: the child appears as soon as spawn_agent completes, running.
  for (const l of feed.slice(0, 5)) p.line(l);
  assert.equal(p.state.children.length, 1);
  assert.equal(p.state.children[0]!.status, 'running');
  for (const l of feed.slice(5)) p.line(l);
  assert.equal(p.state.children.length, 1);
  const c = p.state.children[0]!;
  assert.deepEqual(
    { ...c, startedAt: null, finishedAt: null },
    {
      id: child,
      cli: 'codex',
      description: 'REPLY:child says hi',
      status: 'done',
      statusSource: 'stream',
      startedAt: null,
      finishedAt: null,
    },
  );
  assert.match(c.startedAt!, ISO);
  assert.match(c.finishedAt!, ISO);
  assert.equal(p.state.toolUses, 2);
  assert.deepEqual(messages, [
    {
      role: 'tool',
      text: 'spawn_agent: REPLY:child says hi',
      tool: { name: 'spawn_agent', input: 'REPLY:child says hi', output: `${child}: pending_init`, status: 'completed' },
    },
    { role: 'tool', text: `wait: ${child}`, tool: { name: 'wait', input: child, output: `${child}: completed: child says hi`, status: 'completed' } },
    { role: 'assistant', text: 'child says hi', childId: child },
    { role: 'assistant', text: 'parent final after child' },
  ]);
  assert.equal(p.state.lastAssistantText, 'parent final after child');
  assert.deepEqual(p.state.usage, usage(15909, 32));
});

test("children without an end event take the run's end, marked inferred", () => {
  const feed = lines('spawn-subagent.jsonl');
  // Killed while the child still ran.
  const killed = parse('spawn-subagent.jsonl', {}, feed.slice(0, 5)).p;
  assert.equal(killed.state.children[0]!.status, 'running');
  assert.equal(killed.verdict({ code: 1, signal: null }).outcome, 'failed');
  assert.equal(killed.state.children[0]!.status, 'failed');
  assert.equal(killed.state.children[0]!.statusSource, 'inferred');
  assert.match(killed.state.children[0]!.finishedAt!, ISO);
  // The turn completed without anyone waiting for the child.
  const done = parse('spawn-subagent.jsonl', {}, [...feed.slice(0, 5), feed.at(-2)!]).p;
  assert.equal(done.state.children[0]!.status, 'done');
  assert.equal(done.state.children[0]!.statusSource, 'inferred');
});

test('noise and a torn last line are skipped and counted, never fatal', () => {
  const feed = lines('shell-tool.jsonl');
  const last = feed.filter((l) => l !== '').at(-1)!;
  const noisy = [
    'WARNING: proceeding, even though we could not create PATH aliases',
    ...feed.slice(0, -2),
    '[1,2]',
    '"str"',
    '{"no":"type"}',
    '',
    last.slice(0, 40),
  ];
  const { p, messages } = parse('shell-tool.jsonl', {}, noisy);
  assert.equal(p.state.skippedLines, 5);
  assert.equal(p.state.sessionId, '01a2007a-182a-7e41-8cb6-b5385e8222ac');
  assert.equal(p.state.lastAssistantText, 'tool finished');
  assert.equal(messages.length, 2);
  assert.equal(p.state.usage, null, 'the torn turn.completed is not half-read');
});

test('summaries are short whatever the tool printed', () => {
  const big = 'x'.repeat(100_000) + '\u{1F600}'.repeat(1000);
  const cmd = `/bin/bash -lc 'echo ${'y'.repeat(5000)}'`;
  const { messages } = parse('', {}, [
    JSON.stringify({
      type: 'item.completed',
      item: { id: 'item_1', type: 'command_execution', command: cmd, aggregated_output: big, exit_code: 0, status: 'completed' },
    }),
  ]);
  const t = messages[0]!.tool!;
  assert.ok(t.output!.length <= 500 && t.output!.endsWith('…'));
  assert.ok(t.input!.length <= 300);
  assert.ok(messages[0]!.text.length <= 340);
});

test('commandText unwraps the shell wrapper codex puts around commands', () => {
  assert.equal(commandText("/bin/bash -lc 'echo hi && pwd'"), 'echo hi && pwd');
  assert.equal(commandText(`/bin/bash -lc 'echo it'"'"'s'`), "echo it's");
  assert.equal(commandText(['/bin/bash', '-lc', 'sleep 60; echo slept']), 'sleep 60; echo slept');
  assert.equal(commandText('bash -c "echo \\"q\\""'), 'echo "q"');
  assert.equal(commandText('ls -la'), 'ls -la');
  assert.equal(commandText(['git', 'status']), 'git status');
});

test('verdict: exit 0 without turn.completed did not finish; a state the parser never saw still gets an answer', () => {
  const cut = parse('sigint-mid-run.jsonl').p;
  assert.deepEqual(cut.verdict({ code: 0, signal: null }), failed('codex exited with status 0 without finishing its turn (no turn.completed)', 'crashed'));
  assert.equal(codex.open().verdict({ code: 0, signal: null }).outcome, 'failed');
  assert.match(codex.open().verdict({ code: 1, signal: null }).error!, /status 1 before it opened a thread/);
});

// ------------------------------------------------------------------------------------------------
// childMessages: the rollouts in a temp store.

const PARENT = '01a2007a-6bd9-7fc1-9ce0-6cd5d7d08994';
const CHILD = '01a2007a-6c58-73d2-87b7-9908ebb79c3f';

function store(): { home: string; codexHome: string; child: string; cleanup(): void } {
  const home = mkdtempSync(join(tmpdir(), 'codex-store-'));
  const codexHome = join(home, '.codex');
  const day = join(codexHome, 'sessions', '2026', '11', '21');
  mkdirSync(day, { recursive: true });
  mkdirSync(join(codexHome, 'sessions', '2026', '11', '20'), { recursive: true });
  const put = (fixture: string, id: string) => copyFileSync(join(FIXTURES, 'rollouts', fixture), join(day, `rollout-2026-11-21T23-39-12-${id}.jsonl`));
  put('spawn-subagent.parent.rollout.jsonl', PARENT);
  put('spawn-subagent.child.rollout.jsonl', CHILD);
  put('sigint-during-tool.rollout.jsonl', '01a2007c-002c-75b3-bf73-983723bbb5ff');
  put('resume-4-turns.rollout.jsonl', '01a2007c-86cb-7dd1-9a18-08e1dd2dd4f6');
  put('plain-reply.rollout.jsonl', '01a2007a-062a-73a1-a57c-afc0accdc977');
  const child = join(day, `rollout-2026-11-21T23-39-12-${CHILD}.jsonl`);
  return { home, codexHome, child, cleanup: () => rmSync(home, { recursive: true, force: true }) };
}

/** Runs `fn` on a fresh store, removed afterwards. */
async function withStore(fn: (s: ReturnType<typeof store>) => Promise<void>): Promise<void> {
  const s = store();
  try {
    await fn(s);
  } finally {
    s.cleanup();
  }
}

async function read(storeEnv: Record<string, string>, childId: string, sessionId: string | null = PARENT): Promise<{ found: boolean; messages: Message[] }> {
  const messages: Message[] = [];
  const found = await codex.childMessages!({ sessionId, cwd: '/tmp/codex-capture/spawn/work', childId, storeEnv }, (m) => messages.push(m));
  return { found, messages };
}

test("childMessages reads the child's rollout from $CODEX_HOME, or from $HOME/.codex", async () => {
  await withStore(async (s) => {
    const want = [
      { role: 'user', text: 'REPLY:child says hi' },
      { role: 'assistant', text: 'child says hi' },
    ];
    assert.deepEqual(await read({ CODEX_HOME: s.codexHome, HOME: '/nonexistent' }, CHILD), { found: true, messages: want });
    assert.deepEqual(await read({ HOME: s.home }, CHILD), { found: true, messages: want });
  });
});

test("childMessages refuses a thread that is not this run's child, an unknown id, and a path-like id", async () => {
  await withStore(async (s) => {
    const env = { CODEX_HOME: s.codexHome };
    assert.deepEqual(await read(env, CHILD, '01a2007a-0000-7000-8000-000000000000'), { found: false, messages: [] });
    assert.deepEqual(await read(env, '01a2007a-ffff-7fff-8fff-ffffffffffff'), { found: false, messages: [] });
    assert.deepEqual(await read(env, '../../etc/passwd'), { found: false, messages: [] });
    assert.deepEqual(await read({ CODEX_HOME: join(s.home, 'empty') }, CHILD), { found: false, messages: [] });
  });
});

test("childMessages: a rollout's tool calls, sub-agent calls and resumed turns come out in order", async () => {
  await withStore(async (s) => {
    const env = { CODEX_HOME: s.codexHome };
    // The parent's own rollout (as if it were someone's child: no parent check).
    const parent = await read(env, PARENT, null);
    assert.equal(parent.found, true);
    assert.deepEqual(
      parent.messages.map((m) => [m.role, m.text]),
      [
        ['user', 'SPAWN:REPLY:child says hi\nREPLY:parent final after child'],
        ['tool', 'spawn_agent: REPLY:child says hi'],
        ['tool', `wait: ${CHILD}`],
        ['assistant', 'parent final after child'],
      ],
    );
    assert.equal(parent.messages[2]!.tool!.output, `${CHILD}: completed: child says hi`);
    // A command aborted by SIGINT.
    const aborted = await read(env, '01a2007c-002c-75b3-bf73-983723bbb5ff', null);
    assert.deepEqual(aborted.messages, [
      { role: 'user', text: 'TOOL:shell:sleep 60; echo slept\nREPLY:never' },
      { role: 'tool', text: 'Bash: sleep 60; echo slept', tool: { name: 'Bash', input: 'sleep 60; echo slept', output: '[exit -1]', status: 'failed' } },
    ]);
    // Four turns of one resumed thread.
    const four = await read(env, '01a2007c-86cb-7dd1-9a18-08e1dd2dd4f6', null);
    assert.equal(four.messages.filter((m) => m.role === 'user').length, 4);
    assert.equal(four.messages.filter((m) => m.role === 'assistant').length, 4);
    assert.deepEqual(
      four.messages.slice(0, 4).map((m) => m.text),
      ['REPLY:first turn answer', 'first turn answer', 'REPLY:second turn answer', 'second turn answer'],
    );
  });
});

test('childMessages: a command the sandbox refused (no item_completed, only response items) is still listed', async () => {
  await withStore(async (s) => {
    const all = readFileSync(s.child, 'utf8').split('\n');
    // As Codex 0.169 records a read-only-sandbox denial (captured): a function_call and its output only.
    const call = {
      type: 'response_item',
      payload: {
        type: 'function_call',
        status: 'completed',
        id: 'fc_x',
        name: 'exec_command',
        arguments: '{"cmd":"touch /w/m9.txt","yield_time_ms":10000}',
        call_id: 'call_x',
      },
    };
    const out = {
      type: 'response_item',
      payload: {
        type: 'function_call_output',
        id: 'fco_x',
        call_id: 'call_x',
        output:
          "Chunk ID: d5ec8b\nWall time: 0.0000 seconds\nProcess exited with code 1\nOriginal token count: 17\nOutput:\ntouch: cannot touch '/w/m9.txt': Read-only file system\n",
      },
    };
    const at = all.findIndex((l) => l.includes('"AgentMessage"'));
    all.splice(at, 0, JSON.stringify(call), JSON.stringify(out));
    writeFileSync(s.child, all.join('\n'));
    const r = await read({ CODEX_HOME: s.codexHome }, CHILD);
    assert.deepEqual(r.messages, [
      { role: 'user', text: 'REPLY:child says hi' },
      {
        role: 'tool',
        text: 'Bash: touch /w/m9.txt',
        tool: { name: 'Bash', input: 'touch /w/m9.txt', output: "[exit 1] touch: cannot touch '/w/m9.txt': Read-only file system", status: 'failed' },
      },
      { role: 'assistant', text: 'child says hi' },
    ]);
  });
});

test('childMessages falls back to response items for a rollout without item_completed events', async () => {
  await withStore(async (s) => {
    const kept = readFileSync(s.child, 'utf8')
      .split('\n')
      .filter((l) => !l.includes('"item_completed"'));
    writeFileSync(s.child, kept.join('\n') + '\n{"torn":');
    const r = await read({ CODEX_HOME: s.codexHome }, CHILD);
    assert.deepEqual(r, {
      found: true,
      messages: [
        { role: 'user', text: 'REPLY:child says hi' },
        { role: 'assistant', text: 'child says hi' },
      ],
    });
  });
});

// storeUsage: a run's token_usage_records, read from its rollout as Codex appends to it.

/** The lines of a captured rollout, each with its newline. */
function rolloutLines(name: string): string[] {
  return readFileSync(join(FIXTURES, 'rollouts', name), 'utf8').split(/(?<=\n)/);
}

/** The `thread_token_usage` of a rollout's token_usage_records, in order. */
function threadTotals(ls: string[]) {
  return ls
    .filter((l) => l.startsWith('{') && JSON.parse(l).type === 'token_usage_record')
    .map((l) => usageFromCodex(JSON.parse(l).payload.thread_token_usage));
}

test("storeUsage: a new thread's rollout, found once the stream named the thread and read as it grows, sums its model responses — the stream's turn.completed figures", () => {
  withTempDir('codex-usage-', (home) => {
    const thread = '01a2007a-6bd9-7fc1-9ce0-6cd5d7d08994';
    const q = { sessionId: null, cwd: '/w', storeEnv: { CODEX_HOME: home } };
    const reader = codex.open().storeUsage!(q);
    assert.equal(reader.read(null), null, 'no thread yet');
    assert.equal(reader.read(thread), null, 'the thread has no rollout yet');
    const day = join(home, 'sessions', '2026', '11', '21');
    mkdirSync(day, { recursive: true });
    const file = join(day, `rollout-2026-11-21T23-39-12-${thread}.jsonl`);
    const all = rolloutLines('spawn-subagent.parent.rollout.jsonl');
    const records = all.flatMap((l, i) => (l.includes('"type":"token_usage_record"') ? [i] : []));
    assert.equal(records.length, 3, 'three model responses');
    writeFileSync(file, all.slice(0, records[0]).join(''));
    assert.equal(reader.read(thread), null, 'no response has ended yet');
    assert.equal(reader.turns!(), 0);
    // A record written in two pieces counts once it is whole.
    const first = all[records[0]!]!;
    appendFileSync(file, first.slice(0, 120));
    assert.equal(reader.read(thread), null, 'a torn line waits for its rest');
    appendFileSync(file, first.slice(120));
    assert.deepEqual(reader.read(thread), usage(5176, 8), 'the first response, while its tools run');
    assert.equal(reader.turns!(), 1, 'its first turn');
    appendFileSync(file, all.slice(records[0]! + 1).join(''));
    const totals = threadTotals(all);
    assert.deepEqual(reader.read(thread), totals.at(-1), 'all three: the thread total');
    assert.equal(reader.turns!(), 3, 'three model turns');
    // The run's own stream says the same at its end (turn.completed): the record keeps that one.
    const { p } = parse('spawn-subagent.jsonl');
    assert.deepEqual(p.state.usage, reader.read(thread));
    // The child's rollout (a thread of its own) is not the parent's.
    copyFileSync(
      join(FIXTURES, 'rollouts', 'spawn-subagent.child.rollout.jsonl'),
      join(day, 'rollout-2026-11-21T23-39-13-01a2007a-6c58-73d2-87b7-9908ebb79c3f.jsonl'),
    );
    assert.deepEqual(reader.read(thread), totals.at(-1));
    assert.equal(reader.turns!(), 3, "the child's turns are its own thread's");
  });
});

test("storeUsage: a resume reads only what its thread's rollout gains from the run's start (the earlier runs' records are not its), each turn its own share", () => {
  withTempDir('codex-usage-', (home) => {
    const thread = '01a2007c-86cb-7dd1-9a18-08e1dd2dd4f6';
    const q = { sessionId: thread, cwd: '/w', storeEnv: { HOME: home } };
    const day = join(home, '.codex', 'sessions', '2026', '11', '21');
    mkdirSync(day, { recursive: true });
    const file = join(day, `rollout-2026-11-21T23-40-00-${thread}.jsonl`);
    const all = rolloutLines('resume-4-turns.rollout.jsonl');
    const ends = all.flatMap((l, i) => (l.includes('"type":"task_complete"') ? [i + 1] : []));
    assert.equal(ends.length, 4, 'four runs of one thread');
    const totals = threadTotals(all);
    writeFileSync(file, all.slice(0, ends[0]).join(''));
    for (let run = 1; run < 4; run++) {
      const reader = codex.open().storeUsage!(q);
      assert.equal(reader.read(thread), null, `run ${run + 1}: the earlier runs' records are not its`);
      assert.equal(reader.turns!(), 0, `run ${run + 1}: nor their turns`);
      appendFileSync(file, all.slice(ends[run - 1], ends[run]).join(''));
      const records = all.slice(ends[run - 1], ends[run]).filter((l) => l.includes('"type":"token_usage_record"')).length;
      assert.ok(records > 0);
      const own = reader.read(thread);
      assert.deepEqual(own, runUsage(totals[run]!, totals[run - 1]), `run ${run + 1}: its share of the thread (what its stream's turn.completed gives)`);
      assert.deepEqual(reader.read(thread), own, 'read again: nothing new, the same');
      assert.equal(reader.turns!(), records, `run ${run + 1}: its own model turns`);
    }
    // A thread with no rollout reads nothing, and never throws.
    assert.equal(codex.open().storeUsage!({ ...q, sessionId: '01a2007c-0000-7000-8000-000000000000' }).read('01a2007c-0000-7000-8000-000000000000'), null);
  });
});

test("a child's status that names a property of Object ('constructor', 'toString') is no final status: the child stays running", () => {
  const all = lines('spawn-subagent.jsonl');
  const spawned = all.slice(0, 5); // up to the spawn_agent call's end: the child pending_init
  const child = '01a2007a-6c58-73d2-87b7-9908ebb79c3f';
  for (const status of ['constructor', 'toString', '__proto__']) {
    const odd = JSON.stringify({
      type: 'item.completed',
      item: {
        id: 'item_9',
        type: 'collab_tool_call',
        tool: 'wait',
        receiver_thread_ids: [child],
        agents_states: { [child]: { status, message: null } },
        status: 'completed',
      },
    });
    const { p } = parse('spawn-subagent.jsonl', {}, [...spawned, odd]);
    assert.deepEqual(
      p.state.children.map((c) => [c.id, c.status]),
      [[child, 'running']],
      status,
    );
  }
});

/** Runs `stream` (a fixture) with its thread's rollout in a temp store, read by the run's store reader after the exit, as the supervisor does; its run. */
function withRollout(stream: string, rollout: string, thread: string): CodexRun {
  let run: CodexRun | null = null;
  withTempDir('codex-limits-', (home) => {
    const day = join(home, 'sessions', '2026', '11', '28');
    mkdirSync(day, { recursive: true });
    const { p } = parse(stream);
    const reader = p.storeUsage!({ sessionId: null, cwd: '/w', storeEnv: { CODEX_HOME: home } });
    copyFileSync(join(FIXTURES, 'rollouts', rollout), join(day, `rollout-2026-11-28T01-57-27-${thread}.jsonl`));
    reader.read(thread);
    run = p;
  });
  return run!;
}

test("usage-limit-resets: a ChatGPT plan at its limit (429 usage_limit_reached, x-codex-* headers): rate-limit, and when it resets from the rollout's rate_limits (the stream has none)", () => {
  const p = withRollout('usage-limit-resets.jsonl', 'usage-limit.rollout.jsonl', '01a21fdf-2680-7c93-85f8-5f943b8f12c4');
  const v = p.verdict({ code: 1, signal: null });
  assert.equal(v.reason, 'rate-limit');
  assert.match(v.error ?? '', /hit your usage limit.*try again at/);
  assert.equal(p.state.resetsAt, '2026-11-28T01:57:32.000Z', 'the used-up window (primary, 100 %) resets_at');
  assert.equal(p.state.limitWarning, null);
  // Without its rollout (a reader of the log alone) nothing is made up of the words' "try again at 1:57 AM".
  assert.equal(parse('usage-limit-resets.jsonl').p.state.resetsAt, null);
  assert.equal(parse('api-error-429.jsonl').p.state.resetsAt, null);
});

test('limit-warning: a window at 91 % (past the 75 % where Codex warns) is a warning; the run succeeds', () => {
  const p = withRollout('limit-warning.jsonl', 'limit-warning.rollout.jsonl', '01a21fdf-25b0-7ac1-a241-799f282fdef4');
  assert.deepEqual(p.verdict({ code: 0, signal: null }), { outcome: 'succeeded', error: null, reason: null });
  assert.deepEqual(p.state.limitWarning, { window: 'five_hour', utilization: 0.91, resetsAt: '2026-11-28T01:57:33.000Z' });
  assert.equal(p.state.resetsAt, null);
  assert.ok(p.state.usage, 'the usage records are read as before');
});
