// The copilot adapter against every captured fixture of the real CLI (test/fixtures/agents/copilot/,
// GitHub Copilot CLI 1.0.102 in its offline BYOK mode against the fake chat-completions server): session
// id, transcript, answer, children, verdict (with the exit status each real run had), noise, launch argv,
// childMessages reading a session's events.jsonl from a temp store built from the captured one, and
// storeUsage replaying captured events.jsonl files (two runs of a session; a sub-agent's) as they grow.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { copilot } from '../../lib/agents/copilot/index.js';
import { copilotHome } from '../../lib/agents/copilot/store.js';
import type { CopilotEnd } from '../../lib/agents/copilot/stream.js';
import { usageReader } from '../../lib/agents/copilot/usage.js';
import { SubagentError } from '../../lib/base/errors.js';
import type { Exit, LaunchInput, Message, StreamState, Verdict } from '../../lib/agents/types.js';
import { NO_CAPS } from '../../lib/registry/record.js';
import { ROOT } from '../support/paths.js';
import { childRows, exited, failed } from '../support/replay.js';
import { withTempDir } from '../support/temp.js';
import { usage as plainUsage } from '../support/usage.js';

const FIX = join(ROOT, 'test', 'fixtures', 'agents', 'copilot');

/** Each of `names`, ended as `exit`. */
const endedAs = (exit: ReturnType<typeof exited>, ...names: string[]) => Object.fromEntries(names.map((n) => [n, exit]));

/** How each captured run ended (the npm loader's status: a SIGTERM kills it, whatever the native binary does). */
const EXITS: Record<string, { code: number | null; signal: string | null }> = {
  ...endedAs(
    exited(0),
    'plain.jsonl',
    'bash.jsonl',
    'bash-denied.jsonl',
    'bash-failing.jsonl',
    'task.jsonl',
    'task-child-tool.jsonl',
    'task-background.jsonl',
    'resume-1.jsonl',
    'resume-2.jsonl',
  ),
  ...endedAs(exited(1), 'error-500.jsonl', 'error-401.jsonl', 'error-429.jsonl', 'error-429-retry-after.jsonl', 'prompt-budget.jsonl'),
  ...endedAs(exited(null, 'SIGTERM'), 'sigterm-bash.jsonl', 'sigterm-bash-result.jsonl', 'sigterm-task.jsonl'),
};

interface Parsed {
  messages: Message[];
  state: StreamState;
  ending: CopilotEnd;
  verdict(exit: Exit): Verdict;
}

function parseText(text: string): Parsed {
  const messages: Message[] = [];
  const p = copilot.open({ onMessage: (m) => messages.push(m) });
  for (const line of text.split('\n')) p.line(line);
  p.end();
  return { messages, state: p.state, ending: p.ending, verdict: (exit) => p.verdict(exit) };
}

const parse = (name: string): Parsed => parseText(readFileSync(join(FIX, name), 'utf8'));
const verdictOf = (name: string, p: Parsed) => p.verdict(EXITS[name]!);
const texts = (p: Parsed, role: Message['role'], childId?: string) => p.messages.filter((m) => m.role === role && m.childId === childId).map((m) => m.text);

function launchInput(over: Partial<LaunchInput> = {}): LaunchInput {
  return { mode: 'new', cwd: '/w', model: null, variant: null, agent: null, files: [], extraArgs: [], sessionId: null, caps: NO_CAPS, ...over };
}

test('every fixture of the copilot CLI is covered by this file (store/ and usage/ by the store tests at the end)', () => {
  for (const f of readdirSync(FIX)) assert.ok(f === 'store' || f === 'usage' || f === 'no-auth.stderr' || f in EXITS, `fixture ${f} has no test`);
});

test('no-auth.stderr: not signed in, Copilot says so on stderr only; its Error line is the reason auth, other lines are not', () => {
  const said = readFileSync(join(FIX, 'no-auth.stderr'), 'utf8').split('\n')[0]!;
  assert.equal(said, 'Error: No authentication information found.');
  const run = copilot.open();
  assert.deepEqual(run.verdict({ code: 1, signal: null }).reason, 'crashed', 'the stream alone cannot tell');
  assert.equal(run.stderrReason?.(said), 'auth');
  assert.equal(run.stderrReason?.("Error: No session, task, or name matched '0d4d0000-0000-4000-8000-000000000004'."), null);
});

