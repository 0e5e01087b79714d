// The readers of an attached run (subagent-attach): what a person's turn in the CLI's own interactive
// session appended to its store, recorded from the real pinned CLIs against the fake model servers —
// Claude Code 2.1.197's session transcript, Codex 0.169.0's rollout — read from where the person's turn
// began: their prompt and the answer as messages, the turn's usage, and a verdict from the exit status.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AgentAdapter, Message } from '../../lib/agents/types.js';
import { claude } from '../../lib/agents/claude/index.js';
import { codex } from '../../lib/agents/codex/index.js';
import { copilot } from '../../lib/agents/copilot/index.js';
import { opencode } from '../../lib/agents/opencode/index.js';
import { FIXTURES } from '../support/paths.js';

/** The fixture's lines from the last one that holds `from` (the person's turn), through the adapter's interactive reader. */
function read(adapter: AgentAdapter, file: string, from: string): { messages: Message[]; state: any; verdict: any } {
  const lines = readFileSync(join(FIXTURES, 'agents', 'attach', file), 'utf8').split('\n');
  const at = lines.length - 1 - [...lines].reverse().findIndex((l) => l.includes(from));
  assert.ok(at > 0 && at < lines.length, `the fixture has ${from}`);
  const messages: Message[] = [];
  const run = adapter.interactive!.open({ onMessage: (m) => messages.push(m) });
  for (const l of lines.slice(at)) run.line(l);
  run.end();
  return { messages, state: run.state, verdict: run.verdict({ code: 0, signal: null }) };
}

test('claude: the person’s prompt, the answer, the turn’s tokens; no cost (a transcript has none)', () => {
  const r = read(claude, 'claude-2.1.197-session.jsonl', '"file-history-snapshot"');
  assert.deepEqual(
    r.messages.map((m) => [m.role, m.text]),
    [
      ['user', 'REPLY:said in person'],
      ['assistant', 'said in person'],
    ],
  );
  assert.equal(r.state.lastAssistantText, 'said in person');
  assert.equal(r.state.usage.outputTokens, 11);
  assert.equal(r.state.usage.inputTokens, 22281);
  assert.equal(r.state.sessionId, 'c184fbe5-bd81-40fd-83f3-13417bbfd354');
  assert.deepEqual(r.verdict, { outcome: 'succeeded', error: null, reason: null });
});

test('codex: the person’s prompt (not Codex’s own context), the answer, the turn’s usage records', () => {
  const lines = readFileSync(join(FIXTURES, 'agents', 'attach', 'codex-0.169.0-rollout.jsonl'), 'utf8');
  const r = read(codex, 'codex-0.169.0-rollout.jsonl', '"thread_settings_applied"');
  assert.deepEqual(
    r.messages.map((m) => [m.role, m.text]),
    [
      ['user', 'REPLY:said to codex in person'],
      ['assistant', 'said to codex in person'],
    ],
  );
  assert.ok(lines.includes('<collaboration_mode>'), 'the rollout carries Codex’s own context as a user-side message, left out');
  assert.equal(r.state.lastAssistantText, 'said to codex in person');
  assert.ok(r.state.usage.totalTokens > 0 && r.state.usage.costUsd === null, JSON.stringify(r.state.usage));
  assert.equal(r.state.turns, 1, 'one usage record: one model response');
});

test('a CLI that exits non-zero, or is killed, fails the turn with its status', () => {
  for (const adapter of [claude, codex]) {
    const run = adapter.interactive!.open();
    assert.deepEqual(run.verdict({ code: 3, signal: null }).reason, 'exit-code');
    assert.deepEqual(run.verdict({ code: null, signal: 'SIGKILL' }).reason, 'crashed');
  }
});

test('a sub-agent the session never ended takes the turn’s end, marked a guess (never left running in a done run)', () => {
  // The Agent tool's call and its task_started: a child that the lines read never end.
  const started = readFileSync(join(FIXTURES, 'agents', 'claude', 'task-subagent.ndjson'), 'utf8')
    .split('\n')
    .filter((l) => l.includes('"name":"Agent"') || l.includes('"subtype":"task_started"'));
  for (const [code, status] of [
    [0, 'done'],
    [1, 'failed'],
  ] as const) {
    const run = claude.interactive!.open();
    for (const l of started) run.line(l);
    run.end();
    assert.equal(run.state.children.length, 1);
    assert.equal(run.state.children[0]!.status, 'running');
    run.verdict({ code, signal: null });
    assert.deepEqual([run.state.children[0]!.status, run.state.children[0]!.statusSource], [status, 'inferred']);
  }
});

test('launch: the CLI’s own interactive resume, with the run’s model', () => {
  assert.deepEqual(claude.interactive!.launch({ sessionId: 's-1', cwd: '/w', model: 'opus' }), {
    command: 'claude',
    args: ['--resume', 's-1', '--model', 'opus'],
    env: {},
  });
  assert.deepEqual(codex.interactive!.launch({ sessionId: 't-1', cwd: '/w', model: null }), { command: 'codex', args: ['resume', 't-1'], env: {} });
});

test('launch: the run’s --agent goes to the interactive mode of the CLIs that take one', () => {
  assert.deepEqual(claude.interactive!.launch({ sessionId: 's-1', cwd: '/w', model: null, agent: 'reviewer' }).args, [
    '--resume',
    's-1',
    '--agent',
    'reviewer',
  ]);
  assert.deepEqual(copilot.interactive!.launch({ sessionId: 's-1', cwd: '/w', model: 'm', agent: 'docs' }).args, [
    '--resume',
    's-1',
    '--model',
    'm',
    '--agent',
    'docs',
  ]);
  assert.deepEqual(opencode.interactive!.launch({ sessionId: 'ses_1', cwd: '/w', model: null, agent: 'plan' }).args, ['--session', 'ses_1', '--agent', 'plan']);
  assert.deepEqual(opencode.interactive!.launch({ sessionId: 'ses_1', cwd: '/w', model: null, agent: null }).args, ['--session', 'ses_1']);
});
