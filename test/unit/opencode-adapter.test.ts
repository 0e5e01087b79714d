// The opencode adapter against every captured fixture of the real CLI (test/fixtures/agents/opencode/,
// OpenCode 1.18.33): session id, transcript, answer, usage, children, verdict, noise, launch argv, and
// childMessages read from a SQLite store made of the fixture exports.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { opencode } from '../../lib/agents/opencode/index.js';
import type { OpencodeRun } from '../../lib/agents/opencode/stream.js';
import { exportMessages } from '../../lib/agents/opencode/store.js';
import { taskResult, TOOL_INPUT_MAX, TOOL_OUTPUT_MAX } from '../../lib/agents/opencode/parts.js';
import { PREPARE_LOCK } from '../../lib/agents/opencode/prepare.js';
import type { LaunchInput, Message } from '../../lib/agents/types.js';
import { NO_CAPS } from '../../lib/registry/record.js';
import { ROOT } from '../support/paths.js';
import { answeredOnly, failed } from '../support/replay.js';
import { usage } from '../support/usage.js';

const FIX = join(ROOT, 'test', 'fixtures', 'agents', 'opencode');

function fixture(name: string): string {
  return readFileSync(join(FIX, name), 'utf8');
}

/** Feeds a fixture line by line, the way the supervisor and transcript reader do. */
function parse(name: string, extra: string[] = []): { p: OpencodeRun; messages: Message[] } {
  const messages: Message[] = [];
  const p = opencode.open({ onMessage: (m) => messages.push(m) });
  for (const line of fixture(name).split('\n')) p.line(line);
  for (const line of extra) p.line(line);
  return { p, messages };
}

const ok = { code: 0, signal: null };

test('plain: session id from the first line, the text is the answer, usage of the one step', () => {
  const { p, messages } = parse('plain.jsonl');
  const s = p.state;
  answeredOnly(s, messages, 'ses_dff5c353fffeg3gG2uBHpPVoi7', 'hello from the fake model');
  assert.deepEqual(s.usage, usage(110, 10, { costUsd: 0 }));
  assert.equal(s.lastActivityAt, new Date(1795307065520).toISOString());
  assert.deepEqual(p.verdict(ok), { outcome: 'succeeded', error: null, reason: null });
});

test('the session id is known after the first line alone (the supervisor records it at once)', () => {
  const p = opencode.open();
  p.line(fixture('plain.jsonl').split('\n')[0]!);
  assert.equal(p.state.sessionId, 'ses_dff5c353fffeg3gG2uBHpPVoi7');
  assert.equal(p.state.lastAssistantText, null);
});

test('bash: the tool call is a tool message with short summaries; usage sums both steps', () => {
  const { p, messages } = parse('bash.jsonl');
  assert.equal(messages.length, 2);
  assert.deepEqual(messages[0], {
    role: 'tool',
    text: 'bash: echo hello-from-bash; pwd',
    tool: { name: 'bash', input: 'echo hello-from-bash; pwd', output: 'hello-from-bash /tmp/oc-capture/project', status: 'completed' },
  });
  assert.deepEqual(messages[1], { role: 'assistant', text: 'TOOL_RESULT_SEEN(bash): hello-from-bash /tmp/oc-capture/project ' });
  assert.equal(p.state.lastAssistantText, 'TOOL_RESULT_SEEN(bash): hello-from-bash /tmp/oc-capture/project ');
  assert.equal(p.state.toolUses, 1);
  assert.deepEqual(p.state.usage, usage(231, 20, { costUsd: 0 }));
  assert.equal(p.extra.lastStepReason, 'stop');
  assert.deepEqual(p.verdict(ok), { outcome: 'succeeded', error: null, reason: null });
});

