// Every verb through the real Claude Code, at every version pinned in test/clis/pins.json (2.1.197, the
// last release for Node 20, and 2.1.331; `cliVersions('claude')`), against the fake Anthropic server
// (test/fakes/anthropic.ts) on 127.0.0.1. Each test has its own sandbox: registry, HOME and
// CLAUDE_CONFIG_DIR (so its own transcripts), and a marker in the environment of every process it starts,
// by which `after` ends leftovers (by pid).
//
// The fake runs in this process, so nothing that waits on a run may block the event loop: the waiting
// verbs go through runAsync (spawnSync would hold the fake's answers until the wait times out).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startAnthropic } from '../fakes/anthropic.js';
import { tokens, type FakeServer } from '../fakes/script.js';
import { cliVersions, requireCli } from '../fakes/env.js';
import { assertOk } from '../support/run.js';
import { until, untilInRun } from '../support/wait.js';
import { pidsWithCmdline, pidsWithEnv } from '../support/procs.js';
import { recordOf, runDirPath, stderrTail } from '../support/registry.js';
import type { Box } from '../support/box.js';
import { cliBox, fileServer, items, requestsWith, uniq, userTexts, waitDone, grownText, startBig } from '../fakes/world.js';

const server = fileServer(startAnthropic);

/** A sandbox whose every process runs Claude `version` against the fake, in its own HOME and CLAUDE_CONFIG_DIR. */
async function box(t: { after(fn: () => void | Promise<void>): void }, label: string, version: string): Promise<Box> {
  return cliBox(t, 'claude', `e2e-claude-${label}`, (await server()).url, { version, env: { SUBAGENT_CANCEL_GRACE_MS: '3000' } });
}

/** The input tokens the fake reported (message_start usage) for the model requests of a session, from request index `from` to `to`. */
function inputTokensSent(s: FakeServer, sessionId: string, from: number, to: number): number {
  return s
    .modelRequests()
    .filter((r) => r.index >= from && r.index < to && r.headers['x-claude-code-session-id'] === sessionId && r.action?.type !== 'error')
    .reduce((sum, r) => sum + tokens(r.bodyBytes), 0);
}

/** Every release after 2.1.197 runs sub-agents in the background by default (2.1.197 in the foreground). */
const backgroundByDefault = (version: string): boolean => version !== '2.1.197';

