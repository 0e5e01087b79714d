// test-order: first — among the three longest files (real agent CLIs; opencode): started before all others (scripts/test.sh).
// Every verb through the real, pinned OpenCode (test/.clis, 1.18.33) against the fake chat-completions
// server (test/fakes/openai-chat.ts) on 127.0.0.1. Each test has its own sandbox: registry, HOME and
// XDG dirs (so its own opencode.db), and a marker in the environment of every process it starts, by which
// `after` ends leftovers (by pid). An OpenCode run costs ~3 s and ~600 MB, so runs are few and serial.
//
// OpenCode retries 5xx/429 silently (5 retries, 2 s doubling back-off, ~60 s) and no setting of its own
// shortens that; it does honour the server's `retry-after-ms` header, which the fake sends as 0 on every
// error status, so an HTTP 500 fails within seconds here.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startOpenAIChat } from '../fakes/openai-chat.js';
import { requireCli } from '../fakes/env.js';
import { assertOk } from '../support/run.js';
import { until, untilInRun } from '../support/wait.js';
import { pidsWithCmdline, pidsWithEnv } from '../support/procs.js';
import { readJson, recordOf, runDirPath, stderrTail } from '../support/registry.js';
import { cliBox, fileServer, requestsWith, uniq, waitDone, type CliBox, bigPromptLines, startBig, startLongTool, resumeAfterCancel } from '../fakes/world.js';

const server = fileServer(startOpenAIChat);

/** A sandbox whose every process runs OpenCode against the fake, in its own HOME and XDG dirs, and works in a project directory (not HOME: OpenCode limits itself in a home directory). */
async function box(t: { after(fn: () => void | Promise<void>): void }, label: string): Promise<CliBox> {
  return cliBox(t, 'opencode', `e2e-opencode-${label}`, (await server()).url, { clear: /^(OPENCODE|XDG_)/ });
}

test('start → wait → result; resume continues the same session; search sees both runs; tool calls are transcript tools; --file and --model reach the CLI', async (t) => {
  if (!requireCli(t, 'opencode')) return;
  const b = await box(t, 'resume');
  const s = await server();
  const one = uniq('alpha');
  const two = uniq('beta');
  const attached = uniq('attached-file-content');
  const file = join(b.dir, 'notes.txt');
  writeFileSync(file, `${attached}\n`);

  const started = assertOk(
    b.run('start-subagent', [
      '--name',
      'oc',
      '--cli',
      'opencode',
      '--cwd',
      b.project,
      '--model',
      'fake/fake-model',
      '--file',
      file,
      '--prompt',
      `TOOL:bash:echo ${one}`,
    ]),
    'start',
  );
  assert.equal(started.cli, 'opencode');
  assert.equal(started.model, 'fake/fake-model');
  assert.equal(started.sessionId, null, 'OpenCode chooses its session id; it is known once the stream starts');
  const a1 = await waitDone(b, 'oc', t);
  assert.equal(a1.outcome, 'succeeded', `${a1.error} ${stderrTail(b.registry, 'oc')}`);
  assert.equal(a1.exitCode, 0);
  assert.match(a1.sessionId, /^ses_[A-Za-z0-9]+$/);
  assert.equal(a1.toolUses, 1);
  assert.ok(a1.usage && a1.usage.totalTokens > 0 && a1.usage.inputTokens > 0, JSON.stringify(a1.usage));
  assert.equal(a1.usage.costUsd, 0);
  assert.deepEqual(a1.children, []);

  const r1 = assertOk(b.run('result', ['--name', 'oc', '--json']), 'result 1');
  assert.equal(r1.lastAssistantText, `done: ${one}`, 'the fake answers "done: <first line of the tool output>"');
  assert.equal(r1.sessionId, a1.sessionId);
  const plain = b.run('result', ['--name', 'oc']);
  assert.equal(plain.code, 0);
  assert.equal(plain.stdout.trim(), `done: ${one}`);

  // What the fake saw: the prompt from stdin, the attached file, the model asked for.
  const first = requestsWith(s, one, { main: true })[0];
  assert.ok(first, 'the fake received the first prompt');
  assert.equal(first.conversation?.model, 'fake-model');
  // OpenCode works in --cwd (it believes $PWD, which the adapter sets; the test process's PWD is elsewhere).
  assert.ok(first.conversation?.system.includes(`Working directory: ${b.project}\n`), "OpenCode worked in the run's cwd");
  assert.ok(JSON.stringify(first.body).includes(attached), 'the --file content reached the model');

  const tools = assertOk(b.run('search', ['--name', 'oc', '--pattern', one, '--role', 'tool']), 'search tool');
  assert.ok(tools.matches.length >= 1, JSON.stringify(tools));
  assert.match(tools.matches[0].snippet, new RegExp(`bash: echo ${one}`));

  const resumed = assertOk(b.run('resume-subagent', ['--name', 'oc', '--prompt', `REPLY:${two}`]), 'resume');
  assert.equal(resumed.mode, 'resume');
  assert.equal(resumed.run, 2);
  assert.equal(resumed.sessionId, a1.sessionId);
  const a2 = await waitDone(b, 'oc', t);
  assert.equal(a2.outcome, 'succeeded', `${a2.error} ${stderrTail(b.registry, 'oc', 2)}`);
  assert.equal(a2.run, 2);
  assert.equal(a2.sessionId, a1.sessionId, 'the resume stays in the same OpenCode session');
  assert.equal(assertOk(b.run('result', ['--name', 'oc', '--json']), 'result 2').lastAssistantText, two);
  assert.equal(assertOk(b.run('result', ['--name', 'oc', '--json', '--run', '1']), 'result run 1').lastAssistantText, `done: ${one}`);

  // The second request carried the first turn: its prompt, tool call and answer.
  const second = requestsWith(s, two, { main: true })[0];
  assert.ok(second, 'the fake received the resume prompt');
  const history = JSON.stringify(second.body);
  assert.ok(history.includes(`TOOL:bash:echo ${one}`), 'the earlier prompt was sent again');
  assert.ok(history.includes(`done: ${one}`), 'the earlier answer was sent again');

  const both = assertOk(b.run('search', ['--name', 'oc', '--pattern', `${one}|${two}`]), 'search both');
  const runs = new Set(both.matches.map((m: any) => m.run));
  assert.deepEqual([...runs].sort(), [1, 2], JSON.stringify(both.matches));
  const roles = new Set(both.matches.map((m: any) => m.role));
  for (const role of ['user', 'assistant', 'tool']) assert.ok(roles.has(role), `a ${role} match: ${JSON.stringify(both.matches)}`);
});

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
  assertOk(
    b.run('start-subagent', ['--name', 'e400', '--cli', 'opencode', '--cwd', b.project, '--prompt', 'ERROR:400:fake bad request for the e2e test']),
    'start e400',
  );
  // OpenCode creates its database on first use with no lock of its own: two first runs at once in a new
  // store race and one exits 1 ("Failed query: CREATE TABLE …"). The second run starts once the first has
  // a session, i.e. once the store exists (opencode.prepare() fixes this when the supervisor calls it).
  // (untilInRun: OpenCode's boot took over 60 s on the loaded shared machine.)
  await untilInRun('the first run to open a session', runDirPath(b.registry, 'e400'), () => recordOf(b.registry, 'e400').sessionId);
  // Reading a file outside the project asks for a permission; headless OpenCode rejects it and exits 0.
  assertOk(
    b.run('start-subagent', ['--name', 'denied', '--cli', 'opencode', '--cwd', b.project, '--prompt', 'TOOL:read:{"filePath":"/etc/hostname"}']),
    'start denied',
  );
  assertOk(
    b.run('start-subagent', ['--name', 'e500', '--cli', 'opencode', '--cwd', b.project, '--prompt', 'ERROR:500:fake upstream failure for the e2e test']),
    'start e500',
  );

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

