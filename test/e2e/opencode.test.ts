// test-order: first — among the longest files (real agent CLIs; OpenCode's runs are the slowest to start, and its API-error test waits out its retries): started before all others (scripts/test.sh).
// OpenCode's own end-to-end tests, beside its row of the contract suite (test/e2e/contract/opencode.ts, run
// by test/e2e/contract-*.test.ts): the real, pinned OpenCode (test/.clis, 1.18.33) against the fake chat-completions
// server (test/fakes/openai-chat.ts) on 127.0.0.1. Each test has its own sandbox: registry, HOME and
// XDG dirs (so its own opencode.db), and a marker in the environment of every process it starts, by which
// `after` ends leftovers (by pid). An OpenCode run costs ~3 s and ~600 MB, so runs are few and serial.
//
// OpenCode retries 5xx/429 silently (5 retries, 2 s doubling back-off, ~60 s) and no setting of its own
// shortens that; it does honour the server's `retry-after-ms` header, which the fake sends as 0 on every
// error status, so an HTTP 500 fails within seconds here.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { requireCli } from '../fakes/env.js';
import { assertOk } from '../support/run.js';
import { untilInRun } from '../support/wait.js';
import { recordOf, runDirPath, stderrTail } from '../support/registry.js';
import { requestsWith, uniq, waitDone, startIn, type CliBox } from '../fakes/world.js';
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

test('an API error (HTTP 400, and HTTP 500 after its retries) is outcome failed with the error; a permission auto-reject (exit 0, no answer) too', async (t) => {
  if (!requireCli(t, 'opencode')) return;
  const b = await box(t, 'errors');
  startIn(b, 'opencode', 'e400', 'ERROR:400:fake bad request for the e2e test');
  // OpenCode creates its database on first use with no lock of its own: two first runs at once in a new
  // store race and one exits 1 ("Failed query: CREATE TABLE …"). The second run starts once the first has
  // a session, i.e. once the store exists (opencode.prepare() fixes this when the supervisor calls it).
  // (untilInRun: OpenCode's boot took over 60 s on the loaded shared machine.)
  await untilInRun('the first run to open a session', runDirPath(b.registry, 'e400'), () => recordOf(b.registry, 'e400').sessionId);
  // Reading a file outside the project asks for a permission; headless OpenCode rejects it and exits 0.
  startIn(b, 'opencode', 'denied', 'TOOL:read:{"filePath":"/etc/hostname"}');
  startIn(b, 'opencode', 'e500', 'ERROR:500:fake upstream failure for the e2e test');

  const e = await waitDone(b, 'e400', t);
  assert.equal(e.outcome, 'failed');
  assert.equal(e.exitCode, 1);
  assert.match(e.error, /APIError: fake bad request for the e2e test \(HTTP 400\)/);
  assert.match(e.sessionId ?? '', /^ses_/, 'the session id comes with the error event');

  // HTTP 500: retried (retries are not failures), then failed with the API's error.
  const f = await waitDone(b, 'e500', t);
  assert.equal(f.outcome, 'failed');
  assert.equal(f.exitCode, 1);
  assert.match(f.error, /APIError: fake upstream failure for the e2e test \(HTTP 500\)/);
  const tries = requestsWith(await server(), 'ERROR:500:fake upstream failure', { main: true });
  t.diagnostic(`HTTP 500: ${tries.length} requests in ${tries.at(-1)!.receivedAt - tries[0]!.receivedAt} ms`);
  assert.ok(tries.length >= 2, `OpenCode retried the 500 (${tries.length} requests)`);
  // With its own back-off the retries take ~60 s (2+4+8+16+30 s); `retry-after-ms: 0` makes them immediate.
  assert.ok(tries.at(-1)!.receivedAt - tries[0]!.receivedAt < 20_000, 'the retries followed retry-after-ms, not the default back-off');

  const d = await waitDone(b, 'denied', t);
  assert.equal(d.exitCode, 0, 'OpenCode itself exits 0');
  assert.equal(d.outcome, 'failed', 'but the run gave no answer');
  assert.match(d.error, /auto-rejected \(read: \/etc\/hostname\)/);
  assert.equal(d.toolUses, 1);
  const res = assertOk(b.run('result', ['--name', 'denied', '--json']), 'result denied');
  assert.equal(res.lastAssistantText, null, 'no answer is null, not ""');
});
