// Copilot's own end-to-end tests, beside its row of the contract suite (test/e2e/contract/copilot.ts, run
// by test/e2e/contract-*.test.ts): the real, pinned GitHub Copilot CLI (test/.clis, 1.0.102) in its offline
// bring-your-own-key mode against the fake chat-completions server (test/fakes/openai-chat.ts) on
// 127.0.0.1. Each test has its own sandbox: registry, HOME and COPILOT_HOME (so its own sessions), and a
// marker in the environment of every process it starts, by which `after` ends leftovers (by pid). The
// CLI's package is unpacked once into a shared cache (COPILOT_PKG_CACHE_HOME), not once per HOME.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { requireCli } from '../fakes/env.js';
import { assertError, assertOk } from '../support/run.js';
import { stderrTail } from '../support/registry.js';
import { requestsWith, uniq, waitDone, type CliBox } from '../fakes/world.js';
import { copilotBox, server } from './contract/copilot.js';

/** A box whose runs work in a project directory, with `copilotHome` its Copilot store. */
type CopilotBox = CliBox & { copilotHome: string };

/** A sandbox whose every process runs Copilot against the fake, in its own HOME and COPILOT_HOME. */
async function box(t: Parameters<typeof copilotBox>[0], label: string): Promise<CopilotBox> {
  const b = (await copilotBox(t, label))!.b as CopilotBox;
  b.copilotHome = b.env.COPILOT_HOME!;
  return b;
}

test('--agent runs a custom agent of the store, on start and again on resume; --file is E_ARG_UNSUPPORTED before anything is recorded', async (t) => {
  if (!requireCli(t, 'copilot')) return;
  const b = await box(t, 'agent');
  const s = await server();
  const marker = uniq('REVIEWER-AGENT-INSTRUCTIONS');
  mkdirSync(join(b.copilotHome, 'agents'), { recursive: true });
  writeFileSync(join(b.copilotHome, 'agents', 'reviewer.agent.md'), `---\nname: reviewer\ndescription: Reviews for the e2e test\n---\n\n${marker}\n`);
  const words = [uniq('agent-one'), uniq('agent-two')];
  assertOk(b.run('start-subagent', ['--name', 'ag', '--cli', 'copilot', '--cwd', b.project, '--agent', 'reviewer', '--prompt', `REPLY:${words[0]}`]), 'start');
  const a1 = await waitDone(b, 'ag', t);
  assert.equal(a1.outcome, 'succeeded', `${a1.error} ${stderrTail(b.registry, 'ag')}`);
  assertOk(b.run('resume-subagent', ['--name', 'ag', '--prompt', `REPLY:${words[1]}`]), 'resume');
  const a2 = await waitDone(b, 'ag', t);
  assert.equal(a2.outcome, 'succeeded', `${a2.error} ${stderrTail(b.registry, 'ag', 2)}`);
  for (const w of words) {
    const req = requestsWith(s, w)[0];
    assert.ok(req && JSON.stringify(req.body).includes(marker), `the custom agent's instructions reached the model (${w})`);
  }

  const file = join(b.dir, 'notes.txt');
  writeFileSync(file, 'x\n');
  const e = assertError(
    b.run('start-subagent', ['--name', 'nofile', '--cli', 'copilot', '--cwd', b.project, '--file', file, '--prompt', 'REPLY:x']),
    'E_ARG_UNSUPPORTED',
  );
  assert.equal(e.details.cli, 'copilot');
  assertError(b.run('result', ['--name', 'nofile', '--json']), 'E_NAME_NOT_FOUND');
});

test('not signed in (no GitHub token, no provider key): failed with reason auth, with the line Copilot printed', async (t) => {
  if (!requireCli(t, 'copilot')) return;
  const b = await box(t, 'noauth');
  // The box's bring-your-own-key setup taken away: Copilot then has nothing to sign in with.
  const unset = { COPILOT_OFFLINE: undefined, COPILOT_PROVIDER_BASE_URL: undefined, COPILOT_PROVIDER_API_KEY: undefined };
  assertOk(b.run('start-subagent', ['--name', 'noauth', '--cli', 'copilot', '--cwd', b.project, '--prompt', 'REPLY:never asked'], { env: unset }), 'start');
  const a = await waitDone(b, 'noauth', t);
  assert.equal(a.outcome, 'failed', JSON.stringify(a));
  assert.equal(a.exitCode, 1);
  assert.equal(a.reason, 'auth');
  assert.equal(a.error, 'copilot exited with status 1; stderr: Error: No authentication information found.');
  assert.equal(requestsWith(await server(), 'REPLY:never asked').length, 0, 'no model request');
});