test('cancel during a long bash tool leaves no process of the run', async (t) => {
  if (!requireCli(t, 'opencode')) return;
  const b = await box(t, 'cancel');
  const marker = uniq('oc-cancel-marker');
  // The marker sits in the command line of the tool's shell: `sleep 300; echo <marker>`.
  const rec = await startLongTool(b, 'opencode', marker, 'bash', 'the bash tool running the marker command');
  const runMarker = `SUBAGENT_RUN_ID=${rec.runId}`;
  assert.ok(pidsWithEnv(runMarker).length >= 2, 'opencode and its tool carry the run marker');

  const t0 = Date.now();
  const c = assertOk(b.run('cancel', ['--name', 'long']), 'cancel');
  t.diagnostic(`cancel returned after ${Date.now() - t0} ms`);
  assert.equal(c.signalSent, 'TERM', "SIGTERM is OpenCode's graceful signal");
  assert.equal(c.previousStatus, 'running');
  assert.deepEqual(c.survivors, []);
  const a = await waitDone(b, 'long', t);
  assert.equal(a.outcome, 'cancelled');
  assert.equal(pidsWithCmdline(marker).length, 0, 'the orphan-prone bash tool is gone');
  assert.equal(pidsWithEnv(runMarker).length, 0, 'no process carries the run marker');

  // The killed session can be resumed: OpenCode keeps what it had written.
  await resumeAfterCancel(b, a.sessionId, 'after-cancel', t);
});

