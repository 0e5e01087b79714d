// test-order: first — among the longest files (real agent CLIs; its failures test waits out Qwen's retries of an HTTP 500, ~90 s): started before all others (scripts/test.sh).
// Qwen Code's own end-to-end tests, beside its row of the contract suite (test/e2e/contract/qwen.ts, run
// by test/e2e/contract-*.test.ts): the real, pinned Qwen Code (test/.clis, 0.24.4) against the fake chat-completions
// server (test/fakes/openai-chat.ts, Qwen's flavour) on 127.0.0.1. Each test has its own sandbox:
// registry, HOME (so its own ~/.qwen: settings and sessions) and a project directory, and a marker in
// the environment of every process it starts, by which `after` ends leftovers (by pid).
//
// The fake runs in this process, so nothing that waits on a run may block the event loop: the waiting
// verbs go through runAsync (spawnSync would hold the fake's answers until the wait times out).
//
// Qwen retries a 5xx 6 times with back-off (7 requests, ~70–90 s) and nothing shortens that (its
// settings' maxRetries is its OpenAI client's, not this loop); a 429 honours `retry-after-ms`. The 500
// run is started first and checked last, so the other failures are checked while it retries.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { requireCli } from '../fakes/env.js';
import { assertOk } from '../support/run.js';
import { until, untilInRun } from '../support/wait.js';
import { pidsWithCmdline, pidsWithEnv } from '../support/procs.js';
import { recordOf, runDirPath, stderrTail } from '../support/registry.js';
import { requestsWith, uniq, waitDone, startIn, type CliBox } from '../fakes/world.js';
import { qwenBox, RATE_LIMITED, server } from './contract/qwen.js';

/** A sandbox whose every process runs Qwen against the fake, with its own HOME and ~/.qwen, and works in a project directory of its own (`--cwd`). */
async function box(t: Parameters<typeof qwenBox>[0], label: string): Promise<CliBox> {
  return (await qwenBox(t, label))!.b;
}

test('cancel while a background child runs its tool: the child is cancelled (never done), no process of the run is left', async (t) => {
  if (!requireCli(t, 'qwen')) return;
  const b = await box(t, 'cancel-child');
  const marker = uniq('childloop');
  startIn(b, 'qwen', 'bg', `TASK:slow child:TOOL:Bash:for i in $(seq 600); do sleep 1; done; echo ${marker}`);
  const runId = recordOf(b.registry, 'bg').runId as string;
  await untilInRun("the child's shell tool to be running", runDirPath(b.registry, 'bg'), () => pidsWithCmdline(marker).length > 0);
  const running = await until('the child listed running', async () => {
    const a = assertOk(await b.runAsync('status', ['--name', 'bg']), 'status').agents[0];
    return a.children.length === 1 && a.children[0].status === 'running' ? a : null;
  });
  assert.match(running.children[0].id, /^general-purpose-call_/);
  const c = assertOk(await b.runAsync('cancel', ['--name', 'bg']), 'cancel');
  assert.deepEqual(c.survivors, []);
  const a = await waitDone(b, 'bg');
  assert.equal(a.outcome, 'cancelled');
  assert.deepEqual(
    a.children.map((k: any) => [k.id, k.status]),
    [[running.children[0].id, 'cancelled']],
  );
  await until('no process of the run', () => pidsWithEnv(`SUBAGENT_RUN_ID=${runId}`).length === 0 && pidsWithCmdline(marker).length === 0);
});

test("failures are recorded failed with Qwen's own words: HTTP 500 (after its retries), 401, 429, an unknown resume id; unsupported flags are refused", async (t) => {
  if (!requireCli(t, 'qwen')) return;
  const b = await box(t, 'errors');
  const s = await server();
  const why = uniq('boom');
  startIn(b, 'qwen', 'e500', `ERROR:500:${why}`);
  startIn(b, 'qwen', 'e401', `ERROR:401:${why}`);
  startIn(b, 'qwen', 'e429', `${RATE_LIMITED} ${why}`);
  startIn(b, 'qwen', 'gone', 'REPLY:first');

  for (const [name, want] of [
    ['e401', `[API Error: 401 ${why}]`],
    ['e429', '[API Error: 429 slow down]'],
  ] as const) {
    const a = await waitDone(b, name);
    assert.equal(a.outcome, 'failed', JSON.stringify(a));
    assert.equal(a.exitCode, 1);
    assert.ok(a.error.includes(want), a.error);
  }
  assert.equal(requestsWith(s, `${RATE_LIMITED} ${why}`, { main: true }).length, 7, 'a 429 is retried 6 times, here without waiting (retry-after-ms: 1)');

  // A session Qwen no longer has: the resume fails with its message (on stderr), nothing new is made.
  const g = await waitDone(b, 'gone');
  assert.equal(g.outcome, 'succeeded', `${g.error} ${stderrTail(b.registry, 'gone')}`);
  rmSync(join(b.dir, '.qwen', 'projects', b.project.replace(/[^A-Za-z0-9]/g, '-'), 'chats', `${g.sessionId}.jsonl`));
  assertOk(b.run('resume-subagent', ['--name', 'gone', '--prompt', 'REPLY:second']), 'resume');
  const g2 = await waitDone(b, 'gone');
  assert.equal(g2.outcome, 'failed');
  assert.equal(g2.exitCode, 1);
  assert.match(g2.error, new RegExp(`No saved session found with ID ${g.sessionId}`), g2.error);
  assert.equal(requestsWith(s, 'REPLY:second', { main: true }).length, 0, 'no model request');

  // --agent, --variant, --file have no Qwen flag: refused before anything is recorded.
  writeFileSync(join(b.dir, 'f.txt'), 'x');
  for (const flag of [
    ['--agent', 'reviewer'],
    ['--variant', 'high'],
    ['--file', join(b.dir, 'f.txt')],
  ]) {
    const refused = b.run('start-subagent', ['--name', 'refused', '--cli', 'qwen', ...flag, '--prompt', 'REPLY:x']);
    assert.equal(refused.code, 1, refused.stdout);
    assert.equal(refused.json?.code, 'E_ARG_UNSUPPORTED', `${flag[0]}: ${refused.stdout}`);
  }
  assert.throws(() => recordOf(b.registry, 'refused'));

  const a = await waitDone(b, 'e500');
  assert.equal(a.outcome, 'failed', JSON.stringify(a));
  assert.equal(a.exitCode, 1);
  assert.ok(a.error.includes(`[API Error: 500 ${why}]`), a.error);
  assert.equal(requestsWith(s, `ERROR:500:${why}`, { main: true }).length, 7, 'Qwen retries a 500 six times, whatever its settings say');
});
