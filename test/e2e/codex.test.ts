// Codex's own end-to-end tests, beside its row of the contract suite (test/e2e/contract/codex.ts, run by
// test/e2e/contract-*.test.ts): through the real executables (bin/*) and the REAL pinned codex (test/.clis) against the
// fake Responses API server (test/fakes/openai-responses.ts). Each test has its own fake, registry,
// HOME and CODEX_HOME. Skipped when the codex binary is not installed (bash test/clis/install.sh), except
// under CI, where that fails.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stderrTail } from '../support/registry.js';
import { fakeWorld, type World } from '../fakes/world.js';
import { readRecord, runDir } from '../../lib/registry/store.js';
import { codex } from '../../lib/agents/codex/index.js';
import { inputMessages, tag, UUID } from './contract/codex.js';

/** start → status --wait-terminal; returns the terminal record. */
async function startAndWait(w: World, name: string, prompt: string, extra: string[] = []): Promise<any> {
  assert.equal((await w.start(name, prompt, extra)).cli, 'codex');
  return w.wait(name);
}

test('codex: start → wait → result; resume continues the same thread; search finds both runs', async (t) => {
  const w = await fakeWorld(t, 'codex');
  if (!w) return;
  const a = tag();
  const one = await startAndWait(w, 'pair', `REPLY:first answer alpha-${a}`);
  assert.equal(one.outcome, 'succeeded', JSON.stringify(one) + stderrTail(w.box.registry, 'pair'));
  assert.equal(one.exitCode, 0);
  assert.match(one.sessionId, UUID, 'the thread id from thread.started');
  assert.ok(one.usage && one.usage.totalTokens > 0 && one.usage.costUsd === null, JSON.stringify(one.usage));
  assert.equal((await w.run('result', ['--name', 'pair'])).stdout, `first answer alpha-${a}\n`);

  const r = await w.run('resume-subagent', ['--name', 'pair', '--prompt', `REPLY:second answer beta-${a}`]);
  assert.equal(r.code, 0, r.stdout);
  assert.equal(r.json.mode, 'resume');
  assert.equal(r.json.run, 2);
  assert.equal(r.json.sessionId, one.sessionId);
  const two = await w.wait('pair');
  assert.equal(two.outcome, 'succeeded', JSON.stringify(two) + stderrTail(w.box.registry, 'pair', 2));
  assert.equal(two.run, 2);
  assert.equal(two.sessionId, one.sessionId, 'same thread');

  // The second run's request carried the first turn: codex resumed the thread, not a new one.
  const last = w.srv.modelRequests().at(-1)!;
  const msgs = inputMessages(last.body);
  assert.ok(
    msgs.some((m) => m.role === 'user' && m.text === `REPLY:first answer alpha-${a}`),
    'first prompt resent',
  );
  assert.ok(
    msgs.some((m) => m.role === 'assistant' && m.text === `first answer alpha-${a}`),
    'first answer resent',
  );
  assert.ok(
    msgs.some((m) => m.role === 'user' && m.text === `REPLY:second answer beta-${a}`),
    'second prompt',
  );

  const res = await w.run('result', ['--name', 'pair', '--json']);
  assert.equal(res.json.lastAssistantText, `second answer beta-${a}`);
  assert.equal(res.json.sessionId, one.sessionId);

  const found = await w.run('search', ['--name', 'pair', '--pattern', `(alpha|beta)-${a}`, '--role', 'assistant']);
  assert.equal(found.code, 0, found.stdout);
  assert.deepEqual(
    found.json.matches.map((m: any) => [m.run, m.role]),
    [
      [1, 'assistant'],
      [2, 'assistant'],
    ],
  );

  // Usage: codex reports the thread's cumulative total (state.threadUsage); the supervisor passes the
  // thread's usage before run 2 (codex.open({ threadUsageBefore })), so each run records its share.
  const thread = (run: number) => {
    const p = codex.open();
    for (const l of readFileSync(join(runDir(w.box.registry, 'pair', run), 'events.log'), 'utf8').split('\n')) p.line(l);
    return p.state.threadUsage!;
  };
  const [t1, t2] = [thread(1), thread(2)];
  const rec1 = readRecord(runDir(w.box.registry, 'pair', 1));
  const rec2 = readRecord(runDir(w.box.registry, 'pair', 2));
  const counts = ['inputTokens', 'outputTokens', 'cacheReadTokens', 'cacheWriteTokens', 'reasoningTokens', 'totalTokens'] as const;
  const pick = (u: Record<string, unknown>) => Object.fromEntries(counts.map((k) => [k, u[k]]));
  assert.deepEqual(pick({ ...rec1.usage }), pick({ ...t1 }), "run 1: the thread total is the run's");
  assert.ok(t2.totalTokens > t1.totalTokens);
  assert.ok(t2.inputTokens > t1.inputTokens, 'run 2 re-sends the thread: its input grows');
  assert.deepEqual(pick({ ...rec2.usage }), Object.fromEntries(counts.map((k) => [k, t2[k] - t1[k]])), 'run 2: its own share (cumulative − run 1)');
  assert.deepEqual(pick(two.usage), pick({ ...rec2.usage }), "status shows run 2's share as its usage");
  // The name's total in status: run 1 + run 2 = the thread's total.
  assert.deepEqual(pick(two.usageTotal), pick({ ...t2 }), 'status usageTotal = the thread total');
  assert.equal(two.usageTotal.costUsd, null);
});