test('task: the child session is a child (stream), its answer is tagged with its id, not the run answer', () => {
  const { p, messages } = parse('task.jsonl');
  const child = 'ses_dff5bec07ffeTWwDmTiFGv0naG';
  assert.equal(p.state.sessionId, 'ses_dff5bf14dffeuXiBLUHEDgSbYN');
  assert.deepEqual(p.state.children, [
    {
      id: child,
      cli: 'opencode',
      description: 'Fake subtask',
      status: 'done',
      statusSource: 'stream',
      startedAt: new Date(1795307082754).toISOString(),
      finishedAt: new Date(1795307083280).toISOString(),
    },
  ]);
  assert.deepEqual(messages[0], {
    role: 'tool',
    text: 'task: Fake subtask',
    tool: { name: 'task', input: 'Fake subtask', output: 'TOOL_RESULT_SEEN(bash): from-child-agent', status: 'completed' },
  });
  assert.deepEqual(messages[1], { role: 'assistant', text: 'TOOL_RESULT_SEEN(bash): from-child-agent', childId: child });
  assert.equal(messages[2]?.role, 'assistant');
  assert.equal(messages[2]?.childId, undefined);
  assert.equal(messages.length, 3);
  // The run's answer is the parent's last text, never the child's.
  assert.match(p.state.lastAssistantText ?? '', /^TOOL_RESULT_SEEN\(task\): <task id="ses_dff5bec07ffeTWwDmTiFGv0naG"/);
  assert.equal(p.state.toolUses, 1);
  assert.equal(p.state.usage?.totalTokens, 265);
  assert.equal(p.state.usage?.inputTokens, 245);
  assert.deepEqual(p.verdict(ok), { outcome: 'succeeded', error: null, reason: null });
});

test('error-400: the error event is the verdict (exit 1), with name, message and HTTP status', () => {
  const { p, messages } = parse('error-400.jsonl');
  assert.equal(p.state.sessionId, 'ses_dff5ba12effeU4fxbmyOHPwz73');
  assert.deepEqual(messages, []);
  assert.equal(p.state.fatalError, 'APIError: fake upstream error 400 (HTTP 400)');
  assert.equal(p.state.usage, null);
  assert.equal(p.state.lastAssistantText, null);
  assert.deepEqual(p.verdict({ code: 1, signal: null }), failed('APIError: fake upstream error 400 (HTTP 400)', 'api-error'));
  // Even an exit 0 with an error event is a failure: the CLI's own verdict wins.
  assert.equal(p.verdict(ok).outcome, 'failed');
});

test('error-500-retried: after the silent retries, one error event; failed', () => {
  const { p } = parse('error-500-retried.jsonl');
  assert.equal(p.state.sessionId, 'ses_dff5b7289ffeRq2V2BXLzb1cXR');
  assert.deepEqual(p.verdict({ code: 1, signal: null }), failed('APIError: fake upstream error 500 (HTTP 500)', 'api-error'));
});

test('error-401 / error-429-retried: the HTTP status of the error event is the reason (auth, rate-limit)', () => {
  const auth = parse('error-401.jsonl').p;
  assert.deepEqual(auth.verdict({ code: 1, signal: null }), failed('APIError: fake upstream error 401 (HTTP 401)', 'auth'));
  const limit = parse('error-429-retried.jsonl').p;
  assert.deepEqual(limit.verdict({ code: 1, signal: null }), failed('APIError: You exceeded your current quota (HTTP 429)', 'rate-limit'));
  // Without a status, the name and the words decide.
  const named = (error: unknown) => {
    const q = opencode.open();
    q.line(JSON.stringify({ type: 'error', timestamp: 1, sessionID: 'ses_x', error }));
    return q.verdict({ code: 1, signal: null }).reason;
  };
  assert.equal(named({ name: 'ProviderAuthError', data: { providerID: 'fake', message: 'no key' } }), 'auth');
  assert.equal(named({ name: 'MessageAbortedError', data: { message: 'aborted' } }), 'crashed');
  assert.equal(named({ name: 'UnknownError', data: { message: 'Rate limit reached for requests' } }), 'rate-limit');
  assert.equal(named({ name: 'UnknownError', data: { message: 'something odd' } }), 'unknown');
});

