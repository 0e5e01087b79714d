// test-order: early — one of the longest files (runs stopped at their caps): started first (scripts/test.sh).
/**
 * Spend caps (issue 16, point 4) through the real executables: `--max-cost`, `--max-tokens` and
 * `--max-turns` on start-subagent, resume-subagent and in batch lines — checked (E_ARG_INVALID) and
 * refused where the CLI cannot be held to them (E_ARG_UNSUPPORTED) before anything is recorded; recorded
 * with the run and kept on resume; passed to the CLI's own limits (a fake `claude` on PATH records its
 * argv); and held by the supervisor (fake `opencode` / `claude` programs that replay captured streams,
 * then wait as a model in flight would): the run is stopped and ends failed with the cap as its reason,
 * with no process of it left. The real CLIs against the fake model servers: test/e2e/reasons-caps.test.ts.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { FIXTURES } from '../support/paths.js';
import { assertOk } from '../support/run.js';
import { makeBox, testBox } from '../support/box.js';
import { expectError, startShell, statusOf, waitTerminal, waitTerminalAsync } from '../support/shell.js';
import { pidsWithEnv } from '../support/procs.js';
import { recordOf } from '../support/registry.js';
import { until } from '../support/wait.js';

const AGENTS = join(FIXTURES, 'agents');
const box = makeBox('caps');
const fakeBin = join(box.dir, 'fakebin');
mkdirSync(fakeBin, { recursive: true });
const withFakes = { PATH: `${fakeBin}:${box.env.PATH}` };

/** A fake `program` on PATH whose run is `body` (OpenCode's side commands fail: the stream is all there is). */
function fakeCli(program: string, body: string): void {
  const path = join(fakeBin, program);
  writeFileSync(path, `#!/bin/sh\ncase "$1" in db|export) exit 1;; esac\n${body}\n`);
  chmodSync(path, 0o755);
}

/** The first `n` lines of a captured stream, as a shell line that prints them. */
function printLines(fixture: string, n: number): string {
  const lines = readFileSync(join(AGENTS, fixture), 'utf8').split('\n').slice(0, n);
  const file = join(box.dir, `${fixture.replace(/\W/g, '_')}-${n}`);
  writeFileSync(file, lines.join('\n') + '\n');
  return `cat '${file}'`;
}

/** A fake claude that writes its arguments, one per line, next to the box, then replays a plain reply. */
/** A fake Codex: prints the start of a stream of thread `thread` (written to `<streamName>` in the box), copies
 * the rollout `fixture` (of test/fixtures/agents/codex/rollouts) into CODEX_HOME as that thread's, then
 * sleeps, or with `end` ends. */
function fakeCodexRollout(thread: string, fixture: string, streamName: string, { end = false } = {}): void {
  const rollout = join(AGENTS, 'codex', 'rollouts', fixture);
  const stream = join(box.dir, streamName);
  writeFileSync(stream, `{"type":"thread.started","thread_id":"${thread}"}\n{"type":"turn.started"}\n`);
  const day = '"$CODEX_HOME/sessions/2026/11/21"';
  fakeCli('codex', `cat '${stream}'\nmkdir -p ${day}\ncp '${rollout}' ${day}/rollout-2026-11-21T23-39-12-${thread}.jsonl${end ? '' : '\nexec sleep 300'}`);
}

function argvRecordingClaude(): string {
  const argv = join(box.dir, 'claude-argv');
  fakeCli('claude', `printf '%s\\n' "$@" > '${argv}'\ncat '${join(AGENTS, 'claude', 'plain-reply.ndjson')}'`);
  return argv;
}

const NO_CAPS = { maxCostUsd: null, maxTokens: null, maxTurns: null, maxTimeSec: null, maxMemoryBytes: null };