test('codex: --model, --variant and -- args (also a multi-value -i FILE) reach codex, also on resume; --agent and --file are refused', async (t) => {
  const w = await fakeWorld(t, 'codex');
  if (!w) return;
  // A 1×1 PNG: `-i` takes any number of files, so it must not swallow `-` or `resume <id> -`.
  const png = join(w.box.dir, 'shot.png');
  writeFileSync(png, Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC', 'base64'));
  const s = await w.run('start-subagent', [
    '--name',
    'flags',
    '--cli',
    'codex',
    '--model',
    'fake-model-b',
    '--variant',
    'low',
    '--prompt',
    'REPLY:flags-one',
    '--',
    '-c',
    'model_reasoning_summary="detailed"',
    '-i',
    png,
  ]);
  assert.equal(s.code, 0, s.stdout);
  const one = await w.wait('flags');
  assert.equal(one.outcome, 'succeeded', JSON.stringify(one) + stderrTail(w.box.registry, 'flags'));
  const r = await w.run('resume-subagent', ['--name', 'flags', '--prompt', 'REPLY:flags-two']);
  assert.equal(r.code, 0, r.stdout);
  const two = await w.wait('flags');
  assert.equal(two.outcome, 'succeeded', JSON.stringify(two) + stderrTail(w.box.registry, 'flags', 2));
  assert.deepEqual(two.extraArgs, ['-c', 'model_reasoning_summary="detailed"', '-i', png]);
  const bodies = w.srv.modelRequests().map((q) => q.body as { model?: string; reasoning?: { effort?: string; summary?: string } });
  assert.equal(bodies.length, 2);
  for (const b of bodies) {
    assert.equal(b.model, 'fake-model-b');
    assert.deepEqual(b.reasoning, { effort: 'low', summary: 'detailed' });
  }
  const images = bodies.map((b) => JSON.stringify(b).match(/"input_image"/g)?.length ?? 0);
  assert.deepEqual(images, [1, 2], 'run 1 sends the image; the resume re-sends it with the history and attaches it again');
  // The resume continued the thread (a swallowed `resume <id> -` would have started a new one).
  assert.ok(
    inputMessages(bodies[1]).some((m) => m.role === 'assistant' && m.text === 'flags-one'),
    'the first answer is in the resumed request',
  );
  const thread = (run: number) => readFileSync(join(runDir(w.box.registry, 'flags', run), 'events.log'), 'utf8').match(/"thread_id":"([^"]+)"/)?.[1];
  assert.equal(thread(2), thread(1), 'codex reported the same thread on resume');
  for (const extra of [
    ['--agent', 'plan'],
    ['--file', join(w.box.dir, 'x.txt')],
  ]) {
    writeFileSync(join(w.box.dir, 'x.txt'), 'x');
    const refused = await w.run('start-subagent', ['--name', `no${extra[0]}`, '--cli', 'codex', '--prompt', 'REPLY:no', ...extra]);
    assert.equal(refused.code, 1, refused.stdout);
    assert.equal(refused.json.code, 'E_ARG_UNSUPPORTED', refused.stdout);
  }
});

test('codex: a shell tool call is in the transcript as role tool', async (t) => {
  const w = await fakeWorld(t, 'codex');
  if (!w) return;
  const a = tag();
  const done = await startAndWait(w, 'tool', `TOOL:Bash:echo tool-out-${a}`);
  assert.equal(done.outcome, 'succeeded', JSON.stringify(done) + stderrTail(w.box.registry, 'tool'));
  assert.equal(done.toolUses, 1);
  assert.equal((await w.run('result', ['--name', 'tool'])).stdout, `done: tool-out-${a}\n`);
  const found = await w.run('search', ['--name', 'tool', '--pattern', `Bash: echo tool-out-${a}`, '--role', 'tool']);
  assert.equal(found.code, 0, found.stdout);
  assert.equal(found.json.matches.length, 1, found.stdout);
  assert.equal(found.json.matches[0].role, 'tool');
  // The tool's output is searchable too.
  const out = await w.run('search', ['--name', 'tool', '--pattern', `\\ntool-out-${a}$`, '--role', 'tool']);
  assert.equal(out.json.matches.length, 1, out.stdout);
});
