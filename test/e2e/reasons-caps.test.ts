// test-order: first — among the three longest files (real agent CLIs; reasons-caps): started before all others (scripts/test.sh).
// Why a run stopped and spend caps (issue 16, points 3 and 4) through the real executables and the REAL
// pinned CLIs against the fake model servers: each failure reason the CLIs report (401, 429 / a usage
// limit, 500, max turns, a budget, permission denied), caps held by the CLI itself (Claude's
// --max-budget-usd and --max-turns) and by the supervisor (Claude's tokens, OpenCode's cost, Copilot's
// turns and tokens, Codex's tokens and turns from its rollout, Gemini's turns, and its tokens from its chat), each stop leaving no process of the run, and the caps a CLI
// cannot be held to refused before anything is recorded. The same ends replayed from captured streams: test/cli/reasons.test.ts, test/cli/caps.test.ts.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fakeWorld, uniq, type World } from '../fakes/world.js';
import type { Action, FakeRequest } from '../fakes/script.js';
import { expectError } from '../support/shell.js';
import { pidsWithCmdline, pidsWithEnv } from '../support/procs.js';
import { recordOf, runDirOf, stderrTail } from '../support/registry.js';
import { until } from '../support/wait.js';

/** Starts each case, waits for all, and checks each ended failed with its reason. */
async function expectReasons(w: World, cases: Array<{ name: string; prompt: string; extra?: string[]; reason: string; error: RegExp }>, serial = false) {
  const ended = async (c: (typeof cases)[number]) => {
    await w.start(c.name, c.prompt, c.extra);
    return w.wait(c.name);
  };
  const got = serial ? [] : await Promise.all(cases.map(ended));
  if (serial) for (const c of cases) got.push(await ended(c));
  cases.forEach((c, i) => {
    const a = got[i];
    assert.equal(a.outcome, 'failed', `${c.name}: ${a.error} ${stderrTail(w.box.registry, c.name)}`);
    assert.equal(a.reason, c.reason, `${c.name}: ${a.error}`);
    assert.match(a.error, c.error, c.name);
  });
  return got;
}

/** No process of the run is left: none with its marker, none running the command that holds `needle`. */
async function nothingLeft(w: World, name: string, needle?: string): Promise<void> {
  const runId = recordOf(w.box.registry, name).runId;
  await until(
    `no process of ${name} left`,
    () => pidsWithEnv(`SUBAGENT_RUN_ID=${runId}`).length === 0 && (!needle || pidsWithCmdline(needle).length === 0),
    15_000,
  );
}

/** A model that calls one shell tool, then never answers the next request (a request in flight, until the fake closes). */
function toolThenHold(marker: string, tool: { name: string; input: Record<string, unknown> }): (req: FakeRequest) => Action | undefined {
  return (req) => {
    const c = req.conversation;
    if (!c?.lastUserText.includes(marker) || c.toolNames.length === 0) return undefined;
    return c.toolOutputs.length === 0 ? { type: 'tool', calls: [tool] } : { type: 'hang' };
  };
}

test('claude: 401, 429 (a usage limit), 500, max turns, permission denied — each failed with its reason', async (t) => {
  const w = await fakeWorld(t, 'claude');
  if (!w) return;
  const got = await expectReasons(w, [
    { name: 'auth', prompt: 'ERROR:401', reason: 'auth', error: /Failed to authenticate/ },
    { name: 'limit', prompt: 'ERROR:429:You have reached your usage limit', reason: 'rate-limit', error: /usage limit/ },
    { name: 'server', prompt: 'ERROR:500', reason: 'api-error', error: /API Error: 500/ },
    // --max-turns is Claude's own limit: it stops itself and says so.
    { name: 'turns', prompt: 'TOOL:Bash:echo one', extra: ['--max-turns', '1'], reason: 'max-turns', error: /Reached maximum number of turns \(1\)/ },
    // Default permissions, headless: a write is refused, exit 0, listed in permission_denials.
    {
      name: 'denied',
      prompt: `TOOL:Bash:touch ${uniq('denied')}.txt && echo made`,
      reason: 'permission-denied',
      error: /refused permission for 1 tool call: Bash: touch/,
    },
  ]);
  assert.deepEqual(
    got.map((a) => a.exitCode),
    [1, 1, 1, 1, 0],
  );
  assert.deepEqual(got[3].caps, { maxCostUsd: null, maxTokens: null, maxTurns: 1, maxTimeSec: null, maxMemoryBytes: null });
  const denied = await w.run('result', ['--name', 'denied', '--json']);
  assert.equal(denied.json.reason, 'permission-denied');
  assert.match(denied.json.lastAssistantText, /^done: /, 'the answer the model gave is kept');
});

