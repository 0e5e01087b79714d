/**
 * `--cli acp` through the real verbs, with a tiny agent that speaks ACP (test/fakes/acp-agent.ts): the
 * answer and the session, the permission policy (each request recorded; a refused one is
 * `permission-denied`), the agent's crash, its noise, its early exit, a resume (loaded, or refused), a
 * cancel (session/cancel first), and the bad input refused before anything is recorded. The real agents
 * in ACP mode are exercised in test/e2e/ (the contract suite's acp rows).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from '../support/paths.js';
import { makeBox } from '../support/box.js';
import { recordOf, runDirPath } from '../support/registry.js';
import { assertOk } from '../support/run.js';
import { expectError, untilStatus, waitTerminal } from '../support/shell.js';

const AGENT = join(ROOT, 'dist', 'test', 'fakes', 'acp-agent.js');
const box = makeBox('acp');
const fakeBin = join(box.dir, 'fakebin');
mkdirSync(fakeBin, { recursive: true });
// A `gemini` on PATH that is the fake: the preset's command line reaches it.
writeFileSync(join(fakeBin, 'gemini'), `#!/bin/sh\nexec '${process.execPath}' '${AGENT}' ok\n`);
chmodSync(join(fakeBin, 'gemini'), 0o755);
box.env.PATH = `${fakeBin}:${box.env.PATH}`;

const agent = (mode: string) => `${process.execPath} ${AGENT} ${mode}`;

function start(name: string, prompt: string, more: string[] = [], mode = 'ok'): any {
  return assertOk(box.run('start-subagent', ['--name', name, '--cli', 'acp', '--acp-command', agent(mode), '--prompt', prompt, ...more]), `start ${name}`);
}

const events = (name: string, run = 1) => readFileSync(join(runDirPath(box.registry, name, run), 'events.log'), 'utf8');
const answer = (name: string) => assertOk(box.run('result', ['--name', name, '--json']), 'result').lastAssistantText;

test("a run: the prompt (any size) reaches the agent whole, its answer and session are the run's; the conversation is in the event log", () => {
  const big = `hello\n${'x'.repeat(300 * 1024)}`;
  const file = join(box.dir, 'big.txt');
  writeFileSync(file, big);
  const started = assertOk(box.run('start-subagent', ['--name', 'plain', '--cli', 'acp', '--acp-command', agent('ok'), '--prompt-file', file]), 'start');
  assert.equal(started.cli, 'acp');
  assert.equal(started.sessionId, null, 'the agent chooses it');
  const a = waitTerminal(box, ['plain']).plain;
  assert.equal(a.outcome, 'succeeded', JSON.stringify(a));
  assert.match(a.sessionId, /^fake-\d+$/);
  assert.deepEqual(a.usage, { inputTokens: 10, outputTokens: 2, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0, totalTokens: 12, costUsd: null });
  assert.equal(answer('plain'), `echo: hello (${Buffer.byteLength(big)} bytes)`);
  const log = events('plain');
  assert.ok(log.includes('"client":{"jsonrpc":"2.0","id":1,"method":"initialize"'), 'our requests, wrapped');
  assert.ok(!log.includes('x'.repeat(1000)), 'the prompt is its own file, not in the log');
  assert.deepEqual(recordOf(box.registry, 'plain').acp, { command: [process.execPath, AGENT, 'ok'], preset: null, permissions: 'approve-reads' });
  const found = assertOk(box.run('search', ['--name', 'plain', '--pattern', 'echo: hello']), 'search');
  assert.equal(found.matches[0].role, 'assistant');
});

test('permissions: approve-reads (the default) allows a read and refuses a command; deny refuses a read; approve-all allows a command; each is recorded', () => {
  start('p-read', 'PERM:read');
  start('p-exec', 'PERM:execute');
  start('p-deny', 'PERM:read', ['--permissions', 'deny']);
  start('p-all', 'PERM:execute', ['--permissions', 'approve-all']);
  const w = waitTerminal(box, ['p-read', 'p-exec', 'p-deny', 'p-all']);
  assert.equal(w['p-read'].outcome, 'succeeded');
  assert.match(answer('p-read'), /allowed$/);
  assert.equal(w['p-all'].outcome, 'succeeded');
  for (const name of ['p-exec', 'p-deny']) {
    assert.equal(w[name].outcome, 'failed', name);
    assert.equal(w[name].reason, 'permission-denied', name);
    assert.match(w[name].error, /^acp was refused permission for 1 tool call: a \w+ call/);
    assert.match(answer(name), /refused$/);
    assert.ok(
      events(name).includes('"client":{"jsonrpc":"2.0","id":"perm-1","result":{"outcome":{"outcome":"selected","optionId":"no"}}}'),
      'the answer is recorded',
    );
  }
  assert.equal(recordOf(box.registry, 'p-all').acp.permissions, 'approve-all');
});

test("the agent's crash, its noise and its early exit: crashed with stderr's words; noise skipped and counted", () => {
  start('crash', 'hi', [], 'crash');
  start('noisy', 'hi', [], 'badjson');
  start('early', 'hi', [], 'early');
  const w = waitTerminal(box, ['crash', 'noisy', 'early']);
  assert.equal(w.crash.outcome, 'failed');
  assert.equal(w.crash.reason, 'crashed');
  assert.equal(w.crash.exitCode, 3);
  assert.equal(w.crash.error, 'the agent exited with status 3 before its turn ended; stderr: boom: the fake agent crashed');
  assert.equal(w.noisy.outcome, 'succeeded');
  assert.equal(w.noisy.skippedLines, 2);
  assert.equal(w.early.outcome, 'failed');
  assert.equal(w.early.reason, 'crashed');
  assert.match(w.early.error, /^the agent exited with status 0 before its turn ended/);
});

test('resume: the session is loaded and the run kept its agent and policy; a preset that offers no resume is refused; an agent that offers none fails the run', () => {
  start('again', 'first', ['--permissions', 'approve-all']);
  const a1 = waitTerminal(box, ['again']).again;
  assertOk(box.run('resume-subagent', ['--name', 'again', '--prompt', 'second']), 'resume');
  const a2 = waitTerminal(box, ['again']).again;
  assert.equal(a2.outcome, 'succeeded');
  assert.equal(a2.sessionId, a1.sessionId);
  assert.ok(events('again', 2).includes(`"method":"session/load","params":{"sessionId":"${a1.sessionId}"`));
  assert.equal(recordOf(box.registry, 'again', 2).acp.permissions, 'approve-all');
  assert.equal(answer('again'), 'echo: second (6 bytes)');

  assertOk(box.run('start-subagent', ['--name', 'gem', '--cli', 'acp', '--acp-command', 'gemini', '--prompt', 'hi']), 'start gemini');
  assert.equal(waitTerminal(box, ['gem']).gem.outcome, 'succeeded');
  assert.deepEqual(recordOf(box.registry, 'gem').acp, { command: ['gemini', '--acp'], preset: 'gemini', permissions: 'approve-reads' });
  expectError(box, 'resume-subagent', ['--name', 'gem', '--prompt', 'more'], 'E_ARG_UNSUPPORTED');

  // A copy of the registry (a clone's, found by walking up: untrusted) does not run the command its record names.
  const clone = join(box.dir, 'clone');
  mkdirSync(clone);
  execFileSync('cp', ['-a', box.registry, join(clone, '.subagents')]);
  const env = { ...box.env, SUBAGENT_DIR: undefined };
  expectError(box, 'resume-subagent', ['--name', 'again', '--prompt', 'third'], 'E_REGISTRY_UNTRUSTED', { cwd: clone, env });

  start('nores', 'first', [], 'noresume');
  waitTerminal(box, ['nores']);
  assertOk(box.run('resume-subagent', ['--name', 'nores', '--prompt', 'second']), 'resume');
  const n = waitTerminal(box, ['nores']).nores;
  assert.equal(n.outcome, 'failed');
  assert.match(n.error, /neither session\/load nor session\/resume/);
});

test('cancel: the agent is told (session/cancel) before the signals; cancelled', async () => {
  start('held', 'WAIT');
  await untilStatus(box, 'held', (a) => a.status === 'running' && a.toolUses === 1, 'the held turn');
  const c = assertOk(box.run('cancel', ['--name', 'held']), 'cancel');
  assert.equal(c.outcome, 'cancelled');
  assert.equal(waitTerminal(box, ['held']).held.reason, 'cancelled');
  assert.ok(events('held').includes('"method":"session/cancel"'));
});

test("the supervisor's own stops (a time cap, a stall) ask the agent first too; the queue and end hooks as for any CLI", async () => {
  const hook = join(box.dir, 'hook-ran');
  start('capped', 'WAIT', ['--max-time', '1']);
  start('stuck', 'WAIT', ['--stall-after', '1', '--stall-action', 'cancel', '--on-end', `touch ${hook}`]);
  const w = waitTerminal(box, ['capped', 'stuck']);
  assert.equal(w.capped.outcome, 'failed');
  assert.equal(w.capped.reason, 'max-time');
  assert.equal(w.stuck.outcome, 'cancelled');
  assert.equal(w.stuck.endReason, 'stalled');
  for (const name of ['capped', 'stuck']) assert.ok(events(name).includes('"method":"session/cancel"'), name);
  await untilStatus(box, 'stuck', () => existsSync(hook), 'the end hook ran');
  // Queued behind a limit of one, then run (the limit removed again with the last start).
  start('first', 'one', ['--max-concurrent', '1']);
  start('second', 'two', ['--max-concurrent', '0']);
  const q = waitTerminal(box, ['first', 'second']);
  assert.equal(q.first.outcome, 'succeeded');
  assert.equal(q.second.outcome, 'succeeded');
});

test('bad input is refused before anything is recorded: no agent, a bad policy, the options on another CLI, an agent not on PATH', () => {
  const base = ['--name', 'bad', '--prompt', 'x'];
  const e = expectError(box, 'start-subagent', [...base, '--cli', 'acp'], 'E_ARG_INVALID');
  assert.match(e.details.hint, /--acp-command gemini\|qwen\|copilot\|opencode/);
  expectError(box, 'start-subagent', [...base, '--cli', 'acp', '--acp-command', ' '], 'E_ARG_INVALID');
  expectError(box, 'start-subagent', [...base, '--cli', 'acp', '--acp-command', agent('ok'), '--permissions', 'yes'], 'E_ARG_INVALID');
  expectError(box, 'start-subagent', [...base, '--cli', 'shell', '--permissions', 'deny'], 'E_ARG_UNSUPPORTED');
  expectError(box, 'start-subagent', [...base, '--cli', 'shell', '--acp-command', 'gemini'], 'E_ARG_UNSUPPORTED');
  expectError(box, 'start-subagent', [...base, '--cli', 'acp', '--acp-command', 'no-such-agent --acp'], 'E_CMD_MISSING');
  expectError(box, 'start-subagent', [...base, '--cli', 'acp', '--acp-command', agent('ok'), '--model', 'm'], 'E_ARG_UNSUPPORTED');
  const blank = expectError(box, 'start-subagent', [...base, '--cli', 'acp'], 'E_ARG_INVALID', { env: { SUBAGENT_ACP_COMMAND: '  ' } });
  assert.equal(blank.details.variable, 'SUBAGENT_ACP_COMMAND');
  // The variable is the default.
  assertOk(
    box.run('start-subagent', ['--name', 'byenv', '--cli', 'acp', '--prompt', 'env'], { env: { SUBAGENT_ACP_COMMAND: agent('ok') } }),
    'by the variable',
  );
  assert.equal(waitTerminal(box, ['byenv']).byenv.outcome, 'succeeded');
});
