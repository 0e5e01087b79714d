// OpenCode's own end-to-end tests, beside its row of the contract suite (test/e2e/contract/opencode.ts, run
// by test/e2e/contract-*.test.ts): the real, pinned OpenCode (test/.clis, 1.18.33) against the fake chat-completions
// server (test/fakes/openai-chat.ts) on 127.0.0.1. Each test has its own sandbox: registry, HOME and
// XDG dirs (so its own opencode.db), and a marker in the environment of every process it starts, by which
// `after` ends leftovers (by pid). An OpenCode run costs ~3 s and ~600 MB, so runs are few and serial.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { requireCli } from '../fakes/env.js';
import { assertOk } from '../support/run.js';
import { stderrTail } from '../support/registry.js';
import { requestsWith, uniq, waitDone, type CliBox } from '../fakes/world.js';
import { opencodeBox, server } from './contract/opencode.js';

/** A sandbox whose every process runs OpenCode against the fake, in its own HOME and XDG dirs, and works in a project directory (not HOME: OpenCode limits itself in a home directory). */
async function box(t: Parameters<typeof opencodeBox>[0], label: string): Promise<CliBox> {
  return (await opencodeBox(t, label))!.b;
}

test('-- args reach OpenCode on start and again on resume (--auto lets both runs read a file outside the project)', async (t) => {
  if (!requireCli(t, 'opencode')) return;
  const b = await box(t, 'extra');
  const s = await server();
  // Reading a file outside the project asks for a permission, which headless OpenCode rejects unless
  // --auto approves it: only then does the file's content come back to the model as the tool output.
  const words = [uniq('outside-one'), uniq('outside-two')];
  const files = words.map((word, i) => {
    const f = join(b.dir, `outside-${i + 1}.txt`);
    writeFileSync(f, `${word}\n`);
    return f;
  });
  const read = (i: number) => `TOOL:read:${JSON.stringify({ filePath: files[i] })}`;
  assertOk(b.run('start-subagent', ['--name', 'args', '--cli', 'opencode', '--cwd', b.project, '--prompt', read(0), '--', '--auto']), 'start');
  const a1 = await waitDone(b, 'args', t);
  assert.equal(a1.outcome, 'succeeded', `${a1.error} ${stderrTail(b.registry, 'args')}`);
  assert.deepEqual(a1.extraArgs, ['--auto']);
  assertOk(b.run('resume-subagent', ['--name', 'args', '--prompt', read(1)]), 'resume');
  const a2 = await waitDone(b, 'args', t);
  assert.equal(a2.outcome, 'succeeded', `${a2.error} ${stderrTail(b.registry, 'args', 2)}`);
  assert.equal(a2.run, 2);
  assert.deepEqual(a2.extraArgs, ['--auto'], 'run 2 keeps the arguments of run 1');
  for (const i of [0, 1]) {
    const outputs = requestsWith(s, files[i]!, { main: true }).flatMap((r) => r.conversation!.toolOutputs.map((o) => o.text));
    assert.ok(
      outputs.some((o) => o.includes(words[i]!)),
      `run ${i + 1}: the file's content came back from the read tool: ${JSON.stringify(outputs)}`,
    );
  }
});
