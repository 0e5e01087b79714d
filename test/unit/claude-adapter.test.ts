import { test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLAUDE_KNOWN_VERSIONS, claude } from '../../lib/agents/claude/index.js';
import { childAnswerText } from '../../lib/agents/shared/handback.js';
import { claudeConfigDir, findChildTranscript, projectSlug } from '../../lib/agents/claude/store.js';
import { toolHeadline, OUTPUT_MAX } from '../../lib/agents/shared/tools.js';
import type { Exit, LaunchInput, Message, StreamState, Verdict } from '../../lib/agents/types.js';
import { NO_CAPS } from '../../lib/registry/record.js';
import { ROOT } from '../support/paths.js';
import { answered, assistantTexts, childRows, everyFixtureCovered, failed, resumesByIdOnly, tools } from '../support/replay.js';
import { usage } from '../support/usage.js';

const FIX = join(ROOT, 'test', 'fixtures', 'agents', 'claude');

interface Parsed {
  messages: Message[];
  state: StreamState;
  verdict(exit: Exit): Verdict;
}

/** Feeds a text through a new run line by line, as the supervisor does (no trailing empty line). */
function parseText(text: string, end = true): Parsed {
  const messages: Message[] = [];
  const p = claude.open({ onMessage: (m) => messages.push(m) });
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  for (const l of lines) p.line(l);
  if (end) p.end();
  return { messages, state: p.state, verdict: (exit) => p.verdict(exit) };
}

function parseFixture(name: string): Parsed {
  return parseText(readFileSync(join(FIX, name), 'utf8'));
}

function launchInput(over: Partial<LaunchInput> = {}): LaunchInput {
  return { mode: 'new', cwd: '/w', model: null, variant: null, agent: null, files: [], extraArgs: [], sessionId: null, caps: NO_CAPS, ...over };
}

test('every fixture of the claude CLI is covered by this file', () => {
  everyFixtureCovered(FIX, [
    'api-error-401.ndjson',
    'api-error-429.ndjson',
    'api-error-500.ndjson',
    'bash-permission-denied.ndjson',
    'bash-permission-denied-2.1.331.ndjson',
    'bash-tool.ndjson',
    'max-budget.ndjson',
    'max-budget-2.1.331.ndjson',
    'max-turns.ndjson',
    'max-turns-2.1.331.ndjson',
    'partial-messages.ndjson',
    'plain-reply.ndjson',
    'rate-limit-rejected.ndjson',
    'rate-limit-warning.ndjson',
    'resume-1-first-with-session-id.ndjson',
    'resume-2-resume.ndjson',
    'sigint-bash.ndjson',
    'sigint-during-api.ndjson',
    'sigterm-early-bash.ndjson',
    'task-subagent-background.ndjson',
    'task-subagent.ndjson',
    'README.md',
    'transcript',
    '2.1.331',
  ]);
});

test('launch: new run with our session id, flags mapped, extra args last, no prompt on argv', () => {
  const l = claude.launch(
    launchInput({
      sessionId: 'aaaaaaaa-1111-4111-8111-111111111111',
      model: 'sonnet',
      variant: 'high',
      agent: 'Plan',
      extraArgs: ['--allowedTools', 'Bash(git *)', 'Edit'],
    }),
  );
  assert.equal(l.command, 'claude');
  assert.deepEqual(l.env, {});
  assert.deepEqual(l.args, [
    '-p',
    '--output-format',
    'stream-json',
    '--verbose',
    '--session-id',
    'aaaaaaaa-1111-4111-8111-111111111111',
    '--model',
    'sonnet',
    '--effort',
    'high',
    '--agent',
    'Plan',
    '--allowedTools',
    'Bash(git *)',
    'Edit',
  ]);
});

test("launch: the native caps are Claude's own limits, before the extra args (--max-tokens is the supervisor's)", () => {
  const l = claude.launch(launchInput({ caps: { maxCostUsd: 0.5, maxTokens: 1000, maxTurns: 3 }, extraArgs: ['--allowedTools', 'Bash'] }));
  assert.deepEqual(l.args, ['-p', '--output-format', 'stream-json', '--verbose', '--max-budget-usd', '0.5', '--max-turns', '3', '--allowedTools', 'Bash']);
  const r = claude.launch(
    launchInput({ mode: 'resume', sessionId: 'aaaaaaaa-1111-4111-8111-111111111111', caps: { maxCostUsd: 2, maxTokens: null, maxTurns: null } }),
  );
  assert.deepEqual(r.args.slice(-2), ['--max-budget-usd', '2']);
});

test('launch: resume passes the explicit id with --resume (never --continue, never --session-id)', () => {
  const l = claude.launch(launchInput({ mode: 'resume', sessionId: 'aaaaaaaa-1111-4111-8111-111111111111', extraArgs: ['--permission-mode', 'acceptEdits'] }));
  assert.deepEqual(l.args, [
    '-p',
    '--output-format',
    'stream-json',
    '--verbose',
    '--resume',
    'aaaaaaaa-1111-4111-8111-111111111111',
    '--permission-mode',
    'acceptEdits',
  ]);
  resumesByIdOnly(l.args, () => claude.launch(launchInput({ mode: 'resume', sessionId: null })));
});

test('plain-reply: session id, answer, usage and cost from the result line', () => {
  const p = parseFixture('plain-reply.ndjson');
  answered(p, 'a7514beb-cb2a-48ba-82cf-5285e30f9b8e', 'hello world');
  assert.equal(p.state.toolUses, 0);
  assert.deepEqual(p.state.usage, usage(18989, 10, { costUsd: 0.095195 }));
  assert.equal(p.state.skippedLines, 0);
  assert.equal(p.state.fatalError, null);
  assert.deepEqual(p.verdict({ code: 0, signal: null }), { outcome: 'succeeded', error: null, reason: null });
});

test('streaming: the session id is known from the first line; usage is an estimate until the result', () => {
  const lines = readFileSync(join(FIX, 'plain-reply.ndjson'), 'utf8').split('\n');
  const messages: Message[] = [];
  const p = claude.open({ onMessage: (m) => messages.push(m) });
  p.line(lines[0]!);
  const state: StreamState = p.state;
  assert.equal(state.sessionId, 'a7514beb-cb2a-48ba-82cf-5285e30f9b8e');
  assert.equal(state.usage as unknown, null);
  assert.ok(p.state.lastActivityAt);
  p.line(lines[1]!);
  assert.equal(messages.length, 1);
  assert.equal(p.state.lastAssistantText, 'hello world');
  assert.deepEqual(p.state.usage, usage(18989, 1));
  p.line(lines[2]!);
  assert.equal(p.state.usage?.outputTokens, 10);
  assert.equal(p.state.usage?.costUsd, 0.095195);
});