test("steps-cost: a step is a turn; each step_finish adds its tokens and cost (live, for the supervisor's caps)", () => {
  const p = opencode.open();
  const lines = fixture('steps-cost.jsonl').split('\n');
  const seen: Array<[number, number | null]> = [];
  for (const line of lines) {
    p.line(line);
    seen.push([p.state.turns, p.state.usage?.costUsd ?? null]);
  }
  assert.deepEqual(seen.slice(0, 6), [
    [1, null],
    [1, null],
    [1, 7.718],
    [2, 7.718],
    [2, 7.718],
    [2, 15.471],
  ]);
  assert.equal(p.state.usage?.totalTokens, 7697 + 7751);
  assert.deepEqual(opencode.caps, { cost: 'stream', tokens: 'stream', turns: 'stream' });
  assert.deepEqual(p.verdict(ok), { outcome: 'succeeded', error: null, reason: null });
});

test('permission-rejected: exit 0 with no final text is a failure that says why', () => {
  const { p, messages } = parse('permission-rejected.jsonl');
  assert.deepEqual(messages, [
    {
      role: 'tool',
      text: 'read: /etc/hostname',
      tool: { name: 'read', input: '/etc/hostname', output: 'The user rejected permission to use this specific tool call.', status: 'error' },
    },
  ]);
  assert.equal(p.state.lastAssistantText, null);
  assert.equal(p.state.fatalError, null);
  assert.equal(p.extra.lastStepReason, 'tool-calls');
  const v = p.verdict(ok);
  assert.equal(v.outcome, 'failed');
  assert.equal(v.reason, 'permission-denied');
  assert.match(v.error ?? '', /without a final answer/);
  assert.match(v.error ?? '', /auto-rejected \(read: \/etc\/hostname\)/);
  assert.match(v.error ?? '', /--auto/);
  // Without a rejection in sight, no advice about permissions.
  const cut = opencode.open();
  for (const line of fixture('bash.jsonl').split('\n').slice(0, 3)) cut.line(line);
  assert.deepEqual(cut.verdict(ok), failed('opencode stopped without a final answer: its last step ended asking for tools', 'crashed'));
});

test('thinking: reasoning is not part of the transcript; the text is the answer', () => {
  const { p, messages } = parse('thinking.jsonl');
  assert.deepEqual(messages, [{ role: 'assistant', text: 'forty-two' }]);
  assert.equal(p.state.lastAssistantText, 'forty-two');
  assert.equal(p.state.usage?.totalTokens, 140);
  assert.equal(p.verdict(ok).outcome, 'succeeded');
});

test('resume: the --session run reports the same session id; each run has its own usage', () => {
  const one = parse('resume-1.jsonl').p.state;
  const two = parse('resume-2-session.jsonl').p.state;
  assert.equal(one.sessionId, 'ses_dff5954dcffeEXZyS1TPGwHIHW');
  assert.equal(two.sessionId, one.sessionId);
  assert.equal(one.lastAssistantText, 'first turn');
  assert.equal(two.lastAssistantText, 'second turn via --session');
  // step_finish tokens are per step, not cumulative: no subtraction needed across runs.
  assert.equal(one.usage?.totalTokens, 159);
  assert.equal(two.usage?.totalTokens, 160);
});

test('sigterm-bash-running: a cut-off stream; killed by a signal is a failure (the core makes it "cancelled")', () => {
  const { p, messages } = parse('sigterm-bash-running.jsonl');
  assert.equal(p.state.sessionId, 'ses_dff58814affeoa8lMAU689Yre4');
  assert.deepEqual(messages, []);
  assert.equal(p.state.toolUses, 0);
  assert.deepEqual(p.verdict({ code: null, signal: 'SIGTERM' }), failed('opencode was killed by SIGTERM', 'crashed'));
  // The same cut-off stream with an exit 0 (never seen, but possible) is no success either.
  assert.equal(p.verdict(ok).outcome, 'failed');
});