for (const version of cliVersions('claude')) {
  const background = backgroundByDefault(version);

  test(`claude ${version}: start → wait → result; resume continues the same session; search sees both runs; the tool call is a transcript tool`, async (t) => {
    if (!requireCli(t, 'claude', version)) return;
    const b = await box(t, 'resume', version);
    const s = await server();
    const one = uniq('alpha');
    const two = uniq('beta');

    const started = assertOk(b.run('start-subagent', ['--name', 'cc', '--cli', 'claude', '--variant', 'low', '--prompt', `TOOL:Bash:echo ${one}`]), 'start');
    assert.equal(started.cli, 'claude');
    assert.equal(started.mode, 'new');
    assert.match(started.sessionId, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/, 'we choose the session id before launch');
    const a1 = await waitDone(b, 'cc');
    assert.equal(a1.outcome, 'succeeded', `${a1.error} ${stderrTail(b.registry, 'cc')}`);
    assert.equal(a1.exitCode, 0);
    assert.equal(a1.error, null);
    assert.equal(a1.sessionId, started.sessionId);
    assert.equal(a1.toolUses, 1);
    assert.ok(
      a1.usage && a1.usage.inputTokens > 0 && a1.usage.outputTokens > 0 && a1.usage.totalTokens >= a1.usage.inputTokens + a1.usage.outputTokens,
      JSON.stringify(a1.usage),
    );
    assert.equal(typeof a1.usage.costUsd, 'number');
    assert.deepEqual(a1.children, []);
    const run1Requests = s.requests.length;
    assert.equal(a1.usage.inputTokens, inputTokensSent(s, started.sessionId, 0, run1Requests), "run 1's input tokens: what the fake reported for its requests");

    const r1 = assertOk(b.run('result', ['--name', 'cc', '--json']), 'result 1');
    assert.equal(r1.lastAssistantText, `done: ${one}`, 'the fake answers "done: <first line of the tool output>"');
    assert.equal(r1.sessionId, started.sessionId);
    const plain = b.run('result', ['--name', 'cc']);
    assert.equal(plain.code, 0);
    assert.equal(plain.stdout.trim(), `done: ${one}`);

    // What the fake saw: the session id we chose, the prompt from stdin, the effort asked for (--variant).
    const first = requestsWith(s, one)[0];
    assert.ok(first, 'the fake received the first prompt');
    assert.equal(first.headers['x-claude-code-session-id'], started.sessionId);
    assert.ok(userTexts(first).includes(`TOOL:Bash:echo ${one}`), 'the prompt arrives as a text block, as given');
    assert.equal((first.body as any).output_config?.effort, 'low', '--variant becomes --effort');

    const tools = assertOk(b.run('search', ['--name', 'cc', '--pattern', one, '--role', 'tool']), 'search tool');
    assert.deepEqual(items(tools), ['1:1'], JSON.stringify(tools));
    assert.match(tools.matches[0].snippet, new RegExp(`Bash: echo ${one}`));

    // Resume: same session id, the fake gets the earlier turns, a --model change reaches the API.
    const resumed = assertOk(b.run('resume-subagent', ['--name', 'cc', '--model', 'claude-opus-4-5', '--prompt', `REPLY:${two}`]), 'resume');
    assert.equal(resumed.mode, 'resume');
    assert.equal(resumed.run, 2);
    assert.equal(resumed.sessionId, started.sessionId);
    const a2 = await waitDone(b, 'cc');
    assert.equal(a2.outcome, 'succeeded', `${a2.error} ${stderrTail(b.registry, 'cc', 2)}`);
    assert.equal(a2.run, 2);
    assert.equal(a2.sessionId, started.sessionId);
    assert.equal(a2.toolUses, 0);
    // Run 2's usage is its own, not the session's (2.1.331's modelUsage and total_cost_usd count run 1 too).
    assert.equal(a2.usage.inputTokens, inputTokensSent(s, started.sessionId, run1Requests, s.requests.length), JSON.stringify(a2.usage));
    assert.ok(
      a2.usage.costUsd > 0 && a2.usage.costUsd < a1.usage.costUsd,
      `run 2 (one request) cost less than run 1 (two): ${a2.usage.costUsd} vs ${a1.usage.costUsd}`,
    );
    const second = requestsWith(s, two)[0];
    assert.ok(second, 'the fake received the second prompt');
    assert.equal(second.headers['x-claude-code-session-id'], started.sessionId, 'the resumed run is the same session');
    assert.equal(second.conversation?.model, 'claude-opus-4-5');
    const history = JSON.stringify((second.body as any).messages);
    assert.ok(history.includes(`TOOL:Bash:echo ${one}`), 'the earlier prompt is in the resumed conversation');
    assert.ok(history.includes(`done: ${one}`), 'the earlier answer is in the resumed conversation');
    assert.ok(history.includes(`"command":"echo ${one}"`), 'the earlier tool call is in the resumed conversation');

    assert.equal(assertOk(b.run('result', ['--name', 'cc', '--json']), 'result 2').lastAssistantText, two);
    assert.equal(assertOk(b.run('result', ['--name', 'cc', '--run', '1', '--json']), 'result run 1').lastAssistantText, `done: ${one}`);

    const both = assertOk(b.run('search', ['--name', 'cc', '--pattern', `${one}|${two}`]), 'search both');
    const runs = new Set(both.matches.map((m: any) => m.run));
    assert.deepEqual([...runs].sort(), [1, 2], JSON.stringify(both));
    const roles = new Set(both.matches.map((m: any) => `${m.run}:${m.role}`));
    for (const want of ['1:user', '1:tool', '1:assistant', '2:user', '2:assistant']) assert.ok(roles.has(want), `${want} in ${[...roles]}`);
    const assistantOnly = assertOk(b.run('search', ['--name', 'cc', '--pattern', two, '--role', 'assistant']), 'search assistant');
    assert.deepEqual(
      assistantOnly.matches.map((m: any) => m.run),
      [2],
    );
  });

  test(`claude ${version}: -- args reach Claude on start and again on resume (--append-system-prompt is in both runs' system prompt)`, async (t) => {
    if (!requireCli(t, 'claude', version)) return;
    const b = await box(t, 'extra', version);
    const s = await server();
    const word = uniq('codeword');
    const one = uniq('gamma');
    const two = uniq('delta');
    // The system prompt is built anew by every claude process, never stored in the session: only a resume
    // that passes the argument again puts the word into run 2's requests.
    const extra = ['--append-system-prompt', `The code word is ${word}.`];
    assertOk(b.run('start-subagent', ['--name', 'args', '--cli', 'claude', '--prompt', `REPLY:${one}`, '--', ...extra]), 'start');
    const a1 = await waitDone(b, 'args');
    assert.equal(a1.outcome, 'succeeded', `${a1.error} ${stderrTail(b.registry, 'args')}`);
    assert.deepEqual(a1.extraArgs, extra);
    assertOk(b.run('resume-subagent', ['--name', 'args', '--prompt', `REPLY:${two}`]), 'resume');
    const a2 = await waitDone(b, 'args');
    assert.equal(a2.outcome, 'succeeded', `${a2.error} ${stderrTail(b.registry, 'args', 2)}`);
    assert.equal(a2.run, 2);
    assert.deepEqual(a2.extraArgs, extra, 'run 2 keeps the arguments of run 1');
    for (const [run, prompt] of [
      [1, one],
      [2, two],
    ] as const) {
      const reqs = requestsWith(s, prompt);
      assert.ok(reqs.length > 0, `the fake received run ${run}'s prompt`);
      assert.ok(
        reqs.some((r) => r.conversation!.system.includes(`The code word is ${word}.`)),
        `run ${run}: the appended system prompt reached the API`,
      );
    }
    assert.equal(assertOk(b.run('result', ['--name', 'args', '--json']), 'result').lastAssistantText, two);
  });

  test(`claude ${version}: an HTTP 500 from the API (no retries) → outcome failed with Claude's error; a bad --agent → failed with its stderr`, async (t) => {
    if (!requireCli(t, 'claude', version)) return;
    const b = await box(t, 'error', version);
    const why = uniq('boom');
    assertOk(b.run('start-subagent', ['--name', 'e500', '--cli', 'claude', '--prompt', `ERROR:500:${why}`]), 'start e500');
    assertOk(b.run('start-subagent', ['--name', 'e400', '--cli', 'claude', '--prompt', `ERROR:400:${why}`]), 'start e400');
    assertOk(b.run('start-subagent', ['--name', 'badagent', '--cli', 'claude', '--agent', 'no-such-agent', '--prompt', 'REPLY:never']), 'start badagent');
    for (const [name, status] of [
      ['e500', 500],
      ['e400', 400],
    ] as const) {
      const a = await waitDone(b, name);
      assert.equal(a.outcome, 'failed', JSON.stringify(a));
      assert.equal(a.exitCode, 1);
      assert.match(a.error, new RegExp(String(status)), a.error);
      assert.match(a.error, new RegExp(why), a.error);
    }
    const bad = await waitDone(b, 'badagent');
    assert.equal(bad.outcome, 'failed');
    assert.equal(bad.exitCode, 1);
    assert.match(bad.error, /before reporting a result/);
    assert.match(bad.error, /no-such-agent' not found/);
    // --file has no Claude equivalent: refused before anything is recorded
    writeFileSync(join(b.dir, 'f.txt'), 'x');
    const refused = b.run('start-subagent', ['--name', 'withfile', '--cli', 'claude', '--file', 'f.txt', '--prompt', 'REPLY:x']);
    assert.equal(refused.code, 1);
    assert.equal(refused.json?.code, 'E_ARG_UNSUPPORTED');
    assert.equal(existsSync(join(b.registry, 'agents', 'withfile')), false);
  });

  test(`claude ${version}: cancel during a long Bash tool leaves no process of the run`, async (t) => {
    if (!requireCli(t, 'claude', version)) return;
    const b = await box(t, 'cancel', version);
    const marker = uniq('sleepmark');
    // Not `sleep 300; …`: 2.1.331's Bash tool refuses a command that starts with `sleep N` (N ≥ 25).
    const started = assertOk(
      b.run('start-subagent', ['--name', 'slow', '--cli', 'claude', '--prompt', `TOOL:Bash:echo started && sleep 300; echo ${marker}`]),
      'start',
    );
    const runId = recordOf(b.registry, 'slow').runId as string;
    // The tool runs: its shell carries the marker on its command line.
    await untilInRun('the Bash tool to be running', runDirPath(b.registry, 'slow'), () => pidsWithCmdline(marker).length > 0);
    // The session id we chose is in status while the run works, and it is the one Claude reports.
    const running = assertOk(await b.runAsync('status', ['--name', 'slow']), 'status').agents[0];
    assert.equal(running.status, 'running');
    assert.equal(running.sessionId, started.sessionId);
    const init = readFileSync(join(b.registry, 'agents', 'slow', '1', 'events.log'), 'utf8').match(/"session_id":"([^"]+)"/)?.[1];
    assert.equal(init, started.sessionId, "the session id of Claude's init event");
    assert.ok(pidsWithEnv(`SUBAGENT_RUN_ID=${runId}`).length >= 2, 'the agent and its tool carry the run marker');
    const c = assertOk(await b.runAsync('cancel', ['--name', 'slow']), 'cancel');
    assert.equal(c.signalSent, 'INT', "SIGINT is Claude's graceful stop");
    assert.equal(c.previousStatus, 'running');
    assert.deepEqual(c.survivors, []);
    const a = await waitDone(b, 'slow');
    assert.equal(a.outcome, 'cancelled');
    // Interrupted during a tool, Claude reports result/error_during_execution and exits on its own, with 0
    // (2.1.331) or 1 (2.1.197, which races: 0 in 2 of 6 runs measured): the result line tells, never the
    // exit status, and the run is cancelled because we cancelled it. Once in a loaded CI run 2.1.331 left
    // after "[Request interrupted by user for tool use]" without any result line: cancelled all the same.
    const events = readFileSync(join(runDirPath(b.registry, 'slow'), 'events.log'), 'utf8');
    const results = [...events.matchAll(/"type":"result","subtype":"([a-z_]+)"/g)].map((m) => m[1]);
    assert.ok(
      results.every((r) => r === 'error_during_execution'),
      `an interrupted run reports only error_during_execution: ${results}`,
    );
    assert.equal(a.reason, 'cancelled');
    if (results.length > 0) assert.ok((a.exitCode === 0 || a.exitCode === 1) && a.signal === null, `${a.exitCode} ${a.signal}`);
    else t.diagnostic(`claude ${version} left without a result line after the interrupt: exit ${a.exitCode}, signal ${a.signal}`);
    await until('no process of the run', () => pidsWithEnv(`SUBAGENT_RUN_ID=${runId}`).length === 0 && pidsWithCmdline(marker).length === 0);
    // The transcript keeps the interrupted call.
    const found = assertOk(b.run('search', ['--name', 'slow', '--pattern', marker, '--role', 'tool']), 'search');
    assert.equal(items(found).length, 1, JSON.stringify(found));
  });

  test(`claude ${version}: a sub-agent shows up in children; result --child returns its answer; search --child finds its words`, async (t) => {
    if (!requireCli(t, 'claude', version)) return;
    const b = await box(t, 'child', version);
    const word = uniq('childword');
    const toolWord = uniq('childtool');
    assertOk(b.run('start-subagent', ['--name', 'par', '--cli', 'claude', '--prompt', `TASK:sub job:TOOL:Bash:echo ${toolWord} && echo ${word}`]), 'start');
    const a = await waitDone(b, 'par');
    assert.equal(a.outcome, 'succeeded', `${a.error} ${stderrTail(b.registry, 'par')}`);
    assert.equal(a.children.length, 1, JSON.stringify(a.children));
    const child = a.children[0];
    assert.match(child.id, /^a[0-9a-f]{16}$/, "the id is Claude's agentId");
    assert.equal(child.cli, 'claude');
    assert.equal(child.description, 'sub job');
    assert.equal(child.status, 'done');
    assert.equal(child.statusSource, 'stream');
    assert.ok(child.startedAt && child.finishedAt);
    assert.equal(a.toolUses, 2, "the Agent call and the child's Bash call");
    // The fake saw the child's requests with its agent id.
    const s = await server();
    assert.ok(s.modelRequests().some((r) => r.headers['x-claude-code-agent-id'] === child.id));

    const r = assertOk(b.run('result', ['--name', 'par', '--child', child.id, '--json']), 'result --child');
    assert.equal(r.child, child.id);
    assert.equal(r.lastAssistantText, `done: ${toolWord}`);
    assert.equal(r.source, 'transcript', 'read from projects/<slug>/<session>/subagents/agent-<id>.jsonl');
    const parent = assertOk(b.run('result', ['--name', 'par', '--json']), 'result');
    if (background) {
      // The Agent call returned at once (async_launched); the child reported in a task_notification, and
      // Claude took one more turn on it: that last turn, after the child reported, is the run's answer.
      assert.equal(parent.lastAssistantText, `child completed: done: ${toolWord}`, 'the turn after the child reported');
      const events = readFileSync(join(runDirPath(b.registry, 'par'), 'events.log'), 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l));
      const results = events.filter((e) => e.type === 'result');
      assert.equal(results.length, 2, 'two result lines in one process');
      assert.equal(results[1].origin?.kind, 'task-notification');
      assert.equal(events.filter((e) => e.type === 'system' && e.subtype === 'init').length, 2, 'two init lines');
      const notified = events.findIndex((e) => e.subtype === 'task_notification' && e.task_id === child.id);
      assert.ok(notified >= 0 && notified < events.indexOf(results[1]), 'the child reported before the last result');
      assert.ok(events.some((e) => e.type === 'user' && e.tool_use_result?.status === 'async_launched'));
    } else {
      assert.equal(parent.lastAssistantText, `done: done: ${toolWord}`, "the run's answer is the parent's, not the child's");
    }
    // The child's own answer from the parent's stream too (its notification or hand-back), without wrapping.
    const fromStream = assertOk(b.run('search', ['--name', 'par', '--pattern', `^done: ${toolWord}$`, '--role', 'assistant']), 'search the stream');
    assert.ok(
      fromStream.matches.some((m: any) => m.childId === child.id),
      JSON.stringify(fromStream),
    );

    const sc = assertOk(b.run('search', ['--name', 'par', '--child', child.id, '--pattern', word]), 'search --child');
    assert.ok(sc.matches.length >= 1, JSON.stringify(sc));
    const unknown = b.run('result', ['--name', 'par', '--child', 'anotherchild', '--json']);
    assert.equal(unknown.json?.code, 'E_CHILD_NOT_FOUND');
  });

  test(`claude ${version}: a 300 KB prompt arrives whole and byte-exact at the model`, async (t) => {
    if (!requireCli(t, 'claude', version)) return;
    const b = await box(t, 'big', version);
    const s = await server();
    const tag = uniq('bigok');
    const prompt = grownText(`REPLY:${tag}\n`, (i) => `line ${i}: ünïcödé ☃ "quotes" \\ back\\slash \t tab -- not-a-flag $HOME \`x\`\n`, 300 * 1024);
    assert.ok(Buffer.byteLength(prompt) > 300 * 1024);
    await startBig(b, ['--cli', 'claude'], prompt);
    const req = requestsWith(s, tag)[0];
    assert.ok(req, 'the fake received the prompt');
    assert.ok(
      userTexts(req).some((x) => x === prompt),
      'one text block is the prompt, byte for byte',
    );
    assert.equal(assertOk(b.run('result', ['--name', 'big', '--json']), 'result').lastAssistantText, tag);
  });

  // Background sub-agents (the default after 2.1.197): what a cancel does to them, and how to turn them off.
  if (background) {
    test(`claude ${version}: cancel while a background child works → the child is recorded cancelled, no process is left`, async (t) => {
      if (!requireCli(t, 'claude', version)) return;
      const b = await box(t, 'bgcancel', version);
      const marker = uniq('bgsleep');
      assertOk(
        b.run('start-subagent', ['--name', 'bgc', '--cli', 'claude', '--prompt', `TASK:bg job:TOOL:Bash:echo started && sleep 300; echo ${marker}`]),
        'start',
      );
      const runId = recordOf(b.registry, 'bgc').runId as string;
      await untilInRun("the child's Bash tool to be running", runDirPath(b.registry, 'bgc'), () => pidsWithCmdline(marker).length > 0);
      const running = await until('the child listed as running', async () => {
        const a = assertOk(await b.runAsync('status', ['--name', 'bgc']), 'status').agents[0];
        return a.children.length === 1 && a.children[0].status === 'running' ? a : null;
      });
      assert.equal(running.status, 'running');
      const childId = running.children[0].id;
      const c = assertOk(await b.runAsync('cancel', ['--name', 'bgc']), 'cancel');
      assert.equal(c.signalSent, 'INT');
      assert.deepEqual(c.survivors, []);
      const a = await waitDone(b, 'bgc');
      assert.equal(a.outcome, 'cancelled');
      // Claude reports nothing for the child it killed and ends with result/success, exit 0: the run's
      // cancel settles the child.
      assert.equal(a.exitCode, 0);
      assert.match(readFileSync(join(runDirPath(b.registry, 'bgc'), 'events.log'), 'utf8'), /"subtype":"success"/);
      assert.deepEqual(
        a.children.map((x: any) => [x.id, x.status, x.statusSource]),
        [[childId, 'cancelled', 'inferred']],
      );
      assert.ok(a.children[0].finishedAt);
      await until('no process of the run', () => pidsWithEnv(`SUBAGENT_RUN_ID=${runId}`).length === 0 && pidsWithCmdline(marker).length === 0);
      const r = assertOk(b.run('result', ['--name', 'bgc', '--child', childId, '--json']), 'result --child');
      assert.equal(r.childStatus, 'cancelled');
    });

    test(`claude ${version}: CLAUDE_CODE_DISABLE_BACKGROUND_TASKS=1 (via -- --settings) → a foreground child; its answer without Claude's hand-back wrapping`, async (t) => {
      if (!requireCli(t, 'claude', version)) return;
      const b = await box(t, 'fg', version);
      const toolWord = uniq('fgtool');
      const settings = JSON.stringify({ env: { CLAUDE_CODE_DISABLE_BACKGROUND_TASKS: '1' } });
      assertOk(
        b.run('start-subagent', ['--name', 'fg', '--cli', 'claude', '--prompt', `TASK:fg job:TOOL:Bash:echo ${toolWord}`, '--', '--settings', settings]),
        'start',
      );
      const a = await waitDone(b, 'fg');
      assert.equal(a.outcome, 'succeeded', `${a.error} ${stderrTail(b.registry, 'fg')}`);
      assert.deepEqual(
        a.children.map((x: any) => [x.description, x.status, x.statusSource]),
        [['fg job', 'done', 'stream']],
      );
      const child = a.children[0];
      const events = readFileSync(join(runDirPath(b.registry, 'fg'), 'events.log'), 'utf8');
      assert.ok(!events.includes('async_launched'), 'the Agent call ran in the foreground');
      assert.equal(events.match(/"type":"result"/g)?.length, 1, 'one result line');
      // Claude wraps the answer it hands back; the transcript we show has the answer only.
      assert.ok(events.includes('<tools-used-before-summary>') && events.includes('[Subagent hand-back]'), 'the stream has the wrapping');
      const wrapped = assertOk(b.run('search', ['--name', 'fg', '--pattern', 'tools-used-before-summary|Subagent hand-back']), 'search wrapper');
      assert.deepEqual(wrapped.matches, [], JSON.stringify(wrapped.matches));
      const answer = assertOk(b.run('search', ['--name', 'fg', '--pattern', `^done: ${toolWord}$`, '--role', 'assistant']), 'search answer');
      assert.ok(
        answer.matches.some((m: any) => m.childId === child.id),
        JSON.stringify(answer),
      );
      // A tool message is searched as "headline\nname input\noutput": the Agent call's output is the child's answer alone.
      const agentCall = assertOk(
        b.run('search', ['--name', 'fg', '--pattern', `^Agent: fg job\\n[^\\n]*\\ndone: ${toolWord}$`, '--role', 'tool']),
        'search Agent call',
      );
      assert.equal(agentCall.matches.length, 1, JSON.stringify(agentCall));
      assert.equal(assertOk(b.run('result', ['--name', 'fg', '--child', child.id, '--json']), 'result --child').lastAssistantText, `done: ${toolWord}`);
      assert.equal(assertOk(b.run('result', ['--name', 'fg', '--json']), 'result').lastAssistantText, `done: done: ${toolWord}`);
    });
  }
}
