import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { acp } from '../../lib/agents/acp/index.js';
import { clientLine } from '../../lib/agents/acp/log.js';
import { permissionOutcome } from '../../lib/agents/acp/permissions.js';
import { ACP_PRESETS } from '../../lib/agents/acp/presets.js';
import type { Exit, LaunchInput, Message, StreamState, Verdict } from '../../lib/agents/types.js';
import { NO_CAPS, type AcpSettings } from '../../lib/registry/record.js';
import { ROOT } from '../support/paths.js';
import { everyFixtureCovered, exited, failed, tools } from '../support/replay.js';
import { usage } from '../support/usage.js';

// Replays the event logs of real `--cli acp` runs (test/fixtures/agents/acp/, rows in its README: the
// conversations of Gemini CLI 0.61.0, Qwen Code 0.24.4, Copilot CLI 1.0.102 and OpenCode 1.18.33 in ACP
// mode with our client) through the adapter; and drives the client against a scripted peer.
const FIX = join(ROOT, 'test', 'fixtures', 'agents', 'acp');

interface Parsed {
  messages: Message[];
  state: StreamState;
  verdict(exit: Exit): Verdict;
}

function parseText(text: string): Parsed {
  const messages: Message[] = [];
  const p = acp.open({ onMessage: (m) => messages.push(m) });
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  for (const l of lines) p.line(l);
  p.end();
  return { messages, state: p.state, verdict: (exit) => p.verdict(exit) };
}

const parseFixture = (name: string) => parseText(readFileSync(join(FIX, name), 'utf8'));

const settings = (over: Partial<AcpSettings> = {}): AcpSettings => ({ command: ['my-agent', '--acp'], preset: null, permissions: 'approve-reads', ...over });

function launchInput(over: Partial<LaunchInput> = {}): LaunchInput {
  return {
    mode: 'new',
    cwd: '/w',
    model: null,
    variant: null,
    agent: null,
    files: [],
    extraArgs: [],
    sessionId: null,
    caps: NO_CAPS,
    acp: settings(),
    ...over,
  };
}

const tokens = (input: number, output: number, costUsd: number | null = null) => usage(input, output, costUsd === null ? {} : { costUsd });

test('every fixture of the acp adapter is covered by this file', () => {
  everyFixtureCovered(FIX, [
    'gemini-tool.ndjson',
    'gemini-cancel.ndjson',
    'gemini-load-fails.ndjson',
    'gemini-api-error-500.ndjson',
    'copilot-permission-denied.ndjson',
    'copilot-api-error-500.ndjson',
    'copilot-resume.ndjson',
    'qwen-tool.ndjson',
    'qwen-resume-load.ndjson',
    'opencode-tool.ndjson',
  ]);
});

test("Gemini: session/new gives the session, a shell call and the answer in chunks, the usage of the prompt's answer (_meta.quota)", () => {
  const p = parseFixture('gemini-tool.ndjson');
  assert.equal(p.state.sessionId, '2508c607-009b-484e-946c-cce10068997c');
  assert.equal(p.state.lastAssistantText, 'done: hi');
  assert.equal(p.state.toolUses, 1);
  const [call] = tools(p);
  assert.equal(call!.text, 'execute: echo hi');
  assert.equal(call!.tool!.status, 'completed');
  assert.deepEqual(p.state.usage, tokens(24333, 41));
  assert.equal(p.state.skippedLines, 0);
  assert.deepEqual(p.verdict(exited(0)), { outcome: 'succeeded', error: null, reason: null });
  assert.deepEqual(
    p.messages.map((m) => m.role),
    ['tool', 'assistant'],
  );
});

test('Gemini: session/cancel answered with stopReason cancelled; the cut call is in the transcript', () => {
  const p = parseFixture('gemini-cancel.ndjson');
  assert.equal(p.state.lastAssistantText, null);
  assert.equal(tools(p).length, 1);
  // The core records the cancel; alone, the stream says the turn did not end.
  assert.deepEqual(p.verdict(exited(0)), failed('the agent ended its turn with stopReason "cancelled"', 'unknown'));
});

test('Gemini: a model API error (HTTP 500) answers the prompt with an error: failed, api-error, in words', () => {
  const p = parseFixture('gemini-api-error-500.ndjson');
  assert.deepEqual(p.verdict(exited(0)), failed('session/prompt: fake upstream failure (HTTP 500 INTERNAL)', 'api-error'));
  assert.equal(p.state.fatalError, 'session/prompt: fake upstream failure (HTTP 500 INTERNAL)');
});