test('claude: --max-cost is its --max-budget-usd (it stops itself); --max-tokens is held by the supervisor (stopped mid-tool, nothing left)', async (t) => {
  const w = await fakeWorld(t, 'claude');
  if (!w) return;
  await w.start('cost', 'TOOL:Bash:echo one', ['--max-cost', '0.01']);
  const marker = uniq('capped-sleep');
  await w.start('tokens', `TOOL:Bash:sleep 120; echo ${marker}`, ['--max-tokens', '1000']);
  const cost = await w.wait('cost');
  assert.equal(cost.outcome, 'failed', cost.error);
  assert.equal(cost.reason, 'max-cost');
  assert.match(cost.error, /error_max_budget_usd.*Reached maximum budget \(\$0\.01\)/);
  assert.ok(cost.usage.costUsd > 0.01, 'Claude checks its budget after a turn: the run ends past it');
  assert.equal(cost.cancelRequested, false, 'the CLI stopped itself');
  const asked = w.srv.modelRequests().filter((r) => r.conversation?.lastUserText === 'TOOL:Bash:echo one');
  assert.equal(asked.length, 1, 'past its budget after the first turn, Claude asked the model nothing more');

  const tokens = await w.wait('tokens');
  assert.equal(tokens.outcome, 'failed', tokens.error);
  assert.equal(tokens.reason, 'max-tokens');
  assert.match(tokens.error, /^stopped at --max-tokens 1000: the run had used \d+ tokens$/);
  assert.ok(tokens.usage.totalTokens > 1000, JSON.stringify(tokens.usage));
  assert.equal(tokens.cancelRequested, true);
  await nothingLeft(w, 'tokens', marker);
  const r = await w.run('result', ['--name', 'tokens', '--json']);
  assert.equal(r.json.reason, 'max-tokens');
});

test('codex: 401, 429, 500 each failed with its reason; the caps it cannot be held to are refused before anything is recorded', async (t) => {
  const w = await fakeWorld(t, 'codex');
  if (!w) return;
  await expectReasons(w, [
    { name: 'auth', prompt: 'ERROR:401', reason: 'auth', error: /401 Unauthorized/ },
    { name: 'limit', prompt: 'ERROR:429:You exceeded your current quota', reason: 'rate-limit', error: /429 Too Many Requests/ },
    { name: 'server', prompt: 'ERROR:500', reason: 'api-error', error: /high demand/ },
  ]);
  const e = expectError(
    w.box,
    'start-subagent',
    ['--name', 'capped', '--cli', 'codex', '--cwd', w.cwd, '--prompt', 'REPLY:x', '--max-cost', '1'],
    'E_ARG_UNSUPPORTED',
  );
  assert.equal(e.details.flag, '--max-cost');
});