test('launch: a new run takes our session id, the flags, then the caller arguments last', () => {
  const id = '11111111-2222-4333-8444-555555555555';
  assert.deepEqual(copilot.launch(launchInput({ sessionId: id })), {
    command: 'copilot',
    args: ['--output-format', 'json', '--allow-all-tools', '--session-id', id],
    env: {},
  });
  const l = copilot.launch(launchInput({ sessionId: id, model: 'gpt-x', variant: 'high', agent: 'reviewer', extraArgs: ['--deny-tool', 'shell(rm)'] }));
  assert.deepEqual(l.args, [
    '--output-format',
    'json',
    '--allow-all-tools',
    '--session-id',
    id,
    '--model',
    'gpt-x',
    '--reasoning-effort',
    'high',
    '--agent',
    'reviewer',
    '--deny-tool',
    'shell(rm)',
  ]);
  assert.ok(!l.args.includes('-p'), 'the prompt is stdin');
});

test('launch: a resume is --resume <uuid> with the same flags; anything but a UUID is refused (Copilot would match it as a name or prefix)', () => {
  const id = '63c45e13-31ce-4fbc-8220-84045cf2e6cf';
  const l = copilot.launch(launchInput({ mode: 'resume', sessionId: id, agent: 'reviewer' }));
  assert.deepEqual(l.args, ['--output-format', 'json', '--allow-all-tools', '--resume', id, '--agent', 'reviewer']);
  assert.ok(!l.args.includes('--session-id'), '--session-id would start a new session for an unknown id');
  for (const bad of [null, '', '63c45e1', 'my session', `${id} --yolo`]) {
    assert.throws(
      () => copilot.launch(launchInput({ mode: 'resume', sessionId: bad })),
      (e: unknown) => e instanceof SubagentError && e.code === 'E_SESSION_NOT_FOUND' && typeof e.details.hint === 'string',
      String(bad),
    );
  }
});

test('plain: the answer, the session id of the result line, no usage in the stream (its tokens are in the store: storeUsage), succeeded', () => {
  const p = parse('plain.jsonl');
  assert.deepEqual(p.messages, [{ role: 'assistant', text: 'hello from the fake model' }]);
  assert.equal(p.state.sessionId, '9f22b837-867f-4912-adde-05749be90764');
  assert.equal(p.state.lastAssistantText, 'hello from the fake model');
  assert.equal(p.state.usage, null);
  assert.equal(p.state.toolUses, 0);
  assert.deepEqual(p.state.children, []);
  assert.equal(p.state.skippedLines, 0);
  assert.equal(p.state.lastActivityAt, '2026-11-24T22:19:39.798Z', "the time of the last event, from the event's timestamp");
  assert.equal(p.ending.resultExitCode, 0);
  assert.deepEqual(verdictOf('plain.jsonl', p), { outcome: 'succeeded', error: null, reason: null });
});

test('bash: one tool message with the command and its output (the shellId trailer cut), then the answer', () => {
  const p = parse('bash.jsonl');
  assert.deepEqual(p.messages, [
    {
      role: 'tool',
      text: 'bash: echo hello-from-bash; pwd',
      tool: { name: 'bash', input: 'echo hello-from-bash; pwd', output: 'hello-from-bash\n/tmp/cpcap/bash/project', status: 'completed' },
    },
    { role: 'assistant', text: 'done: hello-from-bash' },
  ]);
  assert.equal(p.state.toolUses, 1);
  assert.equal(p.state.lastAssistantText, 'done: hello-from-bash');
  assert.deepEqual(verdictOf('bash.jsonl', p), { outcome: 'succeeded', error: null, reason: null });
});

test('bash-failing: a command that exits non-zero is status failed with its exit code before its output (Copilot says success:true)', () => {
  const p = parse('bash-failing.jsonl');
  const [tool] = p.messages;
  assert.deepEqual(tool?.tool, { name: 'bash', input: 'echo out-before-fail; exit 3', output: '[exit 3] out-before-fail', status: 'failed' });
  assert.equal(p.state.lastAssistantText, 'done: out-before-fail');
  assert.deepEqual(verdictOf('bash-failing.jsonl', p), { outcome: 'succeeded', error: null, reason: null });
});