test('bash-tool: one line per content block, the tool call with its output as role tool', () => {
  const p = parseFixture('bash-tool.ndjson');
  assert.equal(p.state.sessionId, 'ee76df9f-00b3-43b9-82b6-3a9d574aa563');
  assert.deepEqual(
    p.messages.map((m) => m.role),
    ['assistant', 'tool', 'assistant'],
  );
  const [t] = tools(p);
  assert.equal(t!.text, 'Bash: echo hi-from-bash && pwd');
  assert.deepEqual(t!.tool, { name: 'Bash', input: 'echo hi-from-bash && pwd', output: 'hi-from-bash\n/tmp/cc-samples/work', status: 'completed' });
  assert.equal(p.state.toolUses, 1);
  assert.equal(p.state.lastAssistantText, 'DONE. Last tool result: hi-from-bash\n/tmp/cc-samples/work');
  assert.deepEqual(p.state.usage, usage(38084, 70, { costUsd: 0.19217 }));
  assert.equal(p.verdict({ code: 0, signal: null }).outcome, 'succeeded');
});

test('bash-permission-denied: refused tool is an error tool result; exit 0 and result/success, but the run failed: permission-denied', () => {
  const p = parseFixture('bash-permission-denied.ndjson');
  const [t] = tools(p);
  assert.equal(t!.tool!.status, 'error');
  assert.equal(t!.tool!.name, 'Bash');
  assert.match(t!.tool!.output!, /was blocked/);
  assert.match(p.state.lastAssistantText!, /^DONE\. Last tool result: touch in/, 'the answer is kept');
  assert.equal(p.state.usage?.costUsd, 0.19357999999999997);
  assert.deepEqual(p.verdict({ code: 0, signal: null }), {
    outcome: 'failed',
    error:
      'claude was refused permission for 1 tool call: Bash: touch /tmp/cc-samples/work/denied.txt && echo made (grant what the task needs: docs/agents/claude.md, "Permissions")',
    reason: 'permission-denied',
  });
  // A failure of its own comes first: the denial does not hide it.
  assert.equal(p.verdict({ code: null, signal: 'SIGKILL' }).reason, 'crashed');
});

test('api-error-500 / 401: subtype success with is_error → failed with the API message', () => {
  const p500 = parseFixture('api-error-500.ndjson');
  assert.equal(p500.state.sessionId, '3c1e3a05-ebd7-4c7e-a1d3-b198e400d588');
  assert.match(p500.state.fatalError!, /^API Error: 500 fake failure 500/);
  const v = p500.verdict({ code: 1, signal: null });
  assert.equal(v.outcome, 'failed');
  assert.equal(v.reason, 'api-error', 'api_error_status 500');
  assert.match(v.error!, /API Error: 500 fake failure 500/);
  // even if the exit code said 0, is_error decides
  assert.equal(p500.verdict({ code: 0, signal: null }).outcome, 'failed');
  assert.deepEqual(p500.state.usage, usage(0, 0, { costUsd: 0 }));

  const p401 = parseFixture('api-error-401.ndjson');
  const v401 = p401.verdict({ code: 1, signal: null });
  assert.equal(v401.outcome, 'failed');
  assert.equal(v401.reason, 'auth', 'api_error_status 401');
  assert.match(v401.error!, /Failed to authenticate\. API Error: 401 fake failure 401/);
});

test("max-turns: error_max_turns → failed, Claude's reason quoted", () => {
  const p = parseFixture('max-turns.ndjson');
  assert.equal(p.state.toolUses, 1);
  assert.equal(tools(p)[0]!.tool!.output, 't1');
  const v = p.verdict({ code: 1, signal: null });
  assert.equal(v.outcome, 'failed');
  assert.equal(v.reason, 'max-turns');
  assert.match(v.error!, /error_max_turns/);
  assert.match(v.error!, /Reached maximum number of turns \(1\)/);
  assert.equal(p.state.lastAssistantText, 'Calling Bash.');
  assert.equal(p.state.usage?.costUsd, 0.096085);
});

test('api-error-429: a usage limit (HTTP 429) is rate-limit', () => {
  const p = parseFixture('api-error-429.ndjson');
  const v = p.verdict({ code: 1, signal: null });
  assert.deepEqual(v, { outcome: 'failed', error: 'API Error: Request rejected (429) · You have reached your usage limit', reason: 'rate-limit' });
});

test('max-budget: --max-budget-usd reached is error_max_budget_usd → max-cost, with the cost Claude counted', () => {
  const p = parseFixture('max-budget.ndjson');
  const v = p.verdict({ code: 1, signal: null });
  assert.equal(v.outcome, 'failed');
  assert.equal(v.reason, 'max-cost');
  assert.match(v.error!, /^error_max_budget_usd: Reached maximum budget \(\$0\.01\)$/);
  assert.equal(p.state.usage?.costUsd, 0.09641999999999999, 'past the cap: Claude checks it after each turn');
  assert.equal(p.state.turns, 1);
});

test('Claude Code 2.1.331 says the same: error_max_turns, error_max_budget_usd, permission_denials (captured against the same fake)', () => {
  const verdict = (f: string, code: number) => parseFixture(f).verdict({ code, signal: null });
  assert.deepEqual(verdict('max-turns-2.1.331.ndjson', 1), failed('error_max_turns, max_turns: Reached maximum number of turns (1)', 'max-turns'));
  assert.deepEqual(verdict('max-budget-2.1.331.ndjson', 1), failed('error_max_budget_usd, budget_exhausted: Reached maximum budget ($0.01)', 'max-cost'));
  const denied = verdict('bash-permission-denied-2.1.331.ndjson', 0);
  assert.equal(denied.reason, 'permission-denied');
  assert.match(denied.error!, /refused permission for 1 tool call: Bash: touch \/tmp\/cap-x\.txt/);
});