test('codex: --max-turns held by the supervisor from its rollout (a token_usage_record as each model response ends) — stopped as its second response ends, during its tool, nothing left; a resume is held to its own turns', async (t) => {
  const marker = uniq('cx-turns');
  const sleeper = uniq('cx-sleep');
  const shell = (cmd: string) => ({ type: 'tool' as const, calls: [{ name: 'exec_command', input: { cmd, yield_time_ms: 10000 } }] });
  const w = await fakeWorld(t, 'codex', {
    handler: (req) => {
      const c = req.conversation;
      if (!c?.lastUserText.includes(marker)) return undefined;
      const n = c.toolOutputs.length;
      if (n === 0) return shell(`echo ${marker}`);
      if (n === 1) return shell(`sleep 120; echo ${sleeper}`);
      return { type: 'text', text: 'done' };
    },
  });
  if (!w) return;
  await w.start('turns', `do it ${marker}`, ['--max-turns', '1']);
  const a = await w.wait('turns');
  assert.equal(a.outcome, 'failed', `${a.error} ${stderrTail(w.box.registry, 'turns')}`);
  assert.equal(a.reason, 'max-turns');
  assert.equal(a.error, 'stopped at --max-turns 1: the run began turn 2');
  t.diagnostic(`--max-turns: stopped ${a.durationMs} ms after the run started`);
  assert.equal(a.cancelRequested, true);
  assert.deepEqual(a.caps, { maxCostUsd: null, maxTokens: null, maxTurns: 1, maxTimeSec: null, maxMemoryBytes: null });
  const asked = w.srv.modelRequests().filter((r) => r.conversation?.lastUserText.includes(marker));
  assert.equal(asked.length, 2, 'stopped during the tool of its second response: the model was not asked a third time');
  await nothingLeft(w, 'turns', sleeper);

  // Within its cap the same run is not stopped by it.
  await w.start('under', `TOOL:Bash:echo ${uniq('cx-free')}`, ['--max-turns', '2']);
  const u = await w.wait('under');
  assert.equal(u.outcome, 'succeeded', u.error);

  // A resume appends to the thread's rollout: run 1's two turns are not run 2's.
  await w.start('own', 'TOOL:Bash:echo first');
  const one = await w.wait('own');
  assert.equal(one.outcome, 'succeeded', one.error);
  const resumed = await w.run('resume-subagent', ['--name', 'own', '--prompt', 'REPLY:second', '--max-turns', '1']);
  assert.equal(resumed.code, 0, resumed.stdout);
  const two = await w.wait('own');
  assert.equal(two.run, 2);
  assert.equal(two.outcome, 'succeeded', `${two.error}: run 2 has one turn, the thread three`);
});

/**
 * A run capped at --max-tokens 1000 whose first model response (~10 000 tokens: the CLI's instructions and
 * tools) asks for a long command: stopped as that response ends, the model asked once, its usage what the
 * fake reported. Its status entry, and the marker of its command.
 */
async function stoppedAtFirstResponse(t: TestContext, w: World, tag: string): Promise<{ k: any; sleeper: string }> {
  const sleeper = uniq(tag);
  await w.start('tokens', `TOOL:Bash:sleep 120; echo ${sleeper}`, ['--max-tokens', '1000']);
  const k = await w.wait('tokens');
  assert.equal(k.outcome, 'failed', `${k.error} ${stderrTail(w.box.registry, 'tokens')}`);
  assert.equal(k.reason, 'max-tokens');
  t.diagnostic(`--max-tokens: stopped ${k.durationMs} ms after the run started`);
  const asked = w.srv.modelRequests().filter((r) => r.conversation?.lastUserText.includes(sleeper));
  assert.equal(asked.length, 1, 'stopped during the tool of its first response: the model was asked once');
  const reported = asked[0]!.reportedUsage!;
  assert.equal(k.usage.totalTokens, reported.promptTokens + reported.completionTokens, JSON.stringify(k.usage));
  assert.equal(k.error, `stopped at --max-tokens 1000: the run had used ${k.usage.totalTokens} tokens`);
  return { k, sleeper };
}