test("Gemini 0.61.0: session/load fails (it starts the session's chat file anew before it reads it): failed with its words", () => {
  const p = parseFixture('gemini-load-fails.ndjson');
  assert.equal(p.state.sessionId, '12c27595-1423-4a49-b074-b6dd73d2f3de', 'the session it was asked to load');
  assert.deepEqual(p.verdict(exited(0)), failed('session/load: Internal error (No previous sessions found for this project.)', 'unknown'));
  assert.equal(ACP_PRESETS.gemini!.resume, false, 'so the preset refuses a resume up front');
});

test('Copilot: a shell call refused by approve-reads is recorded and ends the run permission-denied', () => {
  const p = parseFixture('copilot-permission-denied.ndjson');
  assert.equal(p.state.lastAssistantText, 'Info: Operation cancelled by user');
  assert.equal(tools(p)[0]!.tool!.status, 'failed');
  const v = p.verdict(exited(0));
  assert.equal(v.outcome, 'failed');
  assert.equal(v.reason, 'permission-denied');
  assert.match(v.error!, /^acp was refused permission for 1 tool call: Run the command the fake model was told to run/);
  assert.deepEqual(p.state.usage, tokens(10200, 26));
});

test('Copilot: an API error it retried and gave up on is its last words, then end_turn with no usage: failed, api-error', () => {
  const p = parseFixture('copilot-api-error-500.ndjson');
  const v = p.verdict(exited(0));
  assert.equal(v.outcome, 'failed');
  assert.equal(v.reason, 'api-error');
  assert.match(v.error!, /^Error: Failed to get response from the AI model; retried 5 times .* Last error: 500 fake upstream failure$/);
  assert.equal(p.state.usage, null);
});

test('an answer that starts with "Error:" in a turn that reported its usage is an answer', () => {
  const p = parseText(
    [
      clientLine({ id: 3, method: 'session/prompt', params: { sessionId: 's', promptBytes: 1 } }),
      '{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"Error: is what the user asked me to print"}}}}',
      '{"jsonrpc":"2.0","id":3,"result":{"stopReason":"end_turn","usage":{"inputTokens":5,"outputTokens":5}}}',
    ].join('\n'),
  );
  assert.equal(p.verdict(exited(0)).outcome, 'succeeded');
});

test('Copilot: a resume loads the session (session/load) and counts only what this run did', () => {
  const p = parseFixture('copilot-resume.ndjson');
  assert.equal(p.state.sessionId, '78f8b3e0-392c-4387-89e7-c452078329b9');
  assert.deepEqual(
    p.messages.filter((m) => m.role === 'assistant').map((m) => m.text),
    ['second'],
  );
  assert.deepEqual(p.state.usage, tokens(10355, 2));
});

test("Qwen: each response's usage comes on a chunk of its own (_meta.usage), summed as the run goes", () => {
  const p = parseFixture('qwen-tool.ndjson');
  assert.equal(p.state.lastAssistantText, 'done: hi');
  assert.deepEqual(p.state.usage, tokens(19210 + 19328, 27 + 2));
  assert.equal(tools(p)[0]!.tool!.output?.includes('Output: hi'), true);
  assert.deepEqual(p.verdict(exited(0)), { outcome: 'succeeded', error: null, reason: null });
});

test("Qwen: session/load replays the session's past before its answer: none of it is this run's", () => {
  const p = parseFixture('qwen-resume-load.ndjson');
  assert.deepEqual(
    p.messages.map((m) => [m.role, m.text]),
    [['assistant', 'second']],
  );
  assert.equal(p.state.toolUses, 0);
  assert.deepEqual(p.state.usage, tokens(19355, 2));
});

test("OpenCode: the usage of the prompt's answer, its cost from usage_update", () => {
  const p = parseFixture('opencode-tool.ndjson');
  assert.equal(p.state.sessionId, 'ses_ddf6e3cecffeDJu55wD5WKTcmZ');
  assert.equal(p.state.lastAssistantText, 'done: hi');
  assert.deepEqual(p.state.usage, tokens(7756, 2, 0));
});

test('lines that are not JSON-RPC are skipped and counted; an agent that exits before its turn ended crashed', () => {
  const p = parseText(['not json', '{"jsonrpc":"2.0","id":1,"result":{}}', '{"x":1}', ''].join('\n'));
  assert.equal(p.state.skippedLines, 2);
  assert.deepEqual(p.verdict(exited(3)), failed('the agent exited with status 3 before its turn ended', 'crashed'));
  assert.deepEqual(p.verdict(exited(null, 'SIGKILL')), failed('the agent was killed by SIGKILL before its turn ended', 'crashed'));
});