test('noise and a torn last line are skipped and counted, never fatal', () => {
  const lines = fixture('plain.jsonl').split('\n').filter(Boolean);
  const p = opencode.open();
  p.line('Warning: something printed by a plugin');
  p.line(lines[0]!);
  p.line('[1, 2]');
  p.line('"just a string"');
  p.line('');
  p.line(lines[1]!);
  p.line(lines[2]!);
  p.line(lines[2]!.slice(0, 40)); // torn
  assert.equal(p.state.skippedLines, 4);
  assert.equal(p.state.lastAssistantText, 'hello from the fake model');
  assert.equal(p.verdict(ok).outcome, 'succeeded');
});

test('texts of one message join into the answer; a later message replaces it', () => {
  const ev = (messageID: string, text: string) => JSON.stringify({ type: 'text', timestamp: 1, sessionID: 'ses_x', part: { type: 'text', messageID, text } });
  const p = opencode.open();
  p.line(ev('m1', 'looking'));
  assert.equal(p.state.lastAssistantText, 'looking');
  p.line(ev('m2', 'part one'));
  p.line(ev('m2', 'part two'));
  assert.equal(p.state.lastAssistantText, 'part one\n\npart two');
});

test('tool summaries are capped; unknown tools show their input as JSON', () => {
  const big = 'x'.repeat(5000);
  const p = opencode.open();
  const seen: Message[] = [];
  const q = opencode.open({ onMessage: (m) => seen.push(m) });
  const line = (tool: string, input: unknown, output: string) =>
    JSON.stringify({
      type: 'tool_use',
      timestamp: 1,
      sessionID: 'ses_x',
      part: { type: 'tool', tool, callID: 'c', state: { status: 'completed', input, output, metadata: {}, time: { start: 1, end: 2 } } },
    });
  q.line(line('bash', { command: big }, big));
  q.line(line('todowrite', { todos: [{ content: 'a' }] }, 'ok'));
  p.line(line('bash', { command: 'ls' }, 'a'));
  assert.ok((seen[0]?.tool?.input ?? '').length <= TOOL_INPUT_MAX);
  assert.ok((seen[0]?.tool?.output ?? '').length <= TOOL_OUTPUT_MAX);
  assert.ok(seen[0]!.text.length <= TOOL_INPUT_MAX + 10);
  assert.equal(seen[1]?.text, 'todowrite: {"todos":[{"content":"a"}]}');
  assert.equal(q.state.toolUses, 2);
});

test('session-list fixture: the task child is not a top-level session (children come from the stream)', () => {
  const list = JSON.parse(fixture('session-list.json')) as Array<{ id: string }>;
  const ids = list.map((s) => s.id);
  assert.ok(ids.includes('ses_dff5bf14dffeuXiBLUHEDgSbYN'), 'the task parent is listed');
  assert.ok(!ids.includes('ses_dff5bec07ffeTWwDmTiFGv0naG'), 'the task child is not');
});

test('export fixtures: messages of a session, tools summarised like the stream', () => {
  const child: Message[] = [];
  exportMessages(JSON.parse(fixture('export-task-child.json')), (m) => child.push(m), 'ses_dff5bec07ffeTWwDmTiFGv0naG');
  assert.deepEqual(child, [
    { role: 'user', text: 'TOOL:bash:echo from-child-agent', childId: 'ses_dff5bec07ffeTWwDmTiFGv0naG' },
    {
      role: 'tool',
      text: 'bash: echo from-child-agent',
      tool: { name: 'bash', input: 'echo from-child-agent', output: 'from-child-agent', status: 'completed' },
      childId: 'ses_dff5bec07ffeTWwDmTiFGv0naG',
    },
    { role: 'assistant', text: 'TOOL_RESULT_SEEN(bash): from-child-agent ', childId: 'ses_dff5bec07ffeTWwDmTiFGv0naG' },
  ]);
  const parent: Message[] = [];
  exportMessages(JSON.parse(fixture('export-task-parent.json')), (m) => parent.push(m));
  assert.deepEqual(
    parent.map((m) => m.role),
    ['user', 'tool', 'assistant'],
  );
  assert.equal(parent[1]?.text, 'task: Fake subtask');
  const bash: Message[] = [];
  exportMessages(JSON.parse(fixture('export-bash.json')), (m) => bash.push(m));
  assert.deepEqual(
    bash.map((m) => m.role),
    ['user', 'tool', 'assistant'],
  );
  assert.equal(bash[1]?.tool?.input, 'echo hello-from-bash; pwd');
  assert.equal(
    exportMessages({ nope: true }, () => undefined),
    0,
  );
});

