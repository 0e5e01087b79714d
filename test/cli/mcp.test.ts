/**
 * subagent-mcp (issue 26, point 1) driven by the official MCP client SDK over stdio, as a host drives it:
 * the tools listed with valid input schemas; each tool's happy path through the library (a shell run
 * started, waited for, read, searched, resumed, cancelled, a batch); failures as tool errors with the
 * verbs' codes and hints; a bounded status wait that times out as E_WAIT_TIMEOUT and one the client
 * cancels; runs that outlive the server and that the verbs see; the registry found as the verbs find it.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import Ajv2020 from 'ajv/dist/2020.js';
import { BIN } from '../support/paths.js';
import { assertOk } from '../support/run.js';
import { makeBox, type Box } from '../support/box.js';
import { statusOf, waitTerminal } from '../support/shell.js';
import { until } from '../support/wait.js';

const box = makeBox('mcp');

/** A connected client of a subagent-mcp started in `cwd` with the box's environment (and `env`). */
async function connect(b: Box, o: { args?: string[]; cwd?: string; env?: NodeJS.ProcessEnv } = {}): Promise<Client> {
  const env = Object.fromEntries(Object.entries({ ...b.env, ...o.env }).filter((e): e is [string, string] => e[1] !== undefined));
  const transport = new StdioClientTransport({ command: join(BIN, 'mcp'), args: o.args ?? [], env, cwd: o.cwd ?? b.dir, stderr: 'pipe' });
  const client = new Client({ name: 'subagents-test', version: '1.0.0' });
  await client.connect(transport);
  return client;
}

/** A tool's structured answer, asserted not an error. */
async function call(c: Client, name: string, args: Record<string, unknown>): Promise<any> {
  const r = await c.callTool({ name, arguments: args });
  assert.notEqual(r.isError, true, `${name}: ${JSON.stringify(r.content)}`);
  const text = JSON.parse((r.content as Array<{ text: string }>)[0]!.text);
  assert.deepEqual(r.structuredContent, text, 'the structured answer is the text answer');
  return text;
}

/** A tool's error object, asserted an error with `code`. */
async function callError(c: Client, name: string, args: Record<string, unknown>, code: string): Promise<any> {
  const r = await c.callTool({ name, arguments: args });
  assert.equal(r.isError, true, `${name} should fail with ${code}: ${JSON.stringify(r.content)}`);
  const e = r.structuredContent as any;
  assert.equal(e.ok, false);
  assert.equal(e.code, code, JSON.stringify(e));
  assert.equal(typeof e.error, 'string');
  return e;
}