test('the client fails a resume the agent does not offer; max_turn_requests is max-turns', () => {
  const resume = parseText(clientLine({ method: '_subagents/error', params: { message: 'no resume' } }));
  assert.deepEqual(resume.verdict(exited(0)), failed('no resume', 'unknown'));
  const p = parseText(
    [
      clientLine({ id: 3, method: 'session/prompt', params: { sessionId: 's', promptBytes: 1 } }),
      '{"jsonrpc":"2.0","id":3,"result":{"stopReason":"max_turn_requests"}}',
    ].join('\n'),
  );
  assert.equal(p.verdict(exited(0)).reason, 'max-turns');
});

test('the permission policy: approve-reads allows what only looks, deny refuses all, approve-all allows all; no fitting option is cancelled', () => {
  const options = [
    { optionId: 'a1', kind: 'allow_once' },
    { optionId: 'a2', kind: 'allow_always' },
    { optionId: 'r1', kind: 'reject_once' },
  ];
  assert.deepEqual(permissionOutcome('approve-reads', 'read', options), { outcome: 'selected', optionId: 'a1' });
  assert.deepEqual(permissionOutcome('approve-reads', 'execute', options), { outcome: 'selected', optionId: 'r1' });
  assert.deepEqual(permissionOutcome('approve-reads', null, options), { outcome: 'selected', optionId: 'r1' });
  assert.deepEqual(permissionOutcome('deny', 'read', options), { outcome: 'selected', optionId: 'r1' });
  assert.deepEqual(permissionOutcome('approve-all', 'edit', options), { outcome: 'selected', optionId: 'a1' });
  assert.deepEqual(permissionOutcome('approve-all', 'edit', [{ optionId: 'x', kind: 'allow_always' }]), { outcome: 'selected', optionId: 'x' });
  assert.deepEqual(permissionOutcome('deny', 'edit', [{ optionId: 'a1', kind: 'allow_once' }]), { outcome: 'cancelled' });
});

test("launch: the agent's command line and the -- args, a preset's environment; a resume of a preset that offers none is refused", () => {
  assert.deepEqual(acp.launch(launchInput({ extraArgs: ['--x'] })), { command: 'my-agent', args: ['--acp', '--x'], env: {} });
  const gemini = settings({ command: [...ACP_PRESETS.gemini!.command], preset: 'gemini' });
  assert.deepEqual(acp.launch(launchInput({ acp: gemini })), { command: 'gemini', args: ['--acp'], env: { GEMINI_CLI_NO_RELAUNCH: 'true' } });
  assert.throws(
    () => acp.launch(launchInput({ acp: gemini, mode: 'resume', sessionId: 's' })),
    (e: any) => e.code === 'E_ARG_UNSUPPORTED',
  );
  assert.throws(() => acp.launch(launchInput({ mode: 'resume', sessionId: null })), /session id/);
  assert.equal(acp.programOf!({ acp: settings() }), 'my-agent');
});

/** A scripted agent on the other end of the driver's pipes: `answer` is asked for each request the client makes. */
function peer(answer: (m: any, send: (o: object) => void) => void) {
  const toAgent = new PassThrough();
  const fromAgent = new PassThrough();
  const log: string[] = [];
  let buf = '';
  const send = (o: object) => fromAgent.write(`${JSON.stringify({ jsonrpc: '2.0', ...o })}\n`);
  toAgent.on('data', (d) => {
    buf += d;
    for (let n = buf.indexOf('\n'); n >= 0; n = buf.indexOf('\n')) {
      const m = JSON.parse(buf.slice(0, n));
      buf = buf.slice(n + 1);
      answer(m, send);
    }
  });
  toAgent.on('finish', () => fromAgent.end());
  return { toAgent, fromAgent, log, send };
}