test('taskResult takes the words inside <task_result>', () => {
  assert.equal(taskResult('<task id="ses_1" state="completed">\n<task_result>\nline one\nline two\n</task_result>\n</task>'), 'line one\nline two');
  assert.equal(taskResult('plain output'), 'plain output');
});

// ---------------------------------------------------------------------------------------------------
// launch

const base: LaunchInput = { mode: 'new', cwd: '/w', model: null, variant: null, agent: null, files: [], extraArgs: [], sessionId: null, caps: NO_CAPS };

test('launch: a new run is `opencode run --format json`, prompt on stdin only; no session chosen', () => {
  assert.equal(opencode.chooseSessionId(), null);
  assert.equal(opencode.program, 'opencode');
  assert.equal(opencode.gracefulSignal, 'SIGTERM');
  assert.deepEqual(opencode.supports, { model: true, variant: true, agent: true, files: true });
  const l = opencode.launch(base);
  assert.equal(l.command, 'opencode');
  assert.deepEqual(l.args, ['run', '--format', 'json']);
  assert.deepEqual(l.env, { PWD: '/w' }, 'OpenCode works in $PWD, not its real cwd');
});

test('launch: model, agent, variant map to the CLI flags; resume passes the explicit session id', () => {
  const l = opencode.launch({ ...base, mode: 'resume', sessionId: 'ses_abc', model: 'fake/fake-model', agent: 'plan', variant: 'high' });
  assert.deepEqual(l.args, ['run', '--format', 'json', '--model', 'fake/fake-model', '--agent', 'plan', '--variant', 'high', '--session', 'ses_abc']);
  assert.throws(() => opencode.launch({ ...base, mode: 'resume', sessionId: null }), /session id/);
});

test('launch: --file goes last, after the extra args, so the greedy option cannot swallow them', () => {
  const l = opencode.launch({ ...base, files: ['/a b.txt', '/c.txt'], extraArgs: ['--auto', '--title', 'T'] });
  assert.deepEqual(l.args, ['run', '--format', 'json', '--auto', '--title', 'T', '--file', '/a b.txt', '--file', '/c.txt']);
  // With the user's own `--`, the files go just before it (what follows `--` is a message).
  const m = opencode.launch({ ...base, files: ['/f'], extraArgs: ['--auto', '--', 'extra words'] });
  assert.deepEqual(m.args, ['run', '--format', 'json', '--auto', '--file', '/f', '--', 'extra words']);
});

// ---------------------------------------------------------------------------------------------------
// childMessages, read from a SQLite store made of the fixture exports (OpenCode 1.18.33's tables)

const OPENCODE_TABLES = `
CREATE TABLE session (id text PRIMARY KEY, project_id text NOT NULL, workspace_id text, parent_id text, slug text NOT NULL,
  directory text NOT NULL, path text, title text NOT NULL, version text NOT NULL, time_created integer NOT NULL, time_updated integer NOT NULL);
CREATE TABLE message (id text PRIMARY KEY, session_id text NOT NULL, time_created integer NOT NULL, time_updated integer NOT NULL, data text NOT NULL);
CREATE TABLE part (id text PRIMARY KEY, message_id text NOT NULL, session_id text NOT NULL, time_created integer NOT NULL,
  time_updated integer NOT NULL, data text NOT NULL);`;