test("turns: one per model message of the run itself (a sub-agent's are not the run's)", () => {
  assert.equal(parseFixture('plain-reply.ndjson').state.turns, 1);
  assert.equal(parseFixture('bash-tool.ndjson').state.turns, 2);
  const task = parseFixture('task-subagent.ndjson');
  assert.equal(task.state.turns, 2, 'the call of the Agent tool and the answer after it');
});

test('partial-messages: stream_event lines are understood and ignored (the full assistant line counts)', () => {
  const p = parseFixture('partial-messages.ndjson');
  assert.deepEqual(assistantTexts(p), ['partial messages here']);
  assert.equal(p.state.lastAssistantText, 'partial messages here');
  assert.equal(p.state.skippedLines, 0);
  assert.equal(p.state.usage?.outputTokens, 12);
});

test('resume-1 / resume-2: the same session id in both runs; each run has its own answer and usage', () => {
  const a = parseFixture('resume-1-first-with-session-id.ndjson');
  const b = parseFixture('resume-2-resume.ndjson');
  assert.equal(a.state.sessionId, 'aaaaaaaa-1111-4111-8111-111111111111');
  assert.equal(b.state.sessionId, 'aaaaaaaa-1111-4111-8111-111111111111');
  assert.equal(a.state.lastAssistantText, 'first answer');
  assert.equal(b.state.lastAssistantText, 'second answer');
  assert.equal(a.state.usage?.costUsd, 0.095215);
  assert.equal(b.state.usage?.costUsd, 0.09536);
  assert.equal(b.state.usage?.inputTokens, 19022);
});

test('sigint-bash: the interrupted tool is in the transcript; error_during_execution → failed', () => {
  const p = parseFixture('sigint-bash.ndjson');
  assert.deepEqual(
    p.messages.map((m) => m.role),
    ['assistant', 'tool'],
  );
  const t = tools(p)[0]!;
  assert.equal(t.text, 'Bash: sleep 40; echo slept');
  assert.equal(t.tool!.status, 'error');
  assert.ok(t.tool!.output!.length <= OUTPUT_MAX + 40);
  // "[Request interrupted by user for tool use]" is Claude's own note, not a user message
  assert.ok(!p.messages.some((m) => m.role === 'user'));
  const v = p.verdict({ code: 1, signal: null });
  assert.equal(v.outcome, 'failed');
  assert.equal(v.reason, 'crashed', "interrupted by someone else: a cancel of ours is the core's to record");
  assert.match(v.error!, /error_during_execution, aborted_tools/);
});

test('sigint-during-api: init only, exit 0 → failed (no result line), session id kept', () => {
  const p = parseFixture('sigint-during-api.ndjson');
  assert.equal(p.state.sessionId, '9b4922e4-b381-4066-96ae-e087c3820766');
  assert.equal(p.messages.length, 0);
  assert.equal(p.state.lastAssistantText, null);
  const v = p.verdict({ code: 0, signal: null });
  assert.equal(v.outcome, 'failed');
  assert.equal(v.reason, 'crashed');
  assert.match(v.error!, /without reporting a result/);
});

test('sigterm-early-bash: cut off mid-tool; the unfinished call is kept at end(); exit 143 → failed', () => {
  const p = parseFixture('sigterm-early-bash.ndjson');
  const t = tools(p)[0]!;
  assert.deepEqual(t.tool, { name: 'Bash', input: 'sleep 40; echo slept', output: null, status: 'incomplete' });
  assert.equal(p.state.toolUses, 1);
  assert.equal(p.state.usage?.costUsd, null, 'no result line: the usage is an estimate without cost');
  assert.equal(p.state.usage?.inputTokens, 18993);
  const v = p.verdict({ code: 143, signal: null });
  assert.equal(v.outcome, 'failed');
  assert.equal(v.reason, 'crashed');
  assert.match(v.error!, /status 143 before reporting a result/);
  assert.match(p.verdict({ code: null, signal: 'SIGKILL' }).error!, /killed by SIGKILL/);
  // Without end() the pending call is not emitted (the parser is streaming: it never guesses the end).
  const noEnd = parseText(readFileSync(join(FIX, 'sigterm-early-bash.ndjson'), 'utf8'), false);
  assert.equal(tools(noEnd).length, 0);
});

test('task-subagent: task_started makes the child, its lines carry childId, its answer comes from tool_use_result', () => {
  const p = parseFixture('task-subagent.ndjson');
  const id = 'a205944a1b4de9572';
  assert.equal(p.state.children.length, 1);
  const c = p.state.children[0]!;
  assert.equal(c.id, id);
  assert.equal(c.cli, 'claude');
  assert.equal(c.description, 'fake subtask');
  assert.equal(c.status, 'done');
  assert.equal(c.statusSource, 'stream');
  assert.equal(c.finishedAt, new Date(1795304225301).toISOString());
  assert.ok(c.startedAt);
  // the child's prompt and answer, tagged with its id; the parent's Agent call as a tool message
  assert.deepEqual(
    p.messages.filter((m) => m.childId === id).map((m) => [m.role, m.text]),
    [
      ['user', 'REPLY:child says hi'],
      ['assistant', 'child says hi'],
    ],
  );
  const agentCall = tools(p)[0]!;
  assert.equal(agentCall.text, 'Agent: fake subtask');
  assert.equal(agentCall.childId, undefined);
  assert.equal(agentCall.tool!.name, 'Agent');
  assert.equal(agentCall.tool!.input, 'fake subtask: REPLY:child says hi');
  assert.equal(agentCall.tool!.status, 'completed');
  assert.match(agentCall.tool!.output!, /^child says hi\n/);
  // the run's answer is the top-level one, never the child's
  assert.match(p.state.lastAssistantText!, /^DONE\. Last tool result: child says hi/);
  // usage: modelUsage (process-wide, the sub-agent included) and total_cost_usd
  assert.deepEqual(p.state.usage, usage(49416, 131, { costUsd: 0.250355 }));
  assert.equal(p.verdict({ code: 0, signal: null }).outcome, 'succeeded');
});