test('the driver: initialize, session/new, the prompt whole; a permission answered by the policy; stdin ended after the turn; the log parses', async () => {
  const prompt = Buffer.from(`big ${'x'.repeat(300_000)} é`);
  let got = '';
  const p = peer((m, send) => {
    if (m.method === 'initialize') send({ id: m.id, result: { protocolVersion: 1, agentCapabilities: {} } });
    if (m.method === 'session/new') send({ id: m.id, result: { sessionId: 'S1' } });
    if (m.method === 'session/prompt') {
      got = m.params.prompt[0].text;
      send({
        id: 'perm',
        method: 'session/request_permission',
        params: {
          sessionId: 'S1',
          toolCall: { toolCallId: 't', title: 'rm -rf x', kind: 'execute' },
          options: [
            { optionId: 'ok', kind: 'allow_once' },
            { optionId: 'no', kind: 'reject_once' },
          ],
        },
      });
      send({
        method: 'session/update',
        params: { sessionId: 'S1', update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'hello' } } },
      });
      send({ id: 7, method: 'fs/read_text_file', params: { path: '/etc/passwd' } });
      setTimeout(() => send({ id: m.id, result: { stopReason: 'end_turn' } }), 20);
    }
    if (m.id === 'perm') assert.deepEqual(m.result, { outcome: { outcome: 'selected', optionId: 'no' } });
    if (m.id === 7) assert.equal(m.error.code, -32601);
  });
  const log: string[] = [];
  const driver = acp.drive!(launchInput(), { input: p.toAgent, output: p.fromAgent, prompt, log: (l) => log.push(l), diag: () => undefined });
  await driver.done;
  assert.equal(got, prompt.toString('utf8'), 'the prompt, whole');
  assert.ok(!log.join('\n').includes('x'.repeat(1000)), 'the log holds the prompt as its size only');
  const parsed = parseText(log.join('\n'));
  assert.equal(parsed.state.sessionId, 'S1');
  assert.equal(parsed.state.lastAssistantText, 'hello');
  assert.equal(parsed.verdict(exited(0)).reason, 'permission-denied');
});

test('the driver: a resume loads the session where the agent offers it; else the run fails, nothing sent', async () => {
  const methods: string[] = [];
  const loads = peer((m, send) => {
    methods.push(m.method);
    if (m.method === 'initialize') send({ id: m.id, result: { agentCapabilities: { sessionCapabilities: { resume: {} } } } });
    if (m.method === 'session/resume') send({ id: m.id, result: {} });
    if (m.method === 'session/prompt') send({ id: m.id, result: { stopReason: 'end_turn' } });
  });
  const log: string[] = [];
  await acp.drive!(launchInput({ mode: 'resume', sessionId: 'S0' }), {
    input: loads.toAgent,
    output: loads.fromAgent,
    prompt: Buffer.from('go'),
    log: (l) => log.push(l),
    diag: () => undefined,
  }).done;
  assert.deepEqual(methods, ['initialize', 'session/resume', 'session/prompt']);
  assert.equal(parseText(log.join('\n')).state.sessionId, 'S0');

  const none = peer((m, send) => {
    if (m.method === 'initialize') send({ id: m.id, result: { agentCapabilities: {} } });
    else assert.fail(`nothing after initialize: ${m.method}`);
  });
  const log2: string[] = [];
  await acp.drive!(launchInput({ mode: 'resume', sessionId: 'S0' }), {
    input: none.toAgent,
    output: none.fromAgent,
    prompt: Buffer.from('go'),
    log: (l) => log2.push(l),
    diag: () => undefined,
  }).done;
  const v = parseText(log2.join('\n')).verdict(exited(0));
  assert.equal(v.outcome, 'failed');
  assert.match(v.error!, /neither session\/load nor session\/resume/);
});

test('the driver: cancel sends session/cancel and waits for the turn to end; an agent that closes its output ends the drive', async () => {
  const p = peer((m, send) => {
    if (m.method === 'initialize') send({ id: m.id, result: {} });
    if (m.method === 'session/new') send({ id: m.id, result: { sessionId: 'S' } });
    if (m.method === 'session/prompt') p.log.push(String(m.id));
    if (m.method === 'session/cancel') send({ id: Number(p.log[0]), result: { stopReason: 'cancelled' } });
  });
  const log: string[] = [];
  const driver = acp.drive!(launchInput(), {
    input: p.toAgent,
    output: p.fromAgent,
    prompt: Buffer.from('go'),
    log: (l) => log.push(l),
    diag: () => undefined,
  });
  while (p.log.length === 0) await new Promise((r) => setTimeout(r, 5));
  await driver.cancel();
  await driver.done;
  assert.ok(log.some((l) => l.includes('"session/cancel"')));
  assert.equal(parseText(log.join('\n')).verdict(exited(0)).error, 'the agent ended its turn with stopReason "cancelled"');

  const gone = peer((m, send) => {
    if (m.method === 'initialize') send({ id: m.id, result: {} });
    if (m.method === 'session/new') gone.fromAgent.end();
  });
  await acp.drive!(launchInput(), { input: gone.toAgent, output: gone.fromAgent, prompt: Buffer.from('go'), log: () => undefined, diag: () => undefined }).done;
});