test('codex: --max-tokens held by the supervisor from its rollout (the stream has usage only at its end) — stopped as its first response ends, before its long tool is done, nothing left; a resume is held to its own tokens', async (t) => {
  const w = await fakeWorld(t, 'codex');
  if (!w) return;
  const { k, sleeper } = await stoppedAtFirstResponse(t, w, 'cx-tokens');
  // The record is written as the response ends, before Codex starts the command: the stop may come before the stream shows it.
  assert.ok(k.toolUses <= 1, String(k.toolUses));
  assert.equal(k.cancelRequested, true);
  assert.deepEqual(k.caps, { maxCostUsd: null, maxTokens: 1000, maxTurns: null, maxTimeSec: null, maxMemoryBytes: null });
  await nothingLeft(w, 'tokens', sleeper);

  // Codex counts a thread's tokens over all its runs; the cap holds this run's only. Run 1: two
  // responses (a tool call, then the answer); run 2: one, of about the size of each of run 1's.
  await w.start('own', 'TOOL:Bash:echo first');
  const one = await w.wait('own');
  assert.equal(one.outcome, 'succeeded', one.error);
  const cap = one.usage.totalTokens;
  const resumed = await w.run('resume-subagent', ['--name', 'own', '--prompt', 'REPLY:second', '--max-tokens', String(cap)]);
  assert.equal(resumed.code, 0, resumed.stdout);
  const two = await w.wait('own');
  assert.equal(two.run, 2);
  assert.equal(two.outcome, 'succeeded', `${two.error}: run 2 used ${JSON.stringify(two.usage)}, the thread ${cap} + that`);
  const last = w.srv.modelRequests().filter((r) => r.conversation?.lastUserText.includes('REPLY:second'));
  assert.equal(last.length, 1);
  const own = last[0]!.reportedUsage!;
  assert.equal(two.usage.totalTokens, own.promptTokens + own.completionTokens, "run 2's usage is its own response's (the stream's turn.completed, less run 1)");
  assert.ok(two.usage.totalTokens <= cap, `run 2 alone (${two.usage.totalTokens}) is within the cap (${cap})`);
  const thread = JSON.parse(
    readFileSync(join(runDirOf(w.box.registry, 'own', 2), 'events.log'), 'utf8')
      .split('\n')
      .find((l) => l.includes('"turn.completed"'))!,
  ).usage;
  assert.ok(thread.input_tokens + thread.output_tokens > cap, 'what Codex counts for the thread (run 1 and run 2) is over it');
});

test('gemini: --max-turns held by the supervisor from the turns its stream shows — stopped as its second begins, during its tool, nothing left; its own model.maxSessionTurns ends a run with max-turns', async (t) => {
  const marker = uniq('gm-turns');
  const sleeper = uniq('gm-sleep');
  const w = await fakeWorld(t, 'gemini', {
    handler: (req) => {
      const c = req.conversation;
      if (!c?.lastUserText.includes(marker)) return undefined;
      const n = c.toolOutputs.length;
      if (n === 0) return { type: 'tool', calls: [{ name: 'run_shell_command', input: { command: `echo ${marker}`, description: 'say the marker' } }] };
      if (n === 1) return { type: 'tool', calls: [{ name: 'run_shell_command', input: { command: `sleep 120; echo ${sleeper}`, description: 'wait' } }] };
      return { type: 'text', text: 'done' };
    },
  });
  if (!w) return;
  await w.start('turns', `do it ${marker}`, ['--max-turns', '1']);
  const a = await w.wait('turns');
  assert.equal(a.outcome, 'failed', `${a.error} ${stderrTail(w.box.registry, 'turns')}`);
  assert.equal(a.reason, 'max-turns');
  assert.equal(a.error, 'stopped at --max-turns 1: the run began turn 2');
  assert.equal(a.toolUses, 2, "turn 1's tool, and turn 2's, which the stop ended");
  assert.equal(a.cancelRequested, true);
  assert.deepEqual(a.caps, { maxCostUsd: null, maxTokens: null, maxTurns: 1, maxTimeSec: null, maxMemoryBytes: null });
  const asked = w.srv.modelRequests().filter((r) => r.conversation?.lastUserText.includes(marker));
  assert.equal(asked.length, 2, 'the model was asked for turn 2, not for turn 3');
  await nothingLeft(w, 'turns', sleeper);

  // Within its cap the same run is not stopped by it.
  const free = uniq('gm-free');
  await w.start('under', `TOOL:Bash:echo ${free}`, ['--max-turns', '2']);
  const u = await w.wait('under');
  assert.equal(u.outcome, 'succeeded', u.error);

  // Its own limit, a setting (no flag): the CLI stops itself before the turn past it; the verdict says max-turns.
  const settings = w.files.find((f) => f.endsWith('settings.json'))!;
  const s = JSON.parse(readFileSync(settings, 'utf8'));
  s.model = { ...s.model, maxSessionTurns: 1 };
  writeFileSync(settings, JSON.stringify(s));
  await w.start('own', 'TOOL:Bash:echo own limit');
  const o = await w.wait('own');
  assert.equal(o.outcome, 'failed', o.error);
  assert.equal(o.reason, 'max-turns');
  assert.equal(o.exitCode, 53);
  assert.match(o.error, /Reached max session turns/);
  assert.equal(o.cancelRequested, false, 'the CLI stopped itself');

  const e = expectError(
    w.box,
    'start-subagent',
    ['--name', 'capped', '--cli', 'gemini', '--cwd', w.cwd, '--prompt', 'REPLY:x', '--max-cost', '1'],
    'E_ARG_UNSUPPORTED',
  );
  assert.equal(e.details.flag, '--max-cost');
});