test('task-subagent-background: two init and two result lines; the child streams its text; cumulative usage', () => {
  const p = parseFixture('task-subagent-background.ndjson');
  const id = 'a829d012347756e5c';
  assert.equal(p.state.sessionId, '7c36183c-0662-4abb-997b-fbfa93282fbc');
  assert.deepEqual(childRows(p.state), [[id, 'bg job', 'done', 'stream']]);
  assert.equal(p.state.children[0]!.finishedAt, new Date(1795304233034).toISOString());
  assert.deepEqual(assistantTexts(p, id), ['bg agent finished']);
  const agentCall = tools(p)[0]!;
  assert.equal(agentCall.tool!.status, 'async_launched');
  assert.match(p.state.lastAssistantText!, /^DONE\. Last tool result: Async agent launched successfully/);
  assert.equal(p.state.usage?.costUsd, 0.33207);
  assert.equal(p.state.usage?.inputTokens, 65414);
  assert.equal(p.state.usage?.outputTokens, 200);
  assert.equal(p.verdict({ code: 0, signal: null }).outcome, 'succeeded');
});

test("a child that never reported an end takes the run's end (statusSource inferred)", () => {
  const text = readFileSync(join(FIX, 'task-subagent.ndjson'), 'utf8').split('\n');
  // cut right after task_started (line 3): the child is running when the stream ends
  const p = parseText(text.slice(0, 4).join('\n'));
  assert.deepEqual(
    p.state.children.map((c) => [c.id, c.status]),
    [['a205944a1b4de9572', 'running']],
  );
  const v = p.verdict({ code: null, signal: 'SIGKILL' });
  assert.equal(v.outcome, 'failed');
  const c = p.state.children[0]!;
  assert.equal(c.status, 'failed');
  assert.equal(c.statusSource, 'inferred');
  assert.ok(c.finishedAt);
});

test('noise and a torn last line are skipped and counted, never fatal', () => {
  const lines = readFileSync(join(FIX, 'bash-tool.ndjson'), 'utf8').split('\n').filter(Boolean);
  const torn = lines[lines.length - 1]!.slice(0, 120);
  const text = ['npm warn something', lines[0], '', 'Error: not json {', '42', '"a string"', ...lines.slice(1, -1), torn].join('\n');
  const p = parseText(text);
  assert.equal(p.state.skippedLines, 5, 'noise, "Error…", 42, "a string", the torn line (blank lines are not counted)');
  assert.equal(p.state.sessionId, 'ee76df9f-00b3-43b9-82b6-3a9d574aa563');
  assert.equal(p.state.lastAssistantText, 'DONE. Last tool result: hi-from-bash\n/tmp/cc-samples/work');
  assert.equal(tools(p).length, 1);
  // the result line was torn: no verdict from Claude, so exit 0 is not enough
  assert.equal(p.verdict({ code: 0, signal: null }).outcome, 'failed');
});

test('tool summaries are short and readable', () => {
  const big = 'x'.repeat(10_000);
  const line = (o: unknown) => JSON.stringify(o);
  const text = [
    line({
      type: 'assistant',
      message: { id: 'm1', content: [{ type: 'tool_use', id: 't1', name: 'Read', input: { file_path: '/etc/hosts' } }] },
      parent_tool_use_id: null,
      session_id: 's',
    }),
    line({ type: 'user', message: { content: [{ type: 'tool_result', tool_use_id: 't1', content: big }] }, parent_tool_use_id: null, session_id: 's' }),
    line({
      type: 'assistant',
      message: { id: 'm2', content: [{ type: 'tool_use', id: 't2', name: 'TodoWrite', input: { todos: [{ content: big }] } }] },
      parent_tool_use_id: null,
      session_id: 's',
    }),
    line({
      type: 'user',
      message: { content: [{ type: 'tool_result', tool_use_id: 't2', content: [{ type: 'text', text: 'ok' }] }] },
      tool_use_result: { interrupted: true },
      parent_tool_use_id: null,
      session_id: 's',
    }),
  ].join('\n');
  const p = parseText(text);
  const [read, todo] = tools(p);
  assert.equal(read!.text, 'Read: /etc/hosts');
  assert.ok(read!.tool!.output!.length < 600, 'output capped');
  assert.match(read!.tool!.output!, /more chars\)$/);
  assert.equal(todo!.text, 'TodoWrite');
  assert.ok(todo!.tool!.input!.length < 400, 'input capped');
  assert.equal(todo!.tool!.status, 'interrupted');
  assert.equal(toolHeadline('Bash', { command: 'a\nb' }), 'Bash: a ⏎ b');
  assert.equal(toolHeadline('Grep', { pattern: 'foo' }), 'Grep: foo');
});