test('bash-denied: a tool Copilot refused (a path outside the cwd) is status "denied", noted; the run answered, but failed: permission-denied', () => {
  const p = parse('bash-denied.jsonl');
  const [tool] = p.messages;
  assert.equal(tool?.tool?.status, 'denied');
  assert.match(tool?.tool?.output ?? '', /^Permission denied because no interactive user response was available/);
  assert.deepEqual(p.ending.deniedTools, ['bash: cat /etc/hostname']);
  // Headless, nobody can grant the permission: the task is not done whatever the model said (as for Claude).
  assert.deepEqual(
    verdictOf('bash-denied.jsonl', p),
    failed('copilot was refused permission for 1 tool call: bash: cat /etc/hostname (grant what the task needs: docs/agents/copilot.md)', 'permission-denied'),
  );
});

test('task: the sub-agent is a child (its agentId), its prompt and answer are tagged with it, the task result is the parent tool output', () => {
  const p = parse('task.jsonl');
  const child = '9332245c-4384-4764-8158-453031591858';
  assert.deepEqual(p.state.children, [
    {
      id: child,
      cli: 'copilot',
      description: 'look around',
      status: 'done',
      statusSource: 'stream',
      startedAt: '2026-11-24T22:19:51.597Z',
      finishedAt: '2026-11-24T22:19:51.667Z',
    },
  ]);
  assert.deepEqual(texts(p, 'user', child), ['REPLY:child says hi']);
  assert.deepEqual(texts(p, 'assistant', child), ['child says hi']);
  assert.deepEqual(texts(p, 'assistant'), ['done: child says hi']);
  const task = p.messages.find((m) => m.tool?.name === 'task');
  assert.deepEqual(task, {
    role: 'tool',
    text: 'task: look around',
    tool: { name: 'task', input: 'look around: REPLY:child says hi', output: 'child says hi', status: 'completed' },
  });
  assert.equal(p.state.lastAssistantText, 'done: child says hi', "the run's answer, not the child's");
  assert.equal(p.state.toolUses, 1);
  assert.deepEqual(verdictOf('task.jsonl', p), { outcome: 'succeeded', error: null, reason: null });
});

test("task-child-tool: the child's own tool call is counted and tagged with the child", () => {
  const p = parse('task-child-tool.jsonl');
  const child = '4e064fc7-19c6-4f53-849f-faeb212b37dc';
  assert.equal(p.state.children.length, 1);
  assert.equal(p.state.children[0]!.id, child);
  assert.equal(p.state.toolUses, 2, 'the task and the child bash');
  const bash = p.messages.find((m) => m.tool?.name === 'bash');
  assert.equal(bash?.childId, child);
  assert.deepEqual(bash?.tool, { name: 'bash', input: 'echo child-ran-this', output: 'child-ran-this', status: 'completed' });
  assert.deepEqual(texts(p, 'assistant', child), ['done: child-ran-this']);
  assert.equal(p.state.lastAssistantText, 'done: done: child-ran-this');
});

test('task-background: the child answers after the turn that launched it; the answer is the turn after the injected read_agent', () => {
  const p = parse('task-background.jsonl');
  const child = '51e26743-b84b-4817-a8f3-ed7f8a8ab03f';
  assert.deepEqual(childRows(p.state), [[child, 'background child', 'done', 'stream']]);
  assert.deepEqual(texts(p, 'assistant', child), ['background child says hi']);
  assert.equal(p.state.lastAssistantText, 'ok (no directive)', 'the last turn of the run, after its child reported');
  assert.deepEqual(
    p.messages.filter((m) => m.role === 'tool').map((m) => m.tool!.name),
    ['task', 'read_agent'],
  );
  assert.deepEqual(verdictOf('task-background.jsonl', p), { outcome: 'succeeded', error: null, reason: null });
});

test('resume: both runs report the same session; each answer is its own run', () => {
  const one = parse('resume-1.jsonl');
  const two = parse('resume-2.jsonl');
  assert.equal(one.state.sessionId, '63c45e13-31ce-4fbc-8220-84045cf2e6cf');
  assert.equal(two.state.sessionId, one.state.sessionId);
  assert.equal(one.state.lastAssistantText, 'first answer');
  assert.deepEqual(texts(two, 'assistant'), ['second answer']);
  assert.deepEqual(verdictOf('resume-2.jsonl', two), { outcome: 'succeeded', error: null, reason: null });
});

test("turns: one per assistant.turn_start of the run itself (a sub-agent's carry its agentId); the caps it can be held to", () => {
  assert.equal(parse('plain.jsonl').state.turns, 1);
  assert.equal(parse('bash.jsonl').state.turns, 2);
  assert.equal(parse('task.jsonl').state.turns, 2, "the child's turn is not the run's");
  assert.deepEqual(copilot.caps, { cost: null, tokens: 'stream', turns: 'stream' });
});