test("gemini: --max-tokens held by the supervisor from its session's chat (the stream has tokens only in its result) — stopped as its first response ends, before its long tool is done, nothing left; a resume is held to its own tokens", async (t) => {
  const w = await fakeWorld(t, 'gemini');
  if (!w) return;
  const { k, sleeper } = await stoppedAtFirstResponse(t, w, 'gm-tokens');
  assert.equal(k.cancelRequested, true);
  assert.deepEqual(k.caps, { maxCostUsd: null, maxTokens: 1000, maxTurns: null, maxTimeSec: null, maxMemoryBytes: null });
  await nothingLeft(w, 'tokens', sleeper);

  // A run within its cap ends with the usage its stream's result reports (the store's is only meanwhile).
  await w.start('own', 'TOOL:Bash:echo first', ['--max-tokens', '100000']);
  const one = await w.wait('own');
  assert.equal(one.outcome, 'succeeded', one.error);
  const result = JSON.parse(
    readFileSync(join(runDirOf(w.box.registry, 'own', 1), 'events.log'), 'utf8')
      .split('\n')
      .find((l) => l.includes('"type":"result"'))!,
  ).stats;
  assert.equal(one.usage.totalTokens, result.total_tokens, 'the result stats');
  // A resume appends to the session's chat: the cap holds this run's tokens only.
  const cap = one.usage.totalTokens;
  const resumed = await w.run('resume-subagent', ['--name', 'own', '--prompt', 'REPLY:second', '--max-tokens', String(cap)]);
  assert.equal(resumed.code, 0, resumed.stdout);
  const two = await w.wait('own');
  assert.equal(two.run, 2);
  assert.equal(two.outcome, 'succeeded', `${two.error}: run 2 used ${JSON.stringify(two.usage)}, the session ${cap} + that`);
  assert.ok(two.usage.totalTokens <= cap, `run 2 alone (${two.usage.totalTokens}) is within the cap (${cap})`);
});

test('opencode: 401, 429, an auto-rejected permission — each failed with its reason', async (t) => {
  const w = await fakeWorld(t, 'opencode');
  if (!w) return;
  // One at a time: an OpenCode run costs ~600 MB.
  await expectReasons(
    w,
    [
      { name: 'auth', prompt: 'ERROR:401', reason: 'auth', error: /APIError: .*\(HTTP 401\)/ },
      { name: 'limit', prompt: 'ERROR:429:You exceeded your current quota', reason: 'rate-limit', error: /\(HTTP 429\)/ },
      { name: 'denied', prompt: 'TOOL:read:{"filePath":"/etc/hostname"}', reason: 'permission-denied', error: /auto-rejected \(read: \/etc\/hostname\)/ },
    ],
    true,
  );
});

