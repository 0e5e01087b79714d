// Qwen Code's own end-to-end tests, beside its row of the contract suite (test/e2e/contract/qwen.ts, run
// by test/e2e/contract-*.test.ts): the real, pinned Qwen Code (test/.clis, 0.24.4) against the fake
// chat-completions server (test/fakes/openai-chat.ts, Qwen's flavour) on 127.0.0.1. Each test has its own
// sandbox: registry, HOME (so its own ~/.qwen: settings and sessions) and a project directory, and a
// marker in the environment of every process it starts, by which `after` ends leftovers (by pid).
//
// The fake runs in this process, so nothing that waits on a run may block the event loop: the waiting
// verbs go through runAsync (spawnSync would hold the fake's answers until the wait times out).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { requireCli } from '../fakes/env.js';
import { assertOk } from '../support/run.js';
import { until, untilInRun } from '../support/wait.js';
import { pidsWithCmdline, pidsWithEnv } from '../support/procs.js';
import { recordOf, runDirPath } from '../support/registry.js';
import { uniq, waitDone, startIn, type CliBox } from '../fakes/world.js';
import { qwenBox } from './contract/qwen.js';

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