/** A store file holding the sessions of these exports, as OpenCode keeps them (each row's JSON without its ids). */
function storeOf(file: string, exports: string[]): void {
  const { DatabaseSync } = process.getBuiltinModule('node:sqlite') as typeof import('node:sqlite');
  const db = new DatabaseSync(file);
  db.exec(OPENCODE_TABLES);
  let t = 1;
  for (const name of exports) {
    const doc = JSON.parse(fixture(name));
    const info = doc.info;
    db.prepare('INSERT INTO session VALUES (?, ?, NULL, ?, ?, ?, NULL, ?, ?, ?, ?)').run(info.id, 'p', info.parentID ?? null, 's', '/d', 't', '1', t, t);
    for (const m of doc.messages) {
      const { id, ...data } = m.info;
      db.prepare('INSERT INTO message VALUES (?, ?, ?, ?, ?)').run(id, info.id, t, t, JSON.stringify(data));
      t++;
      for (const part of m.parts) {
        const { id: pid, sessionID: _s, messageID: _m, ...pdata } = part;
        db.prepare('INSERT INTO part VALUES (?, ?, ?, ?, ?, ?)').run(pid, id, info.id, t, t, JSON.stringify(pdata));
      }
    }
  }
  db.close();
}

test("childMessages: read from the run store's SQLite file, starting no process; unknown ids, other stores and foreign sessions are false", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'oc-unit-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const bin = join(dir, 'bin');
  const data = join(dir, 'data');
  mkdirSync(bin);
  mkdirSync(join(data, 'opencode'), { recursive: true });
  storeOf(join(data, 'opencode', 'opencode.db'), ['export-task-child.json', 'export-task-parent.json']);
  // An `opencode` on PATH that says so when it is run: reading a child never runs it.
  writeFileSync(join(bin, 'opencode'), `#!/bin/sh\necho "$@" >> '${join(dir, 'ran')}'\nexit 1\n`);
  chmodSync(join(bin, 'opencode'), 0o755);
  const oldPath = process.env.PATH;
  const oldData = process.env.XDG_DATA_HOME;
  process.env.PATH = `${bin}:${oldPath}`;
  process.env.XDG_DATA_HOME = join(dir, 'elsewhere'); // the caller's own store must not be used
  t.after(() => {
    process.env.PATH = oldPath;
    if (oldData === undefined) delete process.env.XDG_DATA_HOME;
    else process.env.XDG_DATA_HOME = oldData;
  });
  const q = { sessionId: 'ses_dff5bf14dffeuXiBLUHEDgSbYN', cwd: dir, childId: 'ses_dff5bec07ffeTWwDmTiFGv0naG', storeEnv: { HOME: dir, XDG_DATA_HOME: data } };
  const got: Message[] = [];
  assert.equal(await opencode.childMessages!(q, (m) => got.push(m)), true);
  assert.deepEqual(
    got.map((m) => m.role),
    ['user', 'tool', 'assistant'],
  );
  assert.equal(got[2]?.text, 'TOOL_RESULT_SEEN(bash): from-child-agent ');
  assert.ok(got.every((m) => m.childId === q.childId));
  // The same messages as the export of the same session gives.
  const exported: Message[] = [];
  exportMessages(JSON.parse(fixture('export-task-child.json')), (m) => exported.push(m), q.childId);
  assert.deepEqual(got, exported);

  const none: Message[] = [];
  assert.equal(await opencode.childMessages!({ ...q, childId: 'ses_unknown' }, (m) => none.push(m)), false);
  // A session whose parent is not this run's session is not this run's child.
  assert.equal(await opencode.childMessages!({ ...q, sessionId: 'ses_other' }, (m) => none.push(m)), false);
  // No store where the run said it was: false, and nothing is created there.
  const missing = join(dir, 'nothing-here');
  assert.equal(await opencode.childMessages!({ ...q, storeEnv: { HOME: missing, XDG_DATA_HOME: join(missing, 'share') } }, (m) => none.push(m)), false);
  assert.equal(existsSync(join(missing, 'share', 'opencode', 'opencode.db')), false);
  // A store file that is not a SQLite database: false.
  const junk = join(dir, 'junk');
  mkdirSync(join(junk, 'opencode'), { recursive: true });
  writeFileSync(join(junk, 'opencode', 'opencode.db'), 'not a database');
  assert.equal(await opencode.childMessages!({ ...q, storeEnv: { HOME: dir, XDG_DATA_HOME: junk } }, (m) => none.push(m)), false);
  // Ids that are not OpenCode's are never looked up.
  assert.equal(await opencode.childMessages!({ ...q, childId: '--help' }, (m) => none.push(m)), false);
  assert.deepEqual(none, []);
  assert.equal(existsSync(join(dir, 'ran')), false, 'opencode was never run');
});

