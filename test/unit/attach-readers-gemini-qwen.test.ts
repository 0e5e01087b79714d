// The readers of an attached run (subagent-attach) for the Gemini CLI and Qwen Code: what a person's turn
// in the CLI's own interactive session (`gemini --resume`, `qwen --resume`) added to its store, recorded
// from the real pinned CLIs against the fake model servers — Gemini CLI 0.61.0's session chat, Qwen Code
// 0.24.4's chat recording — read from where the person's turn began: their prompts, the tool call and the
// answers as messages, the turn's usage; and Gemini's second chat file of the session, removed after.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AgentAdapter, Message } from '../../lib/agents/types.js';
import { gemini } from '../../lib/agents/gemini/index.js';
import { qwen } from '../../lib/agents/qwen/index.js';
import { FIXTURES } from '../support/paths.js';
import { withTempDir } from '../support/temp.js';

const ATTACH = join(FIXTURES, 'agents', 'attach');

/** The fixture's lines from line `from` on (1-based: where the person's turn began), through the adapter's interactive reader. */
function read(adapter: AgentAdapter, file: string, from: number): { messages: Message[]; state: any } {
  const lines = readFileSync(join(ATTACH, file), 'utf8').split('\n');
  const messages: Message[] = [];
  const run = adapter.interactive!.open({ onMessage: (m) => messages.push(m) });
  for (const l of lines.slice(from - 1)) run.line(l);
  run.end();
  return { messages, state: run.state };
}

/**
 * The person's turn both fixtures hold (a shell call, then a reply): its messages in order, three model
 * responses (a model message written again as its tool call ended counts once), the session, the usage.
 */
function assertTurn(r: { messages: Message[]; state: any }, cli: string, sessionId: string, input: number, output: number, reasoning: number): void {
  assert.deepEqual(
    r.messages.map((m) => [m.role, m.text]),
    [
      ['user', 'TOOL:Bash:echo attached-tool'],
      ['tool', 'run_shell_command: echo attached-tool'],
      ['assistant', 'done: attached-tool'],
      ['user', `REPLY:said to ${cli} in person`],
      ['assistant', `said to ${cli} in person`],
    ],
  );
  assert.equal(r.messages[1]!.tool?.input, 'echo attached-tool');
  assert.ok(
    r.messages.every((m) => !('childId' in m)),
    'the session’s own messages, not a child’s',
  );
  assert.deepEqual([r.state.turns, r.state.toolUses, r.state.lastAssistantText, r.state.sessionId], [3, 1, `said to ${cli} in person`, sessionId]);
  assert.deepEqual(r.state.usage, usage(input, output, reasoning));
}

function usage(input: number, output: number, reasoning: number): object {
  return {
    inputTokens: input,
    outputTokens: output,
    cacheReadTokens: 0,
    cacheWriteTokens: 0,
    reasoningTokens: reasoning,
    totalTokens: input + output,
    costUsd: null,
  };
}

test('gemini: the chat restated in one $set is the earlier runs’; the person’s prompts, the tool call, the answers and their tokens are the turn’s', () => {
  // Line 7 on: what `gemini --resume` appended a minute after the run (its own context went to a second file).
  const r = read(gemini, 'gemini-0.61.0-chat.jsonl', 7);
  assertTurn(r, 'gemini', 'd83af7ea-951f-4e0b-907b-856c0ff06ed5', 38076, 62, 6);
  assert.equal(r.state.lastActivityAt, '2026-11-28T08:21:29.198Z');
});

test('gemini: in the run’s own minute, the CLI’s fresh start and the restated chat both land in the session’s file: only the person’s turn is read', () => {
  const r = read(gemini, 'gemini-0.61.0-chat-same-minute.jsonl', 7);
  assert.deepEqual(
    r.messages.map((m) => [m.role, m.text]),
    [
      ['user', 'REPLY:said in the same minute'],
      ['assistant', 'said in the same minute'],
    ],
  );
  assert.deepEqual(r.state.usage, usage(12606, 11, 2));
});

test('qwen: the records the chat recording gained — the person’s prompts, the tool call, the answers, each response’s usage', () => {
  // Line 10 on: the second person's turn (lines 5–9 hold an earlier one, not read).
  assertTurn(read(qwen, 'qwen-0.24.4-chat.jsonl', 10), 'qwen', 'b6a960dc-c37e-4378-83d2-032fdbc851f7', 61092, 41, 0);
});