describe('checked before anything is recorded', () => {
  test('a bad value is E_ARG_INVALID naming the flag, on start and resume', () => {
    const bad: Array<[string, string]> = [
      ['--max-cost', '0'],
      ['--max-cost', '-1'],
      ['--max-cost', 'abc'],
      ['--max-cost', '1e3'],
      ['--max-cost', ''],
      ['--max-tokens', '0'],
      ['--max-tokens', '1.5'],
      ['--max-tokens', 'lots'],
      ['--max-turns', '0'],
      ['--max-turns', '2.0'],
      ['--max-turns', '-3'],
    ];
    for (const [flag, value] of bad) {
      const e = expectError(box, 'start-subagent', ['--name', 'bad/cap', '--cli', 'claude', '--prompt', 'x', flag, value], 'E_ARG_INVALID', { env: withFakes });
      assert.equal(e.details.flag, flag, `${flag} ${value}`);
      assert.match(e.details.hint, /none/, 'the hint says how to drop a cap');
    }
    startShell(box, 'bad/resume', 'echo one');
    waitTerminal(box, ['bad/resume']);
    const e = expectError(box, 'resume-subagent', ['--name', 'bad/resume', '--prompt', 'x', '--max-turns', '0'], 'E_ARG_INVALID');
    assert.equal(e.details.flag, '--max-turns');
  });

  test('a cap the CLI cannot be held to is E_ARG_UNSUPPORTED: shell (no usage), codex and gemini (no cost)', () => {
    const refused: Record<string, string[]> = {
      shell: ['--max-cost', '--max-tokens', '--max-turns'],
      codex: ['--max-cost'],
      gemini: ['--max-cost'],
    };
    const values: Record<string, string> = { '--max-cost': '1', '--max-tokens': '1000', '--max-turns': '5' };
    for (const [cli, flags] of Object.entries(refused)) {
      for (const [flag, value] of flags.map((f) => [f, values[f]!] as const)) {
        const e = expectError(box, 'start-subagent', ['--name', `unsup/${cli}`, '--cli', cli, '--prompt', 'x', flag, value], 'E_ARG_UNSUPPORTED');
        assert.equal(e.details.cli, cli);
        assert.equal(e.details.flag, flag);
        assert.match(e.details.hint, new RegExp(`docs/agents/${cli}\\.md`));
      }
    }
    // "none" is no cap: accepted everywhere.
    assertOk(box.run('start-subagent', ['--name', 'unsup/none', '--cli', 'shell', '--prompt', 'true', '--max-cost', 'none']), 'none');
    startShell(box, 'unsup/resume', 'echo one');
    waitTerminal(box, ['unsup/resume', 'unsup/none']);
    assert.deepEqual(statusOf(box, 'unsup/none').caps, NO_CAPS);
    expectError(box, 'resume-subagent', ['--name', 'unsup/resume', '--prompt', 'x', '--max-tokens', '10'], 'E_ARG_UNSUPPORTED');
  });
});