test("childMessages: reads projects/<slug>/<session>/subagents/agent-<id>.jsonl from the run's store", async () => {
  const home = mkdtempSync(join(tmpdir(), 'claude-store-'));
  try {
    const session = 'ba8bbd3f-daf6-4e15-8612-cdd3f7712f10';
    const cwd = '/tmp/cc-samples/work';
    const config = join(home, '.claude');
    const sub = join(config, 'projects', projectSlug(cwd), session, 'subagents');
    mkdirSync(sub, { recursive: true });
    copyFileSync(join(FIX, 'transcript', 'session-with-subagent.jsonl'), join(config, 'projects', projectSlug(cwd), `${session}.jsonl`));
    copyFileSync(join(FIX, 'transcript', 'subagent-agent-a205944a1b4de9572.jsonl'), join(sub, 'agent-a205944a1b4de9572.jsonl'));
    copyFileSync(join(FIX, 'transcript', 'subagent-agent-a205944a1b4de9572.meta.json'), join(sub, 'agent-a205944a1b4de9572.meta.json'));
    assert.equal(projectSlug(cwd), '-tmp-cc-samples-work');

    const read = async (q: { childId: string; storeEnv: Record<string, string>; cwd?: string; sessionId?: string | null }) => {
      const got: Message[] = [];
      const found = await claude.childMessages!(
        { sessionId: q.sessionId === undefined ? session : q.sessionId, cwd: q.cwd ?? cwd, childId: q.childId, storeEnv: q.storeEnv },
        (m) => got.push(m),
      );
      return { found, got };
    };
    // HOME → $HOME/.claude
    let r = await read({ childId: 'a205944a1b4de9572', storeEnv: { HOME: home } });
    assert.equal(r.found, true);
    assert.deepEqual(
      r.got.map((m) => [m.role, m.text, m.childId]),
      [
        ['user', 'REPLY:child says hi', 'a205944a1b4de9572'],
        ['assistant', 'child says hi', 'a205944a1b4de9572'],
      ],
    );
    // CLAUDE_CONFIG_DIR wins over HOME
    r = await read({ childId: 'a205944a1b4de9572', storeEnv: { HOME: '/nonexistent', CLAUDE_CONFIG_DIR: config } });
    assert.equal(r.found, true);
    assert.equal(claudeConfigDir({ HOME: '/h' }), '/h/.claude');
    // found by scanning when the cwd's slug is not the directory name (long paths are hashed by Claude)
    r = await read({ childId: 'a205944a1b4de9572', storeEnv: { HOME: home }, cwd: '/some/other/dir' });
    assert.equal(r.found, true);
    // no session id recorded: every session is scanned
    r = await read({ childId: 'a205944a1b4de9572', storeEnv: { HOME: home }, sessionId: null });
    assert.equal(r.found, true);
    // asked by the Agent tool_use id: the .meta.json names it
    r = await read({ childId: 'toolu_ba4b89ee593aac71e19108b8', storeEnv: { HOME: home } });
    assert.equal(r.found, true);
    assert.equal(r.got[1]!.text, 'child says hi');
    // unknown child, another store, hostile ids
    assert.equal((await read({ childId: 'afffffffffffffff', storeEnv: { HOME: home } })).found, false);
    assert.equal((await read({ childId: 'a205944a1b4de9572', storeEnv: { HOME: join(home, 'nope') } })).found, false);
    assert.equal((await read({ childId: '../../../etc/passwd', storeEnv: { HOME: home } })).found, false);
    assert.equal(findChildTranscript({ sessionId: '../x', cwd, childId: 'a205944a1b4de9572', storeEnv: { HOME: home } }), null);
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
});

test('childMessages: a child that used a tool (transcript format, toolUseResult camelCase)', async () => {
  const home = mkdtempSync(join(tmpdir(), 'claude-store-'));
  try {
    const sub = join(home, '.claude', 'projects', '-w', 's1', 'subagents');
    mkdirSync(sub, { recursive: true });
    const l = (o: unknown) => JSON.stringify(o);
    writeFileSync(
      join(sub, 'agent-abc123.jsonl'),
      [
        l({ type: 'user', isSidechain: true, agentId: 'abc123', sessionId: 's1', message: { role: 'user', content: 'TOOL:Bash:echo child-out' } }),
        l({ type: 'attachment', isSidechain: true, agentId: 'abc123', attachment: { type: 'skill_listing', content: 'noise' } }),
        l({
          type: 'assistant',
          isSidechain: true,
          agentId: 'abc123',
          message: { id: 'm1', role: 'assistant', content: [{ type: 'tool_use', id: 'tu1', name: 'Bash', input: { command: 'echo child-out' } }] },
        }),
        l({
          type: 'user',
          isSidechain: true,
          agentId: 'abc123',
          message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'tu1', content: 'child-out', is_error: false }] },
          toolUseResult: { stdout: 'child-out', interrupted: false },
        }),
        l({
          type: 'assistant',
          isSidechain: true,
          agentId: 'abc123',
          message: { id: 'm2', role: 'assistant', content: [{ type: 'text', text: 'done: child-out' }] },
        }),
        '{"type":"assistant","message":{"id":"m3","content":[{"ty', // torn
      ].join('\n'),
    );
    const got: Message[] = [];
    const found = await claude.childMessages!({ sessionId: 's1', cwd: '/w', childId: 'abc123', storeEnv: { CLAUDE_CONFIG_DIR: join(home, '.claude') } }, (m) =>
      got.push(m),
    );
    assert.equal(found, true);
    assert.deepEqual(
      got.map((m) => [m.role, m.text, m.tool?.output ?? null]),
      [
        ['user', 'TOOL:Bash:echo child-out', null],
        ['tool', 'Bash: echo child-out', 'child-out'],
        ['assistant', 'done: child-out', null],
      ],
    );
    assert.ok(got.every((m) => m.childId === 'abc123'));
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
});

const L = (o: unknown) => JSON.stringify(o);
const S = 'se55i0n0-0000-4000-8000-000000000000';
/** A result/success line of session S: the answer, the cost, the usage of the turn and of the model (input, output tokens). */
const success = (result: string, cost: number, [input, output]: number[], [modelIn, modelOut]: number[], more: object = {}) =>
  L({
    type: 'result',
    subtype: 'success',
    is_error: false,
    result,
    session_id: S,
    total_cost_usd: cost,
    usage: { input_tokens: input, output_tokens: output },
    modelUsage: { m: { inputTokens: modelIn, outputTokens: modelOut, costUSD: cost } },
    ...more,
  });

test("background Bash (task_type local_bash) is not a child; the follow-up turn's result is the answer", () => {
  // Shape captured from 2.1.197: the first result comes before the background command ends.
  const p = parseText(
    [
      L({ type: 'system', subtype: 'init', session_id: S }),
      L({
        type: 'assistant',
        message: { id: 'm1', content: [{ type: 'tool_use', id: 'tb', name: 'Bash', input: { command: 'sleep 1; echo bgout', run_in_background: true } }] },
        parent_tool_use_id: null,
        session_id: S,
      }),
      L({ type: 'system', subtype: 'task_started', task_id: 'bq2mr2b1l', tool_use_id: 'tb', description: 'bg', task_type: 'local_bash', session_id: S }),
      L({
        type: 'user',
        message: { content: [{ type: 'tool_result', tool_use_id: 'tb', content: 'Command running in background with ID: bq2mr2b1l.' }] },
        parent_tool_use_id: null,
        session_id: S,
      }),
      L({ type: 'assistant', message: { id: 'm2', content: [{ type: 'text', text: 'started it' }] }, parent_tool_use_id: null, session_id: S }),
      success('started it', 0.1, [100, 5], [100, 5]),
      L({ type: 'system', subtype: 'task_updated', task_id: 'bq2mr2b1l', patch: { status: 'completed', end_time: 1795310925719 }, session_id: S }),
      L({ type: 'system', subtype: 'task_notification', task_id: 'bq2mr2b1l', tool_use_id: 'tb', status: 'completed', session_id: S }),
      L({ type: 'system', subtype: 'init', session_id: S }),
      L({ type: 'assistant', message: { id: 'm3', content: [{ type: 'text', text: 'after notification' }] }, parent_tool_use_id: null, session_id: S }),
      success('after notification', 0.2, [120, 6], [220, 11], { origin: { kind: 'task-notification' } }),
    ].join('\n'),
  );
  assert.deepEqual(p.state.children, []);
  assert.equal(p.state.lastAssistantText, 'after notification');
  assert.deepEqual(
    p.messages.map((m) => `${m.role}:${m.text}`),
    ['tool:Bash: sleep 1; echo bgout', 'assistant:started it', 'assistant:after notification'],
  );
  assert.equal(p.state.usage?.inputTokens, 220, 'modelUsage of the last result: the process total');
  assert.equal(p.state.usage?.costUsd, 0.2);
  assert.equal(p.verdict({ code: 0, signal: null }).outcome, 'succeeded');
});

