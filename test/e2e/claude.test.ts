// Claude Code's own end-to-end tests, beside its row of the contract suite (test/e2e/contract/claude.ts,
// run by test/e2e/contract-*.test.ts): every verb through the real Claude Code, at every version pinned in
// test/clis/pins.json (`cliVersions('claude')`), against the fake Anthropic server
// (test/fakes/anthropic.ts) on 127.0.0.1. Each test has its own sandbox: registry, HOME and
// CLAUDE_CONFIG_DIR (so its own transcripts), and a marker in the environment of every process it starts,
// by which `after` ends leftovers (by pid).
//
// The fake runs in this process, so nothing that waits on a run may block the event loop: the waiting
// verbs go through runAsync (spawnSync would hold the fake's answers until the wait times out).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { cliVersions, requireCli } from '../fakes/env.js';
import { assertOk } from '../support/run.js';
import { until, untilInRun } from '../support/wait.js';
import { pidsWithCmdline, pidsWithEnv } from '../support/procs.js';
import { recordOf, runDirPath, stderrTail } from '../support/registry.js';
import type { Box } from '../support/box.js';
import { requestsWith, uniq, waitDone } from '../fakes/world.js';
import { backgroundByDefault, claudeBox, server } from './contract/claude.js';

/** A sandbox whose every process runs Claude `version` against the fake, in its own HOME and CLAUDE_CONFIG_DIR. */
async function box(t: Parameters<ReturnType<typeof claudeBox>>[0], label: string, version: string): Promise<Box> {
  return (await claudeBox(version)(t, label))!.b;
}

for (const version of cliVersions('claude')) {
  const background = backgroundByDefault(version);

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