test("API errors: session.error is the run's error in Copilot's words, with its errorType and status kept", () => {
  const cases = [
    ['error-500.jsonl', 'query', 500, 'api-error', /^Failed to get response from the AI model; retried 5 times .*Last error: 500 fake upstream failure$/],
    ['error-429.jsonl', 'rate_limit', 429, 'rate-limit', /^Failed to get response from the AI model; retried 5 times .*Last error: 429 fake slow down$/],
    [
      'error-401.jsonl',
      'authentication',
      401,
      'auth',
      /^Authentication failed with provider at http:\/\/127\.0\.0\.1:\d+\/v1 \(HTTP 401\)\. Check your COPILOT_PROVIDER_API_KEY/,
    ],
    ['prompt-budget.jsonl', 'query', null, 'api-error', /^Request exceeds the model's prompt budget after reserving output \(16010 tokens; limit 14000\)/],
  ] as const;
  for (const [name, type, statusCode, reason, message] of cases) {
    const p = parse(name);
    const v = verdictOf(name, p);
    assert.equal(v.outcome, 'failed', name);
    assert.equal(v.reason, reason, name);
    assert.match(v.error ?? '', message, name);
    assert.ok(!v.error?.includes('\n'), `${name}: one line`);
    assert.equal(p.state.fatalError, v.error);
    const end = p.ending;
    assert.equal(end?.error?.type, type, name);
    assert.equal(end?.error?.statusCode, statusCode, name);
    assert.equal(end?.resultExitCode, 1, name);
    assert.equal(p.state.lastAssistantText, null, name);
    assert.match(p.state.sessionId ?? '', /^[0-9a-f-]{36}$/, `${name}: the result line still names the session`);
  }
});

test('SIGTERM during a tool: abort (user_abort), the cut tool call is incomplete; with or without the result line Copilot may print', () => {
  for (const name of ['sigterm-bash.jsonl', 'sigterm-bash-result.jsonl']) {
    const p = parse(name);
    assert.equal(p.ending.aborted, 'user_abort', name);
    assert.deepEqual(
      p.messages.map((m) => [m.role, m.text, m.tool?.status]),
      [['tool', 'bash: sleep 300; echo never-printed', 'incomplete']],
      name,
    );
    assert.equal(p.state.lastAssistantText, null);
    assert.deepEqual(verdictOf(name, p), { outcome: 'failed', error: 'copilot aborted the turn (user_abort)', reason: 'crashed' }, name);
  }
  assert.equal(parse('sigterm-bash.jsonl').state.sessionId, null, 'no result line: the session id is only ours (chosen before the run)');
  assert.equal(parse('sigterm-bash-result.jsonl').ending.resultExitCode, 0, 'an aborted turn can still say exitCode 0');
});

test('SIGTERM during a child: the child is torn down (subagent.completed cancelled) and recorded cancelled, never done', () => {
  const p = parse('sigterm-task.jsonl');
  assert.deepEqual(
    p.state.children.map((c) => [c.id, c.status, c.statusSource]),
    [['1161fdb6-ce93-4d9c-9b18-1e1c9a2143b2', 'cancelled', 'stream']],
  );
  assert.deepEqual(
    p.messages.filter((m) => m.role === 'tool').map((m) => [m.tool!.name, m.tool!.status, m.childId ?? null]),
    [
      ['task', 'incomplete', null],
      ['bash', 'incomplete', '1161fdb6-ce93-4d9c-9b18-1e1c9a2143b2'],
    ],
  );
  assert.equal(verdictOf('sigterm-task.jsonl', p).outcome, 'failed');
});

test('verdict: exit statuses without a Copilot error; a child the stream never ended takes the run end, marked inferred', () => {
  const plain = readFileSync(join(FIX, 'plain.jsonl'), 'utf8');
  const noResult = plain
    .split('\n')
    .filter((l) => !l.startsWith('{"type":"result"'))
    .join('\n');
  assert.deepEqual(parseText(noResult).verdict({ code: 0, signal: null }), failed('copilot exited with status 0 without its result line', 'crashed'));
  // An unknown --resume id: nothing on stdout, exit 1 (the core adds stderr's "Error: No session … matched").
  assert.deepEqual(parseText('').verdict({ code: 1, signal: null }), failed('copilot exited with status 1', 'crashed'));
  assert.deepEqual(parseText(plain).verdict({ code: null, signal: 'SIGKILL' }), failed('copilot was killed by SIGKILL', 'crashed'));
  const started = readFileSync(join(FIX, 'task.jsonl'), 'utf8')
    .split('\n')
    .filter((l) => !l.startsWith('{"type":"subagent.completed"'))
    .join('\n');
  const p = parseText(started);
  assert.equal(p.state.children[0]!.status, 'running');
  assert.equal(p.verdict({ code: 0, signal: null }).outcome, 'succeeded');
  assert.deepEqual([p.state.children[0]!.status, p.state.children[0]!.statusSource], ['done', 'inferred']);
});

test('noise and a torn line are skipped and counted; the rest still parses', () => {
  const plain = readFileSync(join(FIX, 'plain.jsonl'), 'utf8');
  const p = parseText(`Warning: not JSON\n{"broken":\n${plain}{"type":"assistant.message","data":{"content":"torn`);
  assert.equal(p.state.skippedLines, 3);
  assert.equal(p.state.lastAssistantText, 'hello from the fake model');
});

test("childMessages: the child's events from its session's events.jsonl in the run's store ($COPILOT_HOME, else $HOME/.copilot)", async () => {
  const home = mkdtempSync(join(tmpdir(), 'copilot-store-'));
  try {
    cpSync(join(FIX, 'store'), join(home, '.copilot'), { recursive: true });
    const session = 'b8b5862c-c6f4-46f0-bfe9-c165f60b10b2';
    const child = '4e064fc7-19c6-4f53-849f-faeb212b37dc';
    const read = async (q: { childId?: string; sessionId?: string | null; storeEnv: Record<string, string> }) => {
      const got: Message[] = [];
      const found = await copilot.childMessages!(
        { sessionId: q.sessionId === undefined ? session : q.sessionId, cwd: '/w', childId: q.childId ?? child, storeEnv: q.storeEnv },
        (m) => got.push(m),
      );
      return { found, got };
    };
    let r = await read({ storeEnv: { HOME: home } });
    assert.equal(r.found, true);
    assert.deepEqual(
      r.got.map((m) => [m.role, m.role === 'tool' ? m.tool!.output : m.text, m.childId]),
      [
        ['user', 'TOOL:Bash:echo child-ran-this', child],
        ['tool', 'child-ran-this', child],
        ['assistant', 'done: child-ran-this', child],
      ],
    );
    r = await read({ storeEnv: { HOME: '/nonexistent', COPILOT_HOME: join(home, '.copilot') } });
    assert.equal(r.found, true, 'COPILOT_HOME wins over HOME');
    assert.equal(copilotHome({ HOME: '/h' }), '/h/.copilot');
    for (const q of [
      { childId: '00000000-0000-4000-8000-000000000000' },
      { sessionId: '00000000-0000-4000-8000-000000000000' },
      { sessionId: null },
      { childId: '../../etc' },
      { sessionId: '../session-state' },
    ]) {
      r = await read({ ...q, storeEnv: { HOME: home } });
      assert.deepEqual(r, { found: false, got: [] }, JSON.stringify(q));
    }
    r = await read({ storeEnv: { HOME: join(home, 'elsewhere') } });
    assert.equal(r.found, false, "another store: the run's own is read, never the caller's");
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
});

test("storeUsage: a run's session.usage_records appended to its session's events.jsonl since the run began — run 1, then a resumed run 2 that counts only its own", () => {
  withTempDir('copilot-usage-', (home) => {
    const session = '126b911e-a86d-454a-b679-b9c6594d767f';
    const dir = join(home, '.copilot', 'session-state', session);
    const log = join(dir, 'events.jsonl');
    const lines = readFileSync(join(FIX, 'usage', 'resume.events.jsonl'), 'utf8').split(/(?<=\n)/);
    const resumeAt = lines.findIndex((l) => l.startsWith('{"type":"session.resume"'));
    assert.ok(resumeAt > 0, 'the fixture holds two runs');
    const q = { sessionId: session, cwd: '/tmp/cap/project', storeEnv: { HOME: home } };

    // Run 1: the reader is made before Copilot made the file; each read takes what was appended.
    const run1 = copilot.open().storeUsage!(q);
    assert.equal(run1.read(), null, 'no file yet');
    mkdirSync(dir, { recursive: true });
    const firstRecord = lines.findIndex((l) => l.includes('"session.usage_record"'));
    appendFileSync(log, lines.slice(0, firstRecord).join(''));
    assert.equal(run1.read(), null, 'no usage record yet');
    // A record written in two pieces counts once, when it is whole.
    const rec = lines[firstRecord]!;
    appendFileSync(log, rec.slice(0, 100));
    assert.equal(run1.read(), null, 'a torn line waits for its rest');
    appendFileSync(log, rec.slice(100));
    assert.deepEqual(run1.read(), plainUsage(11996, 29), 'the first model call');
    appendFileSync(log, lines.slice(firstRecord + 1, resumeAt).join(''));
    const one = plainUsage(11996 + 12092, 29 + 2);
    assert.deepEqual(run1.read(), one, 'both model calls of run 1');
    // Copilot's own sum of run 1, in its session.shutdown.
    const shutdowns = lines.filter((l) => l.startsWith('{"type":"session.shutdown"')).map((l) => JSON.parse(l).data.modelMetrics['fake-model'].usage);
    assert.deepEqual([shutdowns[0].inputTokens, shutdowns[0].outputTokens], [one.inputTokens, one.outputTokens]);

    // Run 2 (--resume): the reader is made when the log holds run 1; only what follows is run 2's.
    const run2 = copilot.open().storeUsage!(q);
    assert.equal(run2.read(), null, "run 1's records are not run 2's");
    appendFileSync(log, lines.slice(resumeAt).join(''));
    const two = plainUsage(12159 + 12255, 29 + 3);
    assert.deepEqual(run2.read(), two);
    assert.deepEqual(run2.read(), two, 'read again: nothing new, the same');
    // Copilot's second shutdown sums the whole session: run 1 and run 2.
    assert.deepEqual([shutdowns[1].inputTokens, shutdowns[1].outputTokens], [one.inputTokens + two.inputTokens, one.outputTokens + two.outputTokens]);

    // COPILOT_HOME wins over HOME; a session id that is no id reads nothing.
    assert.deepEqual(
      copilot.open().storeUsage!({ ...q, storeEnv: { HOME: '/nonexistent', COPILOT_HOME: join(home, '.copilot') } }).read(),
      null,
      'made after the log was written',
    );
    for (const sessionId of [null, '../session-state', 'x/y']) assert.equal(copilot.open().storeUsage!({ ...q, sessionId }).read(), null, String(sessionId));
  });
});

test("usageReader: a sub-agent's model calls count (the task-child-tool session: as Copilot's session.shutdown sums them); cached input is not input", () => {
  withTempDir('copilot-usage-', (home) => {
    const log = join(home, 'events.jsonl');
    const reader = usageReader(log);
    cpSync(join(FIX, 'store', 'session-state', 'b8b5862c-c6f4-46f0-bfe9-c165f60b10b2', 'events.jsonl'), log);
    assert.deepEqual(reader.read(), plainUsage(12005 + 11615 + 11714 + 12103, 35 + 29 + 5 + 7), "the run's two calls and its child's two");
    assert.equal(12005 + 11615 + 11714 + 12103, 47437, "session.shutdown's modelMetrics of the session");

    // A provider that reports cache and reasoning (OpenAI's convention, which Copilot keeps: input and
    // output include them): ours keeps input without cache.
    const cached = join(home, 'cached.jsonl');
    const reader2 = usageReader(cached);
    const usage = { inputTokens: 1000, outputTokens: 50, cacheReadTokens: 600, cacheWriteTokens: 100, reasoningTokens: 20, cost: 0 };
    writeFileSync(
      cached,
      `${JSON.stringify({ type: 'session.usage_record', data: { usage } })}\nnot json\n{"type":"assistant.message","data":{"content":"session.usage_record"}}\n`,
    );
    assert.deepEqual(reader2.read(), plainUsage(300, 50, { cacheReadTokens: 600, cacheWriteTokens: 100, reasoningTokens: 20, totalTokens: 1050 }));
  });
});

test('error-429-retry-after: a 429 with Retry-After is rate-limit; Copilot says no reset time (none in its events), so none is recorded', () => {
  const p = parse('error-429-retry-after.jsonl');
  const v = verdictOf('error-429-retry-after.jsonl', p);
  assert.equal(v.reason, 'rate-limit');
  assert.match(v.error ?? '', /429 Rate limit reached for requests/);
  assert.equal(p.state.resetsAt, null);
});