test("a sub-agent's own sub-agent is not listed among the run's children; its lines carry its own id", () => {
  const p = parseText(
    [
      L({ type: 'system', subtype: 'init', session_id: S }),
      L({
        type: 'assistant',
        message: { id: 'm1', content: [{ type: 'tool_use', id: 'tA', name: 'Agent', input: { description: 'outer', prompt: 'p' } }] },
        parent_tool_use_id: null,
        session_id: S,
      }),
      L({ type: 'system', subtype: 'task_started', task_id: 'aouter', tool_use_id: 'tA', description: 'outer', task_type: 'local_agent', session_id: S }),
      L({
        type: 'assistant',
        message: { id: 'm2', content: [{ type: 'tool_use', id: 'tB', name: 'Agent', input: { description: 'inner', prompt: 'q' } }] },
        parent_tool_use_id: 'tA',
        session_id: S,
      }),
      L({ type: 'system', subtype: 'task_started', task_id: 'ainner', tool_use_id: 'tB', description: 'inner', task_type: 'local_agent', session_id: S }),
      L({ type: 'assistant', message: { id: 'm3', content: [{ type: 'text', text: 'inner says' }] }, parent_tool_use_id: 'tB', session_id: S }),
      L({
        type: 'user',
        message: { content: [{ type: 'tool_result', tool_use_id: 'tB', content: [{ type: 'text', text: 'inner done' }] }] },
        tool_use_result: { status: 'completed', agentId: 'ainner', content: [{ type: 'text', text: 'inner done' }] },
        parent_tool_use_id: 'tA',
        session_id: S,
      }),
      L({
        type: 'user',
        message: { content: [{ type: 'tool_result', tool_use_id: 'tA', is_error: true, content: 'outer crashed' }] },
        parent_tool_use_id: null,
        session_id: S,
      }),
    ].join('\n'),
  );
  assert.deepEqual(
    p.state.children.map((c) => [c.id, c.description, c.status]),
    [['aouter', 'outer', 'failed']],
  );
  const byChild = p.messages.filter((m) => m.childId).map((m) => `${m.childId}:${m.role}:${m.text}`);
  assert.deepEqual(byChild, ['ainner:assistant:inner says', 'ainner:assistant:inner done', 'aouter:tool:Agent: inner']);
  assert.equal(p.state.toolUses, 2);
  // no result line: the run did not finish
  assert.equal(p.verdict({ code: 1, signal: null }).outcome, 'failed');
});

test('system/api_retry lines are retries, not failures', () => {
  const lines = readFileSync(join(FIX, 'plain-reply.ndjson'), 'utf8').split('\n').filter(Boolean);
  const retry = L({
    type: 'system',
    subtype: 'api_retry',
    attempt: 1,
    max_retries: 10,
    retry_delay_ms: 500,
    error_status: 529,
    error: 'overloaded',
    session_id: 'a7514beb-cb2a-48ba-82cf-5285e30f9b8e',
  });
  const p = parseText([lines[0], retry, retry, ...lines.slice(1)].join('\n'));
  assert.equal(p.state.fatalError, null);
  assert.equal(p.state.skippedLines, 0);
  assert.deepEqual(
    p.messages.map((m) => m.text),
    ['hello world'],
  );
  assert.deepEqual(p.verdict({ code: 0, signal: null }), { outcome: 'succeeded', error: null, reason: null });
});

// ---------------------------------------------------------------------------------------------------
// Claude Code 2.1.331 (test/fixtures/agents/claude/2.1.331/): background sub-agents by default, usage per
// result line, the hand-back wrapping of a foreground child's answer, SIGINT exits 0.

const FIX331 = join(FIX, '2.1.331');
const parse331 = (name: string): Parsed => parseText(readFileSync(join(FIX331, name), 'utf8'));
const lines331 = (name: string): string[] => readFileSync(join(FIX331, name), 'utf8').split('\n').filter(Boolean);

test('the adapter knows 2.1.197 and 2.1.331, the versions test/clis/pins.json pins; every 2.1.331 fixture is covered here', () => {
  assert.deepEqual([...CLAUDE_KNOWN_VERSIONS], ['2.1.197', '2.1.331']);
  const pins = JSON.parse(readFileSync(join(ROOT, 'test', 'clis', 'pins.json'), 'utf8'));
  for (const v of pins.claude.versions) assert.ok((CLAUDE_KNOWN_VERSIONS as readonly string[]).includes(v), `pinned ${v} is a known version`);
  const covered = new Set([
    'agent-fg.ndjson',
    'agent-slow-SIGINT.ndjson',
    'agent-slow.ndjson',
    'bash-sleep47.ndjson',
    'plain.ndjson',
    'rate-limit-rejected.ndjson',
    'rate-limit-warning.ndjson',
    'resume.ndjson',
    'sigint-bash.ndjson',
    'sigint-during-api.ndjson',
    'transcript',
  ]);
  for (const f of readdirSync(FIX331)) assert.ok(covered.has(f), `fixture 2.1.331/${f} has no test`);
});

test('2.1.331 plain: result lines without "type" first; usage from model_usage_since_last_result', () => {
  const p = parse331('plain.ndjson');
  assert.equal(p.state.lastAssistantText, 'hello-plain');
  assert.deepEqual(p.state.usage, usage(12275, 10, { costUsd: 0.0493 }));
  assert.deepEqual(p.verdict({ code: 0, signal: null }), { outcome: 'succeeded', error: null, reason: null });
});

test("2.1.331 resume: the run's own usage and cost, not the session's (modelUsage and total_cost_usd count the earlier run)", () => {
  const p = parse331('resume.ndjson');
  const result = JSON.parse(lines331('resume.ndjson').at(-1)!);
  assert.equal(result.modelUsage['claude-opus-5-5'].inputTokens, 24579, 'the session so far');
  assert.equal(result.total_cost_usd, 0.098716);
  assert.equal(p.state.usage?.inputTokens, 12304);
  assert.equal(p.state.usage?.outputTokens, 10);
  assert.equal(p.state.usage?.costUsd, 0.049416);
  assert.equal(p.state.lastAssistantText, 'hello-resume');
});