describe('subagent-mcp with the official MCP client', () => {
  let c: Client;
  before(async () => {
    c = await connect(box);
  });
  after(async () => {
    await c.close();
  });

  test('the tools are listed, each with a valid JSON Schema for its input; the server names itself', async () => {
    assert.equal(c.getServerVersion()?.name, 'subagents');
    const { tools } = await c.listTools();
    assert.deepEqual(tools.map((t) => t.name).sort(), ['batch', 'cancel', 'history', 'result', 'resume', 'search', 'start', 'status']);
    const AjvClass = ((Ajv2020 as unknown as { default?: unknown }).default ?? Ajv2020) as new (o: object) => { compile(s: object): unknown };
    const ajv = new AjvClass({ strict: false });
    for (const t of tools) {
      assert.equal(t.inputSchema.type, 'object', t.name);
      assert.ok(t.description && t.description.length > 20, `${t.name} says what it does`);
      ajv.compile(t.inputSchema);
    }
    const start = tools.find((t) => t.name === 'start')!;
    for (const field of ['name', 'prompt', 'cli', 'model', 'maxCost', 'maxTime', 'maxMemory', 'stallAfter', 'onEnd', 'worktree', 'maxConcurrent'])
      assert.ok(field in (start.inputSchema.properties ?? {}), `start takes ${field}, as a batch line does`);
  });

  test("start, status with a bounded wait, result, search, history, resume: the verbs' objects; the verbs see the runs", async () => {
    const s = await call(c, 'start', { name: 'm/one', cli: 'shell', prompt: 'echo first answer' });
    assert.equal(s.ok, true);
    assert.equal(s.status, 'scheduled');
    const w = await call(c, 'status', { names: ['m/one'], waitTerminal: true, timeoutSec: 20 });
    assert.equal(w.agents[0].outcome, 'succeeded', JSON.stringify(w.agents[0]));
    assert.equal((await call(c, 'result', { name: 'm/one' })).lastAssistantText, 'first answer\n');
    const found = await call(c, 'search', { name: 'm/one', pattern: 'first' });
    assert.ok(found.matches.length >= 1, JSON.stringify(found));
    await call(c, 'resume', { name: 'm/one', prompt: 'echo second answer' });
    await call(c, 'status', { names: ['m/one'], waitTerminal: true, timeoutSec: 20 });
    const h = await call(c, 'history', { name: 'm/one' });
    assert.deepEqual(
      h.runs.map((r: any) => r.run),
      [1, 2],
    );
    const since = await call(c, 'result', { name: 'm/one', since: 1 });
    assert.deepEqual(
      since.runs.map((r: any) => r.lastAssistantText),
      ['second answer\n'],
    );
    // An ordinary run: the verbs see it as they see their own.
    assert.equal(statusOf(box, 'm/one').run, 2);
    const brief = await call(c, 'status', { names: ['m/one'], brief: true });
    assert.deepEqual(Object.keys(brief.agents[0]), ['name', 'status', 'outcome', 'reason', 'run', 'exitCode', 'finishedAt', 'stalled']);
    assert.deepEqual((await call(c, 'status', { names: ['m/one'], fields: ['run', 'name'] })).agents[0], { run: 2, name: 'm/one' });
    await callError(c, 'status', { fields: ['colour'] }, 'E_ARG_INVALID');
  });

  test('batch: every line started; a bad line is E_BATCH_INCOMPLETE that still lists what started', async () => {
    const ok = await call(c, 'batch', {
      lines: [
        { name: 'b/one', cli: 'shell', prompt: 'echo one' },
        { name: 'b/two', cli: 'shell', prompt: 'echo two', maxTime: 30 },
      ],
    });
    assert.deepEqual(
      ok.started.map((x: any) => x.name),
      ['b/one', 'b/two'],
    );
    const bad = await callError(
      c,
      'batch',
      {
        lines: [
          { name: 'b/three', cli: 'shell', prompt: 'echo three' },
          { name: 'b/four', cli: 'shell' },
        ],
      },
      'E_BATCH_INCOMPLETE',
    );
    assert.deepEqual(
      bad.details.started.map((x: any) => x.name),
      ['b/three'],
    );
    assert.equal(bad.details.failed[0].code, 'E_PROMPT_REQUIRED');
    const got = waitTerminal(box, ['b/one', 'b/two', 'b/three']);
    assert.equal(got['b/two'].caps.maxTimeSec, 30);
  });

  test('resume with queue: a follow-up queued to a running run, answered with its position, then run; cancel with queued drops one', async () => {
    const gate = join(box.dir, 'mcp-follow-gate');
    await call(c, 'start', { name: 'mcp/follow', cli: 'shell', prompt: `while [ ! -e '${gate}' ]; do sleep 0.05; done; echo one` });
    await until('mcp/follow running', () => statusOf(box, 'mcp/follow')?.status === 'running');
    const q1 = await call(c, 'resume', { name: 'mcp/follow', prompt: 'echo two', queue: true });
    assert.deepEqual([q1.mode, q1.position], ['queued', 1]);
    const q2 = await call(c, 'resume', { name: 'mcp/follow', prompt: 'echo dropped', queue: true, afterAny: true });
    assert.equal(q2.position, 2);
    await callError(c, 'resume', { name: 'mcp/follow', prompt: 'x', queue: true, model: 'm' }, 'E_ARG_UNKNOWN');
    const dropped = await call(c, 'cancel', { name: 'mcp/follow', queued: true, position: 2 });
    assert.equal(dropped.dropped.length, 1);
    assert.equal(dropped.queuedPrompts.length, 1);
    mkdirSync(gate);
    const done = waitTerminal(box, ['mcp/follow'])['mcp/follow'];
    assert.equal(done.run, 2);
    assert.equal(done.outcome, 'succeeded');
  });

  test("failures are tool errors with the verbs' codes and hints, and change nothing; an unknown tool is a protocol error", async () => {
    const named = await callError(c, 'start', { name: 'bad name', cli: 'shell', prompt: 'x' }, 'E_NAME_INVALID');
    assert.ok(named.details.hint, 'a hint says what to do');
    await callError(c, 'start', { name: 'e/x', cli: 'shell', prompt: 'x', colour: 'blue' }, 'E_ARG_UNKNOWN');
    await callError(c, 'start', { name: 'e/x', cli: 'shell', prompt: 'x', maxMemory: 'lots' }, 'E_ARG_INVALID');
    await callError(c, 'start', { name: 'e/x', cli: 'shell' }, 'E_PROMPT_REQUIRED');
    await callError(c, 'result', { name: 'e/nothing' }, 'E_NAME_NOT_FOUND');
    await callError(c, 'status', { names: 'm/one' }, 'E_ARG_INVALID');
    assert.equal(statusOf(box, 'e/x'), undefined, 'nothing recorded');
    await assert.rejects(c.callTool({ name: 'no-such-tool', arguments: {} }), /no tool no-such-tool/);
  });

  test('a status wait is bounded (E_WAIT_TIMEOUT with the listing), and one the client cancels ends at once; the server goes on', async () => {
    await call(c, 'start', { name: 'w/long', cli: 'shell', prompt: 'sleep 600' });
    const t0 = Date.now();
    const timedOut = await callError(c, 'status', { names: ['w/long'], waitTerminal: true, timeoutSec: 1 }, 'E_WAIT_TIMEOUT');
    assert.ok(Date.now() - t0 < 15_000);
    assert.ok(JSON.stringify(timedOut).includes('w/long'), 'the listing comes with it');
    const ac = new AbortController();
    const waiting = c.callTool({ name: 'status', arguments: { names: ['w/long'], waitTerminal: true, timeoutSec: 50 } }, undefined, { signal: ac.signal });
    setTimeout(() => ac.abort(), 300);
    const t1 = Date.now();
    await assert.rejects(waiting, /abort/i);
    assert.ok(Date.now() - t1 < 5000, 'the call ended when cancelled, not at its timeout');
    const cancelled = await call(c, 'cancel', { name: 'w/long' });
    assert.equal(cancelled.previousStatus, 'running');
    assert.equal((await call(c, 'status', { names: ['w/long'] })).agents[0].status, 'done');
  });
});

