// The readers of an attached run (subagent-attach) for GitHub Copilot CLI and OpenCode, over what a
// person's turn in the CLI's own TUI left in its store, recorded from the real pinned CLIs against the fake
// model server: Copilot 1.0.102's session log (`session-state/<id>/events.jsonl`, lines appended), and the
// rows OpenCode 1.18.33's SQLite store gained (put back into a database here, so that the attach's own
// reading of the store — the messages marked before, the ones it gained after — runs as it does for real).
// In each turn the person had a bash call made, then asked for a plain answer.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import type { AgentRun, Message } from '../../lib/agents/types.js';
import { copilot } from '../../lib/agents/copilot/index.js';
import { opencode } from '../../lib/agents/opencode/index.js';
import { sessionEvents } from '../../lib/agents/opencode/interactive.js';
import { FIXTURES } from '../support/paths.js';
import { withTempDir } from '../support/temp.js';

const ATTACH = join(FIXTURES, 'agents', 'attach');

/** The messages, final state and verdict of an attached run over `lines`. */
function read(open: () => { run: AgentRun; messages: Message[] }, lines: string[]): { messages: Message[]; run: AgentRun } {
  const r = open();
  for (const l of lines) r.run.line(l);
  r.run.end();
  return r;
}

function interactiveOf(adapter: typeof copilot | typeof opencode) {
  return () => {
    const messages: Message[] = [];
    return { run: adapter.interactive!.open({ onMessage: (m) => messages.push(m) }), messages };
  };
}

const TURN = [
  ['user', 'TOOL:bash:echo hello-in-person'],
  ['tool', 'bash: echo hello-in-person'],
  ['assistant', 'done: hello-in-person'],
];

test('copilot: the person’s prompts, the tool call and the answers from the session log’s lines since the resume; the turn’s usage records', () => {
  const all = readFileSync(join(ATTACH, 'copilot-1.0.102-events.jsonl'), 'utf8').split('\n');
  // What `copilot --resume` appended: from its session.resume on (the run before it is run 1's).
  const at = all.findIndex((l) => l.includes('"session.resume"'));
  assert.ok(at > 0, 'the fixture holds the resume');
  const { messages, run } = read(interactiveOf(copilot), all.slice(at));
  assert.deepEqual(
    messages.map((m) => [m.role, m.text]),
    [...TURN, ['user', 'REPLY:said to copilot in person'], ['assistant', 'said to copilot in person']],
  );
  assert.equal(messages[1]?.tool?.status, 'completed');
  assert.match(messages[1]?.tool?.output ?? '', /hello-in-person/);
  assert.ok(!JSON.stringify(messages).includes('firstanswer'), 'nothing of run 1');
  const s = run.state;
  assert.equal(s.lastAssistantText, 'said to copilot in person');
  assert.equal(s.toolUses, 1);
  assert.equal(s.turns, 3, 'three model calls: the tool call, its answer, the plain answer');
  // Three usage records: 14418+29, 14517+6, 14567+7.
  assert.deepEqual(s.usage, {
    inputTokens: 43502,
    outputTokens: 42,
    cacheReadTokens: 0,
    cacheWriteTokens: 0,
    reasoningTokens: 0,
    totalTokens: 43544,
    costUsd: null,
  });
  assert.deepEqual(run.verdict({ code: 0, signal: null }), { outcome: 'succeeded', error: null, reason: null });
  assert.deepEqual([run.verdict({ code: 3, signal: null }).reason, run.verdict({ code: null, signal: 'SIGKILL' }).reason], ['exit-code', 'crashed']);
  assert.equal(copilot.interactive!.sessionFile({ sessionId: 's-1', cwd: '/w', storeEnv: { COPILOT_HOME: '/c' } }), '/c/session-state/s-1/events.jsonl');
});

interface Rows {
  session: { id: string };
  before: { messages: Row[]; parts: Row[] };
  during: { messages: Row[]; parts: Row[] };
}
interface Row {
  id: string;
  session_id: string;
  message_id?: string;
  time_created: number;
  data: unknown;
}

/** An OpenCode store (`<data>/opencode/opencode.db`) with the tables and columns the reader reads. */
function store(data: string): DatabaseSync {
  mkdirSync(join(data, 'opencode'), { recursive: true });
  const db = new DatabaseSync(join(data, 'opencode', 'opencode.db'));
  db.exec(`CREATE TABLE session (id TEXT PRIMARY KEY, parent_id TEXT);
    CREATE TABLE message (id TEXT PRIMARY KEY, session_id TEXT, time_created INTEGER, data TEXT);
    CREATE TABLE part (id TEXT PRIMARY KEY, message_id TEXT, session_id TEXT, time_created INTEGER, data TEXT);`);
  return db;
}