test('gemini and qwen: a CLI that exits non-zero, or is killed, fails the turn with its status', () => {
  for (const adapter of [gemini, qwen]) {
    const run = adapter.interactive!.open();
    assert.deepEqual(run.verdict({ code: 0, signal: null }), { outcome: 'succeeded', error: null, reason: null });
    assert.deepEqual(run.verdict({ code: 3, signal: null }).reason, 'exit-code');
    assert.deepEqual(run.verdict({ code: null, signal: 'SIGKILL' }).reason, 'crashed');
  }
});

test('launch: the CLIs’ own interactive resume, with the run’s model', () => {
  const id = 'd83af7ea-951f-4e0b-907b-856c0ff06ed5';
  assert.deepEqual(gemini.interactive!.launch({ sessionId: id, cwd: '/w', model: 'pro' }), {
    command: 'gemini',
    args: ['--resume', id, '-m', 'pro'],
    env: { GEMINI_CLI_NO_RELAUNCH: 'true' },
  });
  // `--resume` also takes "latest" and an index: only the session's UUID.
  assert.throws(() => gemini.interactive!.launch({ sessionId: 'latest', cwd: '/w', model: null }));
  assert.deepEqual(qwen.interactive!.launch({ sessionId: 's-1', cwd: '/w', model: null }), {
    command: 'qwen',
    args: ['--resume', 's-1', '--chat-recording'],
    env: {},
  });
});

test('gemini: the session’s file is its chat with a conversation; the second, empty one a resume started is removed (tidy), and a new session’s only chat is kept', () => {
  withTempDir('attach-gemini', (home) => {
    const cwd = '/tmp/cap/work';
    const chats = join(home, '.gemini', 'tmp', 'work', 'chats');
    mkdirSync(chats, { recursive: true });
    writeFileSync(join(home, '.gemini', 'projects.json'), JSON.stringify({ projects: { [cwd]: 'work' } }));
    const q = { sessionId: 'd83af7ea-951f-4e0b-907b-856c0ff06ed5', cwd, storeEnv: { HOME: home } };
    // The empty one alone (a new session's chat before its first message, or a resume's of a session whose chat is gone): kept.
    copyFileSync(join(ATTACH, 'gemini-0.61.0-chat-second.jsonl'), join(chats, 'session-2026-11-28T08-19-d83af7ea.jsonl'));
    gemini.tidy!(q);
    assert.equal(readdirSync(chats).length, 1);
    // Named before the session's own chat, as when that has a later name than it.
    copyFileSync(join(ATTACH, 'gemini-0.61.0-chat.jsonl'), join(chats, 'session-2026-11-28T08-20-d83af7ea.jsonl'));
    // Another session's chat is not touched.
    copyFileSync(join(ATTACH, 'gemini-0.61.0-chat-same-minute.jsonl'), join(chats, 'session-2026-11-28T08-16-5193cb9e.jsonl'));
    assert.equal(gemini.interactive!.sessionFile(q), join(chats, 'session-2026-11-28T08-20-d83af7ea.jsonl'));
    gemini.tidy!(q);
    assert.deepEqual(readdirSync(chats).sort(), ['session-2026-11-28T08-16-5193cb9e.jsonl', 'session-2026-11-28T08-20-d83af7ea.jsonl']);
    assert.equal(gemini.interactive!.sessionFile({ ...q, sessionId: 'not-a-uuid' }), null);
  });
});

test('qwen: the session’s file is its chat recording in the project of the run’s directory (else any project)', () => {
  withTempDir('attach-qwen', (home) => {
    const id = 'b6a960dc-c37e-4378-83d2-032fdbc851f7';
    const chats = join(home, '.qwen', 'projects', '-tmp-cap-work', 'chats');
    mkdirSync(chats, { recursive: true });
    copyFileSync(join(ATTACH, 'qwen-0.24.4-chat.jsonl'), join(chats, `${id}.jsonl`));
    assert.equal(qwen.interactive!.sessionFile({ sessionId: id, cwd: '/tmp/cap/work', storeEnv: { HOME: home } }), join(chats, `${id}.jsonl`));
    assert.equal(qwen.interactive!.sessionFile({ sessionId: id, cwd: '/elsewhere', storeEnv: { HOME: home } }), join(chats, `${id}.jsonl`));
    assert.equal(qwen.interactive!.sessionFile({ sessionId: '../x', cwd: '/tmp/cap/work', storeEnv: { HOME: home } }), null);
  });
});