test('status shows the session id while the run is still running', async (t) => {
  if (!requireCli(t, 'opencode')) return;
  const b = await box(t, 'busy');
  const marker = uniq('oc-busy-marker');
  const started = assertOk(
    b.run('start-subagent', ['--name', 'busy', '--cli', 'opencode', '--cwd', b.project, '--prompt', `TOOL:bash:sleep 300; echo ${marker}`]),
    'start',
  );
  assert.equal(started.sessionId, null, 'OpenCode chooses its session id');
  const dir = runDirPath(b.registry, 'busy');
  await untilInRun('the bash tool running the marker command', dir, () => pidsWithCmdline(marker).length > 0);
  // Polled on the record (status is spawned, and a spawnSync would starve the fake in this process);
  // then status itself must show it.
  await untilInRun('the record to hold the session id', dir, () => readJson(join(dir, 'record.json')).sessionId);
  const running = assertOk(await b.runAsync('status', ['--name', 'busy']), 'status').agents[0];
  assert.equal(running.status, 'running', JSON.stringify(running));
  const reported = readFileSync(join(dir, 'events.log'), 'utf8').match(/"sessionID":"([^"]+)"/)?.[1];
  assert.match(reported ?? '', /^ses_[A-Za-z0-9]+$/);
  assert.equal(running.sessionId, reported, "the sessionID of OpenCode's events");

  assertOk(await b.runAsync('cancel', ['--name', 'busy']), 'cancel');
  const a = await waitDone(b, 'busy', t);
  assert.equal(a.outcome, 'cancelled');
  assert.equal(a.sessionId, reported);
  const runMarker = `SUBAGENT_RUN_ID=${readJson(join(dir, 'record.json')).runId}`;
  await until('no process of the run', () => pidsWithEnv(runMarker).length === 0 && pidsWithCmdline(marker).length === 0);
});

test('a sub-agent (task tool) is listed in children, and result --child reads its answer from the OpenCode store', async (t) => {
  if (!requireCli(t, 'opencode')) return;
  const b = await box(t, 'child');
  const answer = uniq('child-answer');
  assertOk(b.run('start-subagent', ['--name', 'parent', '--cli', 'opencode', '--cwd', b.project, '--prompt', `TASK:look around:REPLY:${answer}`]), 'start');
  const a = await waitDone(b, 'parent', t);
  assert.equal(a.outcome, 'succeeded', `${a.error} ${stderrTail(b.registry, 'parent')}`);
  assert.equal(a.children.length, 1, JSON.stringify(a.children));
  const child = a.children[0];
  assert.match(child.id, /^ses_/);
  assert.notEqual(child.id, a.sessionId);
  assert.equal(child.cli, 'opencode');
  assert.equal(child.description, 'look around');
  assert.equal(child.status, 'done');
  assert.equal(child.statusSource, 'stream');
  assert.ok(child.startedAt && child.finishedAt);
  assert.equal(assertOk(b.run('result', ['--name', 'parent', '--json']), 'result').lastAssistantText, `done: ${answer}`);

  const read = b.run('result', ['--name', 'parent', '--child', child.id, '--json']);
  const r = assertOk(read, 'result --child');
  assert.equal(r.lastAssistantText, answer);
  assert.equal(r.source, 'transcript', "read from the run's own SQLite store");
  assert.equal(read.stderr, '', "nothing on stderr: node:sqlite's experimental warning is kept off it");
  // search --child reads the child's own transcript: its prompt is there, the parent's is not.
  const sc = assertOk(b.run('search', ['--name', 'parent', '--child', child.id, '--pattern', 'REPLY:']), 'search --child');
  assert.ok(sc.matches.length >= 1 && sc.matches.every((m: any) => m.role === 'user'), JSON.stringify(sc));
  assert.ok(!sc.matches.some((m: any) => m.snippet.includes('TASK:')), JSON.stringify(sc));
  // A session that is in the store but is not a child of this run (the run's own), and a made-up id.
  for (const foreign of [a.sessionId, 'ses_0000000000000000000000000']) {
    for (const args of [
      ['result', '--json'],
      ['search', '--pattern', '.'],
    ]) {
      const e = b.run(args[0] as 'result' | 'search', ['--name', 'parent', '--child', foreign, ...args.slice(1)]);
      assert.equal(e.code, 1, e.stdout);
      assert.equal(e.json?.code, 'E_CHILD_NOT_FOUND', e.stdout);
      assert.deepEqual(e.json.details.children, [child.id]);
    }
  }
});

test('a 300 KB prompt reaches the model byte for byte (stdin, never argv)', async (t) => {
  if (!requireCli(t, 'opencode')) return;
  const b = await box(t, 'big');
  const tag = uniq('big-ok');
  const lines = bigPromptLines(tag);
  const prompt = `${lines}\n`;
  await startBig(b, ['--cli', 'opencode', '--cwd', b.project], prompt, t);
  assert.equal(assertOk(b.run('result', ['--name', 'big', '--json']), 'result').lastAssistantText, tag);
  const req = requestsWith(await server(), tag, { main: true })[0];
  assert.ok(req, 'the fake received the prompt');
  const got = req.conversation!.lastUserText;
  assert.equal(Buffer.byteLength(got), Buffer.byteLength(prompt), 'same size');
  assert.ok(got === prompt, 'same bytes');
});
