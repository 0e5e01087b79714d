// `--cli acp` with the real pinned CLIs in ACP mode, beyond the contract suite's rows (test/e2e/contract/
// acp.ts): a permission the default policy refuses (Copilot asks before a shell command), Gemini's run and
// its resume refused up front (its session/load is broken in 0.61.0), and OpenCode's preset — each
// against its CLI's fake model server, in a box set up as the CLI's own e2e tests set it up.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { requireCli, type CliName } from '../fakes/env.js';
import { startGoogleGenAI } from '../fakes/google-genai.js';
import { startOpenAIChat } from '../fakes/openai-chat.js';
import type { FakeServer } from '../fakes/script.js';
import { cliBox, fileServer, uniq, waitDone, type CliBox, type CliBoxOptions } from '../fakes/world.js';
import { runDirPath, stderrTail } from '../support/registry.js';
import { assertError, assertOk } from '../support/run.js';

const google = fileServer(startGoogleGenAI);
const chat = fileServer(startOpenAIChat);

/** A box of `cli`'s, as its own e2e tests set it up (the caller checked that the pinned CLI is there). */
async function acpBox(
  t: { after(fn: () => void | Promise<void>): void },
  cli: CliName,
  server: () => Promise<FakeServer>,
  o: CliBoxOptions = {},
): Promise<CliBox> {
  const srv = await server();
  return cliBox(t, cli, `e2e-acp-${cli}`, srv.url, o);
}

const start = (b: CliBox, name: string, preset: string, prompt: string, more: string[] = []) =>
  assertOk(
    b.run('start-subagent', ['--name', name, '--cli', 'acp', '--acp-command', preset, '--cwd', b.project, '--prompt', prompt, ...more]),
    `start ${name}`,
  );

test('acp copilot: the default policy (approve-reads) refuses the shell command Copilot asks to run: recorded, failed permission-denied', async (t) => {
  if (!requireCli(t, 'copilot')) return;
  const b = await acpBox(t, 'copilot', chat, { clear: /^(COPILOT_|GH_TOKEN$|GITHUB_TOKEN$)/ });
  const word = uniq('refused');
  start(b, 'ask', 'copilot', `TOOL:Bash:echo ${word}`);
  const a = await waitDone(b, 'ask', t);
  assert.equal(a.outcome, 'failed', `${a.error} ${stderrTail(b.registry, 'ask')}`);
  assert.equal(a.reason, 'permission-denied');
  assert.match(a.error, /^acp was refused permission for 1 tool call: /);
  const log = readFileSync(join(runDirPath(b.registry, 'ask'), 'events.log'), 'utf8');
  assert.match(log, /"method":"session\/request_permission".*"kind":"execute"/, "Copilot's request, as it came");
  assert.match(log, /\{"client":\{"jsonrpc":"2\.0","id":\d+,"result":\{"outcome":\{"outcome":"selected","optionId":"reject_once"\}\}\}\}/, 'our answer');
  const tool = assertOk(b.run('search', ['--name', 'ask', '--pattern', word, '--role', 'tool']), 'search').matches[0];
  assert.ok(tool, 'the refused call is in the transcript');
});

test('acp gemini: start → result with a shell call (approve-all); a resume is refused before anything is recorded', async (t) => {
  if (!requireCli(t, 'gemini')) return;
  const b = await acpBox(t, 'gemini', google);
  const word = uniq('gemacp');
  start(b, 'gm', 'gemini', `TOOL:Bash:echo ${word}`, ['--permissions', 'approve-all']);
  const a = await waitDone(b, 'gm', t);
  assert.equal(a.outcome, 'succeeded', `${a.error} ${stderrTail(b.registry, 'gm')}`);
  assert.equal(a.toolUses, 1);
  assert.ok(a.usage.inputTokens > 0 && a.usage.outputTokens > 0, JSON.stringify(a.usage));
  assert.equal(assertOk(b.run('result', ['--name', 'gm', '--json']), 'result').lastAssistantText, `done: ${word}`);
  const e = assertError(b.run('resume-subagent', ['--name', 'gm', '--prompt', 'REPLY:again']), 'E_ARG_UNSUPPORTED');
  assert.match(e.error, /gemini agent cannot resume a session over ACP/);
});

test('acp opencode: start → result with a shell call; the usage and the cost it reports', async (t) => {
  if (!requireCli(t, 'opencode')) return;
  const b = await acpBox(t, 'opencode', chat, { clear: /^(OPENCODE|XDG_)/ });
  const word = uniq('ocacp');
  start(b, 'oc', 'opencode', `TOOL:Bash:echo ${word}`, ['--permissions', 'approve-all']);
  const a = await waitDone(b, 'oc', t);
  assert.equal(a.outcome, 'succeeded', `${a.error} ${stderrTail(b.registry, 'oc')}`);
  assert.match(a.sessionId, /^ses_/);
  assert.equal(assertOk(b.run('result', ['--name', 'oc', '--json']), 'result').lastAssistantText, `done: ${word}`);
  assert.ok(a.usage.inputTokens > 0, JSON.stringify(a.usage));
  assert.equal(a.usage.costUsd, 0, "OpenCode's usage_update cost (the fake model is free)");
});