test('2.1.331 agent-slow: a background child; the answer is the last result (after the child reported); usage summed over both result lines', () => {
  const p = parse331('agent-slow.ndjson');
  const id = 'a70d15dc6d82a9e40';
  assert.deepEqual(
    p.state.children.map((c) => [c.id, c.description, c.status, c.statusSource, c.finishedAt]),
    [[id, 'fake subtask', 'done', 'stream', new Date(1795534854298).toISOString()]],
  );
  const agentCall = tools(p).find((m) => m.tool?.name === 'Agent')!;
  assert.equal(agentCall.tool!.status, 'async_launched');
  // The child's lines stream; its report (task_notification summary) is the same text: not repeated.
  assert.deepEqual(assistantTexts(p, id), ['Calling Bash.', 'DONE. Last tool result: child-done']);
  assert.deepEqual(assistantTexts(p), [
    'Spawning a sub-agent.',
    'parent-final',
    'DONE. Last tool result: Async agent launched successfully. (This tool result is internal metadata — never quote or paste any part of it, including the agentId below, into a user-facing reply.)\nagentId: a70d15dc6d82a9e40 (int',
  ]);
  // result 0 says "parent-final" (the turn before the child reported), result 1 (origin task-notification) the last turn
  const results = lines331('agent-slow.ndjson')
    .map((l) => JSON.parse(l))
    .filter((e) => e.type === 'result');
  assert.deepEqual(
    results.map((r) => [r.result_index, r.origin?.kind ?? null]),
    [
      [0, null],
      [1, 'task-notification'],
    ],
  );
  assert.equal(p.state.lastAssistantText, results[1].result);
  // model_usage_since_last_result: everything on result 0, {} on result 1 (both printed at the end)
  assert.equal(p.state.usage?.inputTokens, 52739);
  assert.equal(p.state.usage?.outputTokens, 198);
  assert.equal(p.state.usage?.costUsd, 0.214916);
  assert.equal(p.verdict({ code: 0, signal: null }).outcome, 'succeeded');
});

test("2.1.331: a background child's report comes from its task_notification (summary_is_report, handback_report); an earlier result_index never gives the answer", () => {
  const lines = lines331('agent-slow.ndjson');
  const id = 'a70d15dc6d82a9e40';
  const at = lines.findIndex((l) => l.includes('"subtype":"task_notification"') && l.includes(`"task_id":"${id}"`));
  const withNotification = (patch: Record<string, unknown>, drop: string[] = []) => {
    const n = JSON.parse(lines[at]!);
    for (const k of drop) delete n[k];
    return parseText([...lines.slice(0, at), L({ ...n, ...patch }), ...lines.slice(at + 1)].join('\n'));
  };
  // a report the child's lines did not say (their last text is another): it becomes the child's answer
  let p = withNotification({ summary: 'the full report' });
  assert.equal(assistantTexts(p, id).at(-1), 'the full report');
  // a summary that does not say it is the report (a description, an interim text) is not an answer
  p = withNotification({ summary: 'Agent "fake subtask" finished' }, ['summary_is_report']);
  assert.equal(assistantTexts(p, id).at(-1), 'DONE. Last tool result: child-done');
  // handback_report wins over summary, unwrapped
  p = withNotification({ summary: 'harness notes', summary_is_report: false, handback_report: { text: '  the hand-back report\n' } });
  assert.equal(assistantTexts(p, id).at(-1), 'the hand-back report');
  // a stopped child (killed by its parent or the user) is cancelled
  p = withNotification({ status: 'stopped' });
  assert.equal(p.state.children[0]!.status, 'cancelled');
  // result lines out of order: result_index 1 still gives the answer
  const r0 = lines.length - 2;
  p = parseText([...lines.slice(0, r0), lines[r0 + 1], lines[r0]].join('\n'));
  assert.equal(p.state.lastAssistantText, JSON.parse(lines[r0 + 1]!).result);
});

test('2.1.331 agent-slow-SIGINT: the killed background child gets no end event and the run ends result/success, exit 0', () => {
  const p = parse331('agent-slow-SIGINT.ndjson');
  // The child's Bash task is reported stopped (it is not a child of the run); the child itself stays open.
  assert.deepEqual(
    p.state.children.map((c) => [c.id, c.status]),
    [['a51c19559766113d9', 'running']],
  );
  assert.equal(p.state.lastAssistantText, 'parent-final');
  // The stream cannot tell the child was killed: the verdict settles it from the run's end; when the run
  // was cancelled the supervisor records it cancelled instead (test/e2e/claude.test.ts).
  assert.equal(p.verdict({ code: 0, signal: null }).outcome, 'succeeded');
  assert.deepEqual(
    p.state.children.map((c) => [c.status, c.statusSource]),
    [['done', 'inferred']],
  );
});

test("2.1.331 agent-fg: a foreground child's answer and the Agent call's output without <tools-used-before-summary> and the hand-back frame", () => {
  const p = parse331('agent-fg.ndjson');
  const id = 'a0030756cac3ff176';
  const raw = lines331('agent-fg.ndjson').join('\n');
  assert.ok(raw.includes('<tools-used-before-summary>') && raw.includes('[Subagent hand-back]'), 'the stream has both');
  assert.deepEqual(
    p.messages.filter((m) => m.childId === id && m.role !== 'tool').map((m) => [m.role, m.text]),
    [
      ['user', 'TOOL:Bash:sleep 6; echo child-done'],
      ['assistant', 'DONE. Last tool result: child-done'],
    ],
  );
  const agentCall = tools(p).find((m) => m.tool?.name === 'Agent')!;
  assert.equal(agentCall.tool!.output, 'DONE. Last tool result: child-done');
  assert.equal(agentCall.tool!.status, 'completed');
  assert.ok(!p.messages.some((m) => /tools-used-before-summary|Subagent hand-back/.test(`${m.text} ${m.tool?.output ?? ''}`)));
  assert.deepEqual(
    p.state.children.map((c) => [c.id, c.status, c.statusSource]),
    [[id, 'done', 'stream']],
  );
  assert.equal(p.state.lastAssistantText, 'parent-final');
});