test('storeEnvKeys: the variables that locate the store; never a config that can hold keys', () => {
  for (const k of ['HOME', 'XDG_DATA_HOME', 'OPENCODE_DB']) assert.ok(opencode.storeEnvKeys.includes(k), k);
  assert.ok(!opencode.storeEnvKeys.includes('OPENCODE_CONFIG_CONTENT'));
});

// ---------------------------------------------------------------------------------------------------
// prepare: the first run of a store creates it alone (OpenCode's own migration races, see the adapter)

test('prepare: concurrent first runs create the store once, one at a time; later runs do nothing', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'oc-prep-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const bin = join(dir, 'bin');
  mkdirSync(bin);
  const calls = join(dir, 'calls');
  // Stand-in: `opencode db path` takes a while, then the database exists (like the real one).
  writeFileSync(
    join(bin, 'opencode'),
    `#!/bin/sh
echo "$*" >> "${calls}"
[ "$1 $2" = "db path" ] || exit 2
mkdir -p "$XDG_DATA_HOME/opencode"
sleep 0.3
: > "$XDG_DATA_HOME/opencode/opencode.db"
`,
  );
  chmodSync(join(bin, 'opencode'), 0o755);
  const env = { PATH: `${bin}:${process.env.PATH}`, HOME: dir, XDG_DATA_HOME: join(dir, 'data') };
  await Promise.all([1, 2, 3, 4].map(() => opencode.prepare!(env, dir)));
  assert.equal(readFileSync(calls, 'utf8'), 'db path\n', 'one creator');
  assert.ok(existsSync(join(dir, 'data', 'opencode', 'opencode.db')));
  assert.ok(!existsSync(join(dir, 'data', 'opencode', PREPARE_LOCK)), 'the lock is released');
  await opencode.prepare!(env, dir);
  assert.equal(readFileSync(calls, 'utf8'), 'db path\n', 'an existing store is left alone');

  // A stale lock (its creator died) is taken over after the timeout.
  const env2 = { ...env, XDG_DATA_HOME: join(dir, 'data2') };
  mkdirSync(join(dir, 'data2', 'opencode'), { recursive: true });
  const lock = join(dir, 'data2', 'opencode', PREPARE_LOCK);
  writeFileSync(lock, '999999\n');
  const old = new Date(Date.now() - 10 * 60_000);
  utimesSync(lock, old, old);
  await opencode.prepare!(env2, dir);
  assert.ok(existsSync(join(dir, 'data2', 'opencode', 'opencode.db')));
  assert.equal(readFileSync(calls, 'utf8'), 'db path\ndb path\n');
});

test("error-429-retry-after: the provider's Retry-After, which OpenCode passes on in the error's responseHeaders, from the event's time: when the limit resets", () => {
  const { p } = parse('error-429-retry-after.jsonl');
  assert.equal(p.verdict({ code: 1, signal: null }).reason, 'rate-limit');
  assert.equal(p.state.resetsAt, '2026-11-28T01:57:50.012Z', 'retry-after: 1 (retry-after-ms: 0 asks no wait) after 1795831069012');
  // retry-after-ms 0 and no retry-after: no reset time.
  assert.equal(parse('error-429-retried.jsonl').p.state.resetsAt, null);
});