describe('recorded, kept on resume, passed to the CLI’s own limits', () => {
  test('claude: --max-cost and --max-turns become --max-budget-usd and --max-turns; --max-tokens stays with the supervisor', () => {
    const argv = argvRecordingClaude();
    const s = box.run(
      'start-subagent',
      ['--name', 'native/c', '--cli', 'claude', '--prompt', 'x', '--max-cost', '0.25', '--max-turns', '4', '--max-tokens', '900000'],
      {
        env: withFakes,
      },
    );
    assertOk(s, 'start');
    const a = waitTerminal(box, ['native/c'])['native/c'];
    assert.equal(a.outcome, 'succeeded', a.error);
    assert.equal(a.reason, null);
    assert.deepEqual(a.caps, { maxCostUsd: 0.25, maxTokens: 900000, maxTurns: 4, maxTimeSec: null, maxMemoryBytes: null });
    // The record writes the memory cap only when there is one.
    assert.deepEqual({ ...recordOf(box.registry, 'native/c').caps, maxMemoryBytes: null }, a.caps, 'the record holds them');
    const args = readFileSync(argv, 'utf8').split('\n');
    assert.deepEqual(args.slice(args.indexOf('--max-budget-usd'), args.indexOf('--max-budget-usd') + 4), ['--max-budget-usd', '0.25', '--max-turns', '4']);
    assert.ok(!args.some((x) => /tokens/.test(x)), 'Claude has no token limit of its own');

    // A resume keeps the caps; a flag replaces one; "none" drops one.
    assertOk(box.run('resume-subagent', ['--name', 'native/c', '--prompt', 'y', '--max-turns', 'none', '--max-cost', '1.5'], { env: withFakes }), 'resume');
    const b = waitTerminal(box, ['native/c'])['native/c'];
    assert.equal(b.run, 2);
    assert.deepEqual(b.caps, { maxCostUsd: 1.5, maxTokens: 900000, maxTurns: null, maxTimeSec: null, maxMemoryBytes: null });
    const args2 = readFileSync(argv, 'utf8').split('\n');
    assert.deepEqual(args2.slice(args2.indexOf('--max-budget-usd'), args2.indexOf('--max-budget-usd') + 2), ['--max-budget-usd', '1.5']);
    assert.ok(!args2.includes('--max-turns'));
    assertOk(box.run('resume-subagent', ['--name', 'native/c', '--prompt', 'z'], { env: withFakes }), 'resume 2');
    assert.deepEqual(waitTerminal(box, ['native/c'])['native/c'].caps, b.caps, 'kept as they were');
    const runs = assertOk(box.run('status', ['--name', 'native/c', '--runs']), 'history').runs;
    assert.deepEqual(
      runs.map((r: any) => r.caps.maxTurns),
      [4, null, null],
    );
  });

  test('batch lines take maxCost, maxTokens, maxTurns (a number, or the flag’s text); flags beside --batch are their defaults; null drops one', () => {
    argvRecordingClaude();
    const lines = [
      { name: 'bc/one', cli: 'claude', prompt: 'x', maxCost: 0.5, maxTurns: 3 },
      { name: 'bc/two', cli: 'claude', prompt: 'x', maxTokens: '5000' },
      { name: 'bc/three', cli: 'claude', prompt: 'x', maxTurns: null },
      { name: 'bc/shell', cli: 'shell', prompt: 'true', maxTokens: 10 },
      { name: 'bc/bad', cli: 'claude', prompt: 'x', maxCost: 'cheap' },
      { name: 'bc/obj', cli: 'claude', prompt: 'x', maxTurns: { n: 1 } },
    ];
    writeFileSync(join(box.dir, 'caps.jsonl'), lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
    const r = box.run('start-subagent', ['--batch', 'caps.jsonl', '--max-turns', '7'], { env: withFakes });
    assert.equal(r.json.code, 'E_BATCH_INCOMPLETE', r.stdout);
    assert.deepEqual(
      r.json.started.map((s: any) => s.name),
      ['bc/one', 'bc/two', 'bc/three'],
    );
    assert.deepEqual(
      r.json.failed.map((f: any) => [f.line, f.code]),
      [
        [4, 'E_ARG_UNSUPPORTED'],
        [5, 'E_ARG_INVALID'],
        [6, 'E_ARG_INVALID'],
      ],
    );
    const got = waitTerminal(box, ['bc/one', 'bc/two', 'bc/three']);
    assert.deepEqual(got['bc/one'].caps, { maxCostUsd: 0.5, maxTokens: null, maxTurns: 3, maxTimeSec: null, maxMemoryBytes: null });
    assert.deepEqual(
      got['bc/two'].caps,
      { maxCostUsd: null, maxTokens: 5000, maxTurns: 7, maxTimeSec: null, maxMemoryBytes: null },
      'the default from --max-turns',
    );
    assert.deepEqual(got['bc/three'].caps, NO_CAPS, 'null drops the default');
    for (const n of ['bc/shell', 'bc/bad', 'bc/obj']) assert.equal(statusOf(box, n), undefined, `${n} was not recorded`);
  });
});

describe('held by the supervisor: the run is stopped, failed with the cap as its reason, nothing of it left', () => {
  /** Starts a fake-CLI run with the caps, waits for its end, and checks nothing of it lives on. */
  async function capped(name: string, cli: string, caps: string[], env: NodeJS.ProcessEnv = {}): Promise<any> {
    assertOk(
      await box.runAsync('start-subagent', ['--name', name, '--cli', cli, '--prompt', 'work', ...caps], { env: { ...withFakes, ...env } }),
      `start ${name}`,
    );
    const a = (await waitTerminalAsync(box, [name]))[name];
    const runId = recordOf(box.registry, name).runId;
    await until(`no process of ${name} left`, () => pidsWithEnv(`SUBAGENT_RUN_ID=${runId}`).length === 0, 10_000);
    return a;
  }

  // OpenCode reports tokens and cost at each step_finish and a turn at each step_start (steps-cost.jsonl:
  // step 1 ends at 7697 tokens and $7.718, step 2 starts on line 4, ends at 15448 tokens and $15.471).
  test('opencode --max-cost / --max-tokens / --max-turns: stopped mid-run (the fake then waits like a model in flight)', async () => {
    fakeCli('opencode', `${printLines('opencode/steps-cost.jsonl', 4)}\nexec sleep 300`);
    const cost = await capped('held/cost', 'opencode', ['--max-cost', '5']);
    assert.equal(cost.outcome, 'failed');
    assert.equal(cost.reason, 'max-cost');
    assert.equal(cost.error, 'stopped at --max-cost 5: the run had cost $7.718');
    assert.equal(cost.cancelRequested, true, 'stopped the way a cancel stops a run');
    assert.equal(cost.usage.costUsd, 7.718);
    assert.equal(cost.signal, 'SIGTERM', "OpenCode's graceful signal");

    const tokens = await capped('held/tokens', 'opencode', ['--max-tokens', '7000']);
    assert.equal(tokens.reason, 'max-tokens');
    assert.equal(tokens.error, 'stopped at --max-tokens 7000: the run had used 7697 tokens');

    const turns = await capped('held/turns', 'opencode', ['--max-turns', '1']);
    assert.equal(turns.reason, 'max-turns');
    assert.equal(turns.error, 'stopped at --max-turns 1: the run began turn 2');

    // Under its caps the same run is not stopped by them (it ends only when the fake is told to).
    fakeCli('opencode', `cat '${join(AGENTS, 'opencode', 'steps-cost.jsonl')}'`);
    const under = await capped('held/under', 'opencode', ['--max-cost', '100', '--max-tokens', '20000', '--max-turns', '2']);
    assert.equal(under.outcome, 'succeeded', under.error);
    assert.equal(under.reason, null);
    assert.equal(under.cancelRequested, false);
  });

  test('copilot --max-turns: its own turns (assistant.turn_start) are counted; stopped as its second begins', async () => {
    // bash.jsonl: turn 1 calls the tool (line 5), turn 2 begins on line 37.
    fakeCli('copilot', `${printLines('copilot/bash.jsonl', 37)}\nexec sleep 300`);
    const a = await capped('held/copilot', 'copilot', ['--max-turns', '1']);
    assert.equal(a.outcome, 'failed', a.error);
    assert.equal(a.reason, 'max-turns');
    assert.equal(a.error, 'stopped at --max-turns 1: the run began turn 2');
    expectError(box, 'start-subagent', ['--name', 'held/copilot-cost', '--cli', 'copilot', '--prompt', 'x', '--max-cost', '1'], 'E_ARG_UNSUPPORTED', {
      env: withFakes,
    });
  });

  test("gemini --max-turns: its model answers after the tools' results are its turns; stopped as its second begins", async () => {
    // multi-turn.ndjson: turn 1 (words, two tool calls) on lines 3-6, their results, turn 2's tool call on line 9.
    fakeCli('gemini', `${printLines('gemini/multi-turn.ndjson', 9)}\nexec sleep 300`);
    const a = await capped('held/gemini', 'gemini', ['--max-turns', '1']);
    assert.equal(a.outcome, 'failed', a.error);
    assert.equal(a.reason, 'max-turns');
    assert.equal(a.error, 'stopped at --max-turns 1: the run began turn 2');
    assert.equal(a.toolUses, 3);
    fakeCli('gemini', `${printLines('gemini/multi-turn.ndjson', 9)}`);
    const under = await capped('held/gemini-under', 'gemini', ['--max-turns', '2']);
    assert.notEqual(under.reason, 'max-turns', 'two turns are within --max-turns 2');
  });

  test('codex --max-tokens: held to the usage records of its rollout, read as they come (the stream has none before its turn ends)', async () => {
    // The stream names the thread; its rollout (CODEX_HOME/sessions/…) gets a usage record of 5187 tokens; the tool then runs on.
    const thread = '01a2007c-002c-75b3-bf73-983723bbb5ff';
    fakeCodexRollout(thread, 'sigint-during-tool.rollout.jsonl', 'codex-stream.jsonl');
    const a = await capped('held/codex', 'codex', ['--max-tokens', '5000'], { CODEX_HOME: join(box.dir, 'codex-home') });
    assert.equal(a.outcome, 'failed', a.error);
    assert.equal(a.reason, 'max-tokens');
    assert.equal(a.error, 'stopped at --max-tokens 5000: the run had used 5187 tokens');
    assert.equal(a.usage.totalTokens, 5187, "the usage recorded is the rollout's, the stream having none");
    assert.equal(a.signal, 'SIGINT', "Codex's graceful signal");
  });

  test('codex --max-turns: held to the count of usage records in its rollout (one a model response); stopped as its third ends', async () => {
    // The thread's rollout gets three usage records (three model responses); the CLI then runs on.
    const thread = '01a2007a-6bd9-7fc1-9ce0-6cd5d7d08994';
    fakeCodexRollout(thread, 'spawn-subagent.parent.rollout.jsonl', 'codex-turns-stream.jsonl');
    const home = { CODEX_HOME: join(box.dir, 'codex-turns-home') };
    const a = await capped('held/codex-turns', 'codex', ['--max-turns', '2'], home);
    assert.equal(a.outcome, 'failed', a.error);
    assert.equal(a.reason, 'max-turns');
    assert.equal(a.error, 'stopped at --max-turns 2: the run began turn 3');
    assert.equal(a.signal, 'SIGINT', "Codex's graceful signal");
    // The same three turns, the CLI then ending: within --max-turns 3.
    fakeCodexRollout(thread, 'spawn-subagent.parent.rollout.jsonl', 'codex-turns-stream.jsonl', { end: true });
    const under = await capped('held/codex-turns-under', 'codex', ['--max-turns', '3'], { CODEX_HOME: join(box.dir, 'codex-turns-home2') });
    assert.notEqual(under.reason, 'max-turns', 'three turns are within --max-turns 3');
    assert.equal(under.cancelRequested, false);
  });

  test("gemini --max-tokens: held to the model messages of its session's chat, read as they come (the stream has tokens only in its result)", async () => {
    // The session's chat (the id the run chose, passed as --session-id) gets its first model message, 10188 tokens; the CLI then runs on.
    const chat = join(AGENTS, 'gemini', 'store-subagent-resume', 'tmp', 'project', 'chats', 'session-2026-11-25T00-57-aa3c6cae.jsonl');
    const lines = join(box.dir, 'gemini-chat-5.jsonl');
    writeFileSync(lines, readFileSync(chat, 'utf8').split('\n').slice(0, 5).join('\n') + '\n');
    fakeCli(
      'gemini',
      [
        'sid=; prev=; for a in "$@"; do [ "$prev" = --session-id ] && sid=$a; prev=$a; done',
        'd="$HOME/.gemini/tmp/capped/chats"; mkdir -p "$d"',
        `sed "s/aa3c6cae-4fcd-4bf9-8dab-a23f4d6c64e0/$sid/g" '${lines}' > "$d/session-2026-11-25T00-57-$(echo "$sid" | cut -c1-8).jsonl"`,
        'exec sleep 300',
      ].join('\n'),
    );
    const a = await capped('held/gemini-tokens', 'gemini', ['--max-tokens', '10000']);
    assert.equal(a.outcome, 'failed', a.error);
    assert.equal(a.reason, 'max-tokens');
    assert.equal(a.error, 'stopped at --max-tokens 10000: the run had used 10188 tokens');
    assert.equal(a.usage.totalTokens, 10188, "the usage recorded is the chat's, the stream having none");
    assert.equal(a.signal, 'SIGTERM', "Gemini's graceful signal");
  });

  test('a run that reached its end over a cap still failed with the cap (over is over, however fast)', async () => {
    fakeCli('opencode', `cat '${join(AGENTS, 'opencode', 'steps-cost.jsonl')}'`);
    const a = await capped('held/late', 'opencode', ['--max-cost', '10']);
    assert.equal(a.outcome, 'failed');
    assert.equal(a.reason, 'max-cost');
    assert.equal(a.error, 'stopped at --max-cost 10: the run had cost $15.471');
    const r = assertOk(box.run('result', ['--name', 'held/late', '--json']), 'result');
    assert.equal(r.reason, 'max-cost');
    assert.equal(r.lastAssistantText, 'done: hi', 'what the run said is kept');
  });

  test('claude --max-tokens: held to the usage its assistant lines report; stopped with SIGINT, its graceful signal', async () => {
    fakeCli('claude', `${printLines('claude/bash-tool.ndjson', 3)}\nexec sleep 300`);
    const a = await capped('held/claude', 'claude', ['--max-tokens', '10000']);
    assert.equal(a.outcome, 'failed');
    assert.equal(a.reason, 'max-tokens');
    assert.match(a.error, /^stopped at --max-tokens 10000: the run had used \d+ tokens$/);
    assert.equal(a.signal, 'SIGINT');
    // A caller's cancel is still a cancel.
    fakeCli('claude', `${printLines('claude/bash-tool.ndjson', 1)}\nexec sleep 300`);
    assertOk(box.run('start-subagent', ['--name', 'held/cancel', '--cli', 'claude', '--prompt', 'x', '--max-tokens', '10000'], { env: withFakes }), 'start');
    await until('running', () => statusOf(box, 'held/cancel')?.status === 'running');
    assertOk(await box.runAsync('cancel', ['--name', 'held/cancel']), 'cancel');
    const c = (await waitTerminalAsync(box, ['held/cancel']))['held/cancel'];
    assert.equal(c.outcome, 'cancelled');
    assert.equal(c.reason, 'cancelled');
  });
});

describe('the time cap: --max-time, held by the supervisor for every CLI', () => {
  test('a run past its time is stopped and fails with max-time; one within it succeeds; nothing of it is left', async () => {
    // The trap proves the stop was graceful (the shell's TERM reached the script, which said so).
    startShell(box, 'time/over', "trap 'echo stopped; exit 3' TERM; echo started; sleep 600 & wait", ['--max-time', '1.5']);
    startShell(box, 'time/under', 'echo quick', ['--max-time', '60']);
    const got = await waitTerminalAsync(box, ['time/over', 'time/under']);
    const over = got['time/over'];
    assert.equal(over.outcome, 'failed', JSON.stringify(over));
    assert.equal(over.reason, 'max-time');
    assert.equal(over.error, 'stopped at --max-time 1.5: the agent had run 1.5 s');
    assert.equal(over.cancelRequested, true, 'stopped the way a cancel stops a run');
    assert.deepEqual(over.caps, { ...NO_CAPS, maxTimeSec: 1.5 });
    assert.ok(Date.parse(over.finishedAt) - Date.parse(over.startedAt) >= 1500, 'not before its time');
    assert.equal(assertOk(box.run('result', ['--name', 'time/over', '--json'])).lastAssistantText, 'started\nstopped\n');
    const runId = recordOf(box.registry, 'time/over').runId;
    await until('no process of time/over left', () => pidsWithEnv(`SUBAGENT_RUN_ID=${runId}`).length === 0, 10_000);
    assert.equal(got['time/under'].outcome, 'succeeded');
    assert.equal(got['time/under'].reason, null);
    assert.deepEqual(got['time/under'].caps, { ...NO_CAPS, maxTimeSec: 60 });
  });

  test('checked (E_ARG_INVALID), kept by a resume, dropped with none; batch lines take maxTime', async () => {
    for (const value of ['0', '-1', 'soon', '', '1e3']) {
      const e = expectError(box, 'start-subagent', ['--name', 'time/bad', '--cli', 'shell', '--prompt', 'true', '--max-time', value], 'E_ARG_INVALID');
      assert.equal(e.details.flag, '--max-time', value);
      assert.match(e.error, /seconds/);
    }
    assert.equal(statusOf(box, 'time/bad'), undefined, 'nothing recorded');
    startShell(box, 'time/kept', 'echo one', ['--max-time', '30']);
    waitTerminal(box, ['time/kept']);
    assertOk(box.run('resume-subagent', ['--name', 'time/kept', '--prompt', 'echo two']), 'resume');
    assert.equal(waitTerminal(box, ['time/kept'])['time/kept'].caps.maxTimeSec, 30, 'a resume keeps it');
    assertOk(box.run('resume-subagent', ['--name', 'time/kept', '--prompt', 'echo three', '--max-time', 'none']), 'resume');
    assert.equal(waitTerminal(box, ['time/kept'])['time/kept'].caps.maxTimeSec, null, 'none drops it');

    const lines = [
      { name: 'time/b1', cli: 'shell', prompt: 'true', maxTime: 20 },
      { name: 'time/b2', cli: 'shell', prompt: 'true' },
      { name: 'time/b3', cli: 'shell', prompt: 'true', maxTime: 'later' },
    ];
    const r = box.run('start-subagent', ['--batch', '-', '--max-time', '45'], { input: lines.map((l) => JSON.stringify(l)).join('\n') + '\n' });
    assert.equal(r.json.code, 'E_BATCH_INCOMPLETE', r.stdout);
    assert.deepEqual(
      r.json.failed.map((f: any) => [f.line, f.code]),
      [[3, 'E_ARG_INVALID']],
    );
    const b = waitTerminal(box, ['time/b1', 'time/b2']);
    assert.equal(b['time/b1'].caps.maxTimeSec, 20);
    assert.equal(b['time/b2'].caps.maxTimeSec, 45, 'the default from --max-time');
  });

  test('time spent queued does not count: the clock starts with the agent', async (t) => {
    const q = testBox(t, 'time-queue');
    const gate = join(q.dir, 'gate');
    startShell(q, 'time/first', `while [ ! -e '${gate}' ]; do sleep 0.05; done`, ['--max-concurrent', '1']);
    startShell(q, 'time/queued', 'echo ran', ['--max-time', '1']);
    await until('time/queued waits in the queue', () => statusOf(q, 'time/queued')?.status === 'scheduled');
    const since = Date.now();
    await until('queued for longer than its time cap', () => Date.now() - since > 1500);
    assert.equal(statusOf(q, 'time/queued').status, 'scheduled', 'still queued');
    writeFileSync(gate, '');
    const a = (await waitTerminalAsync(q, ['time/queued']))['time/queued'];
    assert.equal(a.outcome, 'succeeded', JSON.stringify(a));
    assert.equal(a.reason, null);
  });
});