test('childAnswerText: the wrapping removed, a plain (2.1.197) answer kept as it is', () => {
  const framed = [
    '  <tools-used-before-summary>Bash, Read</tools-used-before-summary>',
    '  ',
    '[Subagent hand-back] The text below is the final report of a subagent. The report follows:',
    '  line one',
    '    indented more',
    '  line three',
    "agentId: a0030756cac3ff176 (use SendMessage with to: 'a0030756cac3ff176' to continue this agent)",
    '<usage>subagent_tokens: 8754',
    'tool_uses: 1</usage>',
  ].join('\n');
  assert.equal(childAnswerText(framed), 'line one\n  indented more\nline three');
  assert.equal(childAnswerText('<tools-used-before-summary>Bash</tools-used-before-summary>\n\ndone: x'), 'done: x');
  assert.equal(childAnswerText('child says hi'), 'child says hi');
  assert.equal(childAnswerText('a <b>tag</b> stays\nagentId: not a trailer without the frame'), 'a <b>tag</b> stays\nagentId: not a trailer without the frame');
});

test('2.1.331 bash-sleep47: the Bash tool refuses `sleep 47.5; …` (tool_use_error), the run still succeeds', () => {
  const p = parse331('bash-sleep47.ndjson');
  const bash = tools(p)[0]!;
  assert.equal(bash.tool!.status, 'error');
  assert.match(bash.tool!.output!, /^<tool_use_error>Blocked: sleep 47\.5/);
  assert.equal(p.verdict({ code: 0, signal: null }).outcome, 'succeeded');
});

test('2.1.331 sigint-bash: SIGINT during a tool → result/error_during_execution and exit 0 (2.1.197: exit 1) → failed', () => {
  const p = parse331('sigint-bash.ndjson');
  const bash = tools(p)[0]!;
  assert.equal(bash.tool!.status, 'error');
  assert.ok(!p.messages.some((m) => m.role === 'user'), "Claude's own interrupt note is not a user message");
  const v = p.verdict({ code: 0, signal: null });
  assert.equal(v.outcome, 'failed');
  assert.match(v.error!, /error_during_execution, aborted_tools/);
  assert.equal(p.state.usage?.inputTokens, 21873);
});

test('2.1.331 sigint-during-api: SIGINT while waiting on the API → a result line now (error_during_execution, aborted_streaming), exit 0 → failed', () => {
  const p = parse331('sigint-during-api.ndjson');
  assert.equal(p.messages.length, 0);
  assert.equal(p.state.lastAssistantText, null);
  const v = p.verdict({ code: 0, signal: null });
  assert.equal(v.outcome, 'failed');
  assert.match(v.error!, /error_during_execution, aborted_streaming/);
  assert.equal(p.state.usage?.costUsd, 0, 'model_usage_since_last_result is empty: nothing spent');
});

test("2.1.331 transcript: a background child's transcript on disk (new record types api-request*, attachment) reads as its messages", async () => {
  const home = mkdtempSync(join(tmpdir(), 'claude-store-'));
  try {
    const session = 'dd6a5d4b-cd44-47f2-b221-d2d3cf946038';
    const id = 'a8ad3d6f3a423a387';
    const sub = join(home, '.claude', 'projects', projectSlug('/home/dev/project'), session, 'subagents');
    mkdirSync(sub, { recursive: true });
    for (const ext of ['jsonl', 'meta.json']) copyFileSync(join(FIX331, 'transcript', `subagent-agent-${id}.${ext}`), join(sub, `agent-${id}.${ext}`));
    const got: Message[] = [];
    const found = await claude.childMessages!({ sessionId: session, cwd: '/home/dev/project', childId: id, storeEnv: { HOME: home } }, (m) => got.push(m));
    assert.equal(found, true);
    assert.deepEqual(
      got.map((m) => [m.role, m.text]),
      [
        ['user', 'TOOL:Bash:sleep 3; echo childword'],
        ['tool', 'Bash: sleep 3; echo childword'],
        ['assistant', 'done: childword'],
      ],
    );
    // asked by the Agent call's id (the .meta.json's toolUseId)
    const byTool: Message[] = [];
    assert.equal(
      await claude.childMessages!({ sessionId: session, cwd: '/home/dev/project', childId: 'toolu_fake_12071_11', storeEnv: { HOME: home } }, (m) =>
        byTool.push(m),
      ),
      true,
    );
    assert.equal(byTool.at(-1)?.text, 'done: childword');
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
});

test('rate-limit-rejected (2.1.197 and 2.1.331, a subscriber at a 5-hour limit): rate-limit, and when it resets from its rate_limit_event', () => {
  for (const name of ['rate-limit-rejected.ndjson', '2.1.331/rate-limit-rejected.ndjson']) {
    const p = parseFixture(name);
    assert.deepEqual(p.verdict({ code: 1, signal: null }).reason, 'rate-limit', name);
    assert.match(p.verdict({ code: 1, signal: null }).error ?? '', /hit your (session|5-hour) limit · resets/, name);
    assert.equal(p.state.resetsAt, '2026-11-28T01:57:32.000Z', `${name}: rate_limit_info.resetsAt (epoch seconds)`);
    assert.equal(p.state.limitWarning, null, name);
  }
  // Signed in with an API key Claude says no time (no rate_limit_event): none is made up.
  assert.equal(parseFixture('api-error-429.ndjson').state.resetsAt, null);
});

test('rate-limit-warning (2.1.197 and 2.1.331, a limit near: allowed_warning): a warning with its window, use and reset; the run succeeds', () => {
  for (const name of ['rate-limit-warning.ndjson', '2.1.331/rate-limit-warning.ndjson']) {
    const p = parseFixture(name);
    assert.deepEqual(p.verdict({ code: 0, signal: null }), { outcome: 'succeeded', error: null, reason: null }, name);
    assert.deepEqual(p.state.limitWarning, { window: 'five_hour', utilization: 0.92, resetsAt: '2026-11-28T01:57:36.000Z' }, name);
    assert.equal(p.state.resetsAt, null, name);
  }
  // A later event that says the limit is clear takes the warning back.
  const clear = JSON.stringify({ type: 'rate_limit_event', rate_limit_info: { status: 'allowed', resetsAt: 1795831056, rateLimitType: 'five_hour' } });
  assert.equal(parseText(`${readFileSync(join(FIX, 'rate-limit-warning.ndjson'), 'utf8')}${clear}\n`).state.limitWarning, null);
});