function insert(db: DatabaseSync, rows: { messages: Row[]; parts: Row[] }): void {
  for (const m of rows.messages) db.prepare('INSERT INTO message VALUES (?, ?, ?, ?)').run(m.id, m.session_id, m.time_created, JSON.stringify(m.data));
  for (const p of rows.parts)
    db.prepare('INSERT INTO part VALUES (?, ?, ?, ?, ?)').run(p.id, p.message_id!, p.session_id, p.time_created, JSON.stringify(p.data));
}

test('opencode: the messages the session gained while the person was in it, as stream events; their prompts, the tool call, the answers, tokens and cost', () => {
  const rows = JSON.parse(readFileSync(join(ATTACH, 'opencode-1.18.33-session.json'), 'utf8')) as Rows;
  withTempDir('attach-opencode-', (dir) => {
    const db = store(dir);
    db.prepare('INSERT INTO session VALUES (?, NULL)').run(rows.session.id);
    insert(db, rows.before);
    const q = { sessionId: rows.session.id, cwd: dir, storeEnv: { XDG_DATA_HOME: dir } };
    assert.equal(opencode.interactive!.sessionFile(q), null, 'a database, no file of lines');
    const gained = opencode.interactive!.gained!(q);
    insert(db, rows.during);
    db.close();
    const lines = gained();
    assert.deepEqual(
      lines.map((l) => JSON.parse(l).type),
      ['user_text', 'step_start', 'tool_use', 'step_finish', 'step_start', 'text', 'step_finish', 'user_text', 'step_start', 'text', 'step_finish'],
    );
    assert.ok(lines.every((l) => JSON.parse(l).sessionID === rows.session.id));
    const { messages, run } = read(interactiveOf(opencode), lines);
    assert.deepEqual(
      messages.map((m) => [m.role, m.text]),
      [...TURN, ['user', 'REPLY:said in person'], ['assistant', 'said in person']],
    );
    assert.ok(!JSON.stringify(messages).includes('firstanswer'), 'nothing of run 1');
    const s = run.state;
    assert.equal(s.lastAssistantText, 'said in person');
    assert.equal(s.toolUses, 1);
    assert.equal(s.turns, 3);
    // Three steps: 7740, 7801 and 7825 tokens; OpenCode prices the fake model at 0.
    assert.deepEqual(s.usage, {
      inputTokens: 23331,
      outputTokens: 35,
      cacheReadTokens: 0,
      cacheWriteTokens: 0,
      reasoningTokens: 0,
      totalTokens: 23366,
      costUsd: 0,
    });
    assert.deepEqual([run.verdict({ code: 0, signal: null }).outcome, run.verdict({ code: 1, signal: null }).reason], ['succeeded', 'exit-code']);
    // Nothing gained (the person left without a word): an empty log.
    assert.deepEqual(opencode.interactive!.gained!(q)(), []);
    // A session the store does not hold: nothing, rather than a guess.
    assert.deepEqual(opencode.interactive!.gained!({ ...q, sessionId: 'ses_none' })(), []);
  });
});

test('opencode: a prompt OpenCode made up itself (a synthetic part) is not the person’s', () => {
  const user = {
    info: { id: 'msg_1', role: 'user', time: { created: 1 } },
    parts: [{ type: 'text', text: 'said' }, { type: 'text', text: 'Called the Read tool', synthetic: true }, { type: 'file' }],
  };
  const assistant = { info: { id: 'msg_2', role: 'assistant', time: { created: 2 } }, parts: [{ type: 'patch' }, { type: 'text', text: 'ok' }] };
  const { messages } = read(interactiveOf(opencode), sessionEvents('ses_1', [user, assistant]));
  assert.deepEqual(
    messages.map((m) => [m.role, m.text]),
    [
      ['user', 'said'],
      ['assistant', 'ok'],
    ],
  );
});

test('launch: the CLI’s own interactive resume, with the run’s model (OpenCode’s PWD the run’s directory, as for its runs)', () => {
  assert.deepEqual(copilot.interactive!.launch({ sessionId: 's-1', cwd: '/w', model: 'gpt-5' }), {
    command: 'copilot',
    args: ['--resume', 's-1', '--model', 'gpt-5'],
    env: {},
  });
  assert.deepEqual(opencode.interactive!.launch({ sessionId: 'ses_1', cwd: '/w', model: null }), {
    command: 'opencode',
    args: ['--session', 'ses_1'],
    env: { PWD: '/w' },
  });
});