test('opencode: --max-cost held by the supervisor from the cost of each step — stopped before its next step ends, nothing left', async (t) => {
  const marker = uniq('oc-cost');
  const w = await fakeWorld(t, 'opencode', {
    handler: toolThenHold(marker, { name: 'bash', input: { command: `echo ${marker}`, description: 'say the marker' } }),
  });
  if (!w) return;
  // A price for the fake model ($100 per million tokens in and out): a step of ~7 700 tokens costs ~$0.77.
  const config = w.files[0]!;
  const c = JSON.parse(readFileSync(config, 'utf8'));
  c.provider.fake.models['fake-model'].cost = { input: 100, output: 100 };
  writeFileSync(config, JSON.stringify(c));
  await w.start('cost', `do it ${marker}`, ['--max-cost', '0.5']);
  const a = await w.wait('cost');
  assert.equal(a.outcome, 'failed', `${a.error} ${stderrTail(w.box.registry, 'cost')}`);
  assert.equal(a.reason, 'max-cost');
  assert.match(a.error, /^stopped at --max-cost 0\.5: the run had cost \$0\.\d+$/);
  assert.ok(a.usage.costUsd > 0.5, JSON.stringify(a.usage));
  assert.equal(a.toolUses, 1, 'the first step (the tool call) was done');
  assert.equal(a.cancelRequested, true);
  assert.deepEqual(a.caps, { maxCostUsd: 0.5, maxTokens: null, maxTurns: null, maxTimeSec: null, maxMemoryBytes: null });
  // The model never answers the second step: only the stop ended the run, with OpenCode's graceful signal.
  assert.equal(a.signal, 'SIGTERM');
  await nothingLeft(w, 'cost');
});

test('copilot: 401 and 429 each failed with its reason; --max-turns held by the supervisor from its own turns, --max-tokens from its store during a tool; nothing left', async (t) => {
  const marker = uniq('cp-turns');
  const sleeper = uniq('cp-tokens');
  const turns = toolThenHold(marker, { name: 'bash', input: { command: `echo ${marker}`, description: 'say the marker', initial_wait: 600 } });
  const tokens = toolThenHold(sleeper, { name: 'bash', input: { command: `sleep 120; echo ${sleeper}`, description: 'wait', initial_wait: 600 } });
  const w = await fakeWorld(t, 'copilot', { handler: (req) => turns(req) ?? tokens(req) });
  if (!w) return;
  await expectReasons(w, [
    { name: 'auth', prompt: 'ERROR:401', reason: 'auth', error: /Authentication failed with provider/ },
    { name: 'limit', prompt: 'ERROR:429:fake slow down', reason: 'rate-limit', error: /Last error: 429 fake slow down/ },
  ]);
  await w.start('turns', `do it ${marker}`, ['--max-turns', '1']);
  const a = await w.wait('turns');
  assert.equal(a.outcome, 'failed', `${a.error} ${stderrTail(w.box.registry, 'turns')}`);
  assert.equal(a.reason, 'max-turns');
  assert.equal(a.error, 'stopped at --max-turns 1: the run began turn 2');
  assert.equal(a.toolUses, 1, 'its first turn (the tool call) was done');
  assert.equal(a.cancelRequested, true);
  await nothingLeft(w, 'turns');

  // The stream has no tokens: the supervisor reads the usage record Copilot writes to its store while the
  // tool sleeps (the stream says nothing then), and stops the run in the middle of the tool.
  await w.start('tokens', `do it ${sleeper}`, ['--max-tokens', '1000']);
  const k = await w.wait('tokens');
  assert.equal(k.outcome, 'failed', `${k.error} ${stderrTail(w.box.registry, 'tokens')}`);
  assert.equal(k.reason, 'max-tokens');
  t.diagnostic(`--max-tokens: stopped ${k.durationMs} ms after the run started`);
  const asked = w.srv.modelRequests().filter((r) => r.conversation?.lastUserText.includes(sleeper));
  assert.equal(asked.length, 1, 'stopped during the tool of its first turn: the model was asked once');
  const reported = asked[0]!.reportedUsage!;
  assert.equal(k.usage.totalTokens, reported.promptTokens + reported.completionTokens, JSON.stringify(k.usage));
  assert.equal(k.error, `stopped at --max-tokens 1000: the run had used ${k.usage.totalTokens} tokens`);
  assert.equal(k.toolUses, 1);
  assert.equal(k.cancelRequested, true);
  assert.deepEqual(k.caps, { maxCostUsd: null, maxTokens: 1000, maxTurns: null, maxTimeSec: null, maxMemoryBytes: null });
  await nothingLeft(w, 'tokens', sleeper);

  const e = expectError(
    w.box,
    'start-subagent',
    ['--name', 'cost', '--cli', 'copilot', '--cwd', w.cwd, '--prompt', 'REPLY:x', '--max-cost', '1'],
    'E_ARG_UNSUPPORTED',
  );
  assert.equal(e.details.flag, '--max-cost');
});