describe('subagent-mcp: the protocol itself', () => {
  test('a line that is not JSON, a request without jsonrpc 2.0, an unknown method: JSON-RPC errors; ping; an old protocol version is answered in kind; stdin closed: exit 0', () => {
    const lines = [
      '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}',
      'not json',
      '{"id":2,"method":"ping"}',
      '{"jsonrpc":"2.0","id":3,"method":"resources/list"}',
      '{"jsonrpc":"2.0","id":4,"method":"ping"}',
      '{"jsonrpc":"2.0","id":5,"method":"initialize","params":{"protocolVersion":"1999-01-01"}}',
      '{"jsonrpc":"2.0","method":"notifications/initialized"}',
    ];
    const r = spawnSync(join(BIN, 'mcp'), [], { input: `${lines.join('\n')}\n`, env: box.env, cwd: box.dir, encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    const out = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    const byId = (id: unknown) => out.find((m) => m.id === id);
    assert.equal(byId(1).result.protocolVersion, '2024-11-05', 'a version we speak is answered in kind');
    assert.equal(out.find((m) => m.id === null && m.error?.code === -32700)?.error.message.startsWith('not JSON'), true);
    assert.equal(byId(2).error.code, -32600);
    assert.equal(byId(3).error.code, -32601);
    assert.deepEqual(byId(4).result, {});
    assert.equal(byId(5).result.protocolVersion, '2025-11-25', 'one we do not: our newest');
    assert.equal(out.length, 6, 'a notification gets no answer');
  });
});

describe('subagent-mcp: runs outlive it, and it finds the registry as the verbs do', () => {
  test("a run started through MCP survives the server's exit; the verbs see and cancel it", async () => {
    const c = await connect(box);
    await call(c, 'start', { name: 'survive/long', cli: 'shell', prompt: 'sleep 600' });
    await until('survive/long running', () => statusOf(box, 'survive/long')?.status === 'running');
    await c.close();
    assert.equal(statusOf(box, 'survive/long').status, 'running', 'still running after the server left');
    assertOk(box.run('cancel', ['--name', 'survive/long']), 'cancel');
    assert.equal(waitTerminal(box, ['survive/long'])['survive/long'].outcome, 'cancelled');
  });

  test('--registry, else SUBAGENT_DIR, else the nearest .subagents above its directory', async () => {
    const explicit = join(box.dir, 'explicit');
    const c1 = await connect(box, { args: ['--registry', explicit] });
    assert.equal((await call(c1, 'start', { name: 'where/flag', cli: 'shell', prompt: 'true' })).registry, explicit);
    await c1.close();
    const project = join(box.dir, 'project');
    mkdirSync(join(project, 'deep', 'er'), { recursive: true });
    const c2 = await connect(box, { cwd: project, env: { SUBAGENT_DIR: undefined } });
    const made = await call(c2, 'start', { name: 'where/cwd', cli: 'shell', prompt: 'true' });
    assert.equal(made.registry, join(project, '.subagents'));
    await c2.close();
    const c3 = await connect(box, { cwd: join(project, 'deep', 'er'), env: { SUBAGENT_DIR: undefined } });
    const listed = await call(c3, 'status', {});
    assert.equal(listed.registry, join(project, '.subagents'), 'found by walking up, as the verbs find it');
    await c3.close();
  });
});
