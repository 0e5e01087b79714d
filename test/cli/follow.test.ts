// `subagent-result --follow`: the transcript streamed as it grows, through the real bin/result, read
// incrementally from its stdout. Shell runs gated on files (the test decides when a run goes on), and the
// real claude / codex / opencode against the fake model servers of test/fakes (which live in this
// process: nothing here blocks the event loop while such a run talks to its fake).
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { FakeOptions, FakeServer } from '../fakes/script.js';
import { startFake } from '../fakes/world.js';
import { cliSetup, requireCli, type CliName } from '../fakes/env.js';
import { assertError, type RunOpts, type Spawned } from '../support/run.js';
import { LONG, until } from '../support/wait.js';
import { hasInotify } from '../support/procs.js';
import { MARK_KEY, makeBox, testBox, type Box } from '../support/box.js';
import { gate, open, startShell, statusOf, untilStatus } from '../support/shell.js';

const b = makeBox('follow');
/** Its own registry: the concurrency limit set there would hold back every other run. */
const q = makeBox('follow-queue');

function tag(): string {
  return randomBytes(4).toString('hex');
}

/** bin/result ARGS in the background, its stdout readable as it comes. */
function follow(box: Box, args: string[], opts: RunOpts = {}): Spawned {
  return box.spawn('result', args, opts);
}

/** The last line of a follow, parsed: the usual result object (or an error line). */
function lastJson(stdout: string): any {
  assert.ok(stdout.endsWith('\n'), `the output ends with a newline: ${JSON.stringify(stdout.slice(-200))}`);
  const lines = stdout.slice(0, -1).split('\n');
  return JSON.parse(lines.at(-1)!);
}

describe('result --follow on shell runs', () => {
  test('streams the output as it grows: the first line arrives before the run may go on; ends with the run and the --json result', async () => {
    const t = tag();
    const g = join(b.dir, `gate-stream-${t}`);
    startShell(b, 'f/stream', `echo first-${t}; ${gate(g)}; echo second-${t}`);
    const f = follow(b, ['--name', 'f/stream', '--follow']);
    await until('the first line reaches the follower', () => f.stdout().includes('\n') || f.settled(), LONG, 20);
    assert.equal(f.stdout(), `first-${t}\n`, 'exactly the first line, while the run waits on its gate');
    assert.ok(!existsSync(g), 'the gate is still shut');
    assert.ok(!f.settled(), 'the follow goes on while the run does');
    // The agent can print before its supervisor has recorded "running" (the record is written just after the spawn).
    await untilStatus(b, 'f/stream', (a) => a.status === 'running', 'running while its gate is shut');

    open(g);
    const r = await f.done;
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.equal(r.stderr, '');
    const lines = r.stdout.slice(0, -1).split('\n');
    assert.deepEqual(lines.slice(0, -1), [`first-${t}`, `second-${t}`], r.stdout);
    const res = lastJson(r.stdout);
    assert.equal(res.ok, true);
    assert.equal(res.name, 'f/stream');
    assert.equal(res.registry, b.registry);
    assert.equal(res.run, 1);
    assert.equal(res.status, 'done');
    assert.equal(res.outcome, 'succeeded');
    assert.equal(res.exitCode, 0);
    assert.equal(res.lastAssistantText, `first-${t}\nsecond-${t}\n`);
    assert.equal(res.truncated, false);
    // The same object `result --json` gives.
    const plainResult = b.run('result', ['--name', 'f/stream', '--json']);
    assert.deepEqual(res, plainResult.json);
  });

  test('--follow --json: NDJSON message events as they come (numbered as search numbers them), then the result object', async () => {
    const t = tag();
    const g = join(b.dir, `gate-json-${t}`);
    startShell(b, 'f/json', `echo alpha-${t}; echo; ${gate(g)}; printf 'beta-${t}\\tend\\n'; echo 'gamma "q" ${t}'; exit 4`);
    const f = follow(b, ['--name', 'f/json', '--follow', '--json']);
    await until('two events', () => f.stdout().split('\n').length > 2 || f.settled(), LONG, 20);
    assert.ok(!existsSync(g) && !f.settled());
    const early = f
      .stdout()
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l));
    assert.deepEqual(early, [
      { type: 'message', run: 1, index: 1, line: 1, role: 'assistant', text: `alpha-${t}` },
      { type: 'message', run: 1, index: 1, line: 2, role: 'assistant', text: '' },
    ]);
    open(g);
    const r = await f.done;
    assert.equal(r.code, 0, "the follow succeeded, whatever the run's outcome: " + r.stdout + r.stderr);
    const lines = r.stdout
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l));
    const res = lines.pop();
    assert.deepEqual(
      lines.map((e) => e.text),
      [`alpha-${t}`, '', `beta-${t}\tend`, `gamma "q" ${t}`],
    );
    for (const e of lines) {
      assert.equal(e.type, 'message');
      assert.equal(e.run, 1);
      assert.equal(e.role, 'assistant');
    }
    assert.equal(res.ok, true);
    assert.equal(res.status, 'done');
    assert.equal(res.outcome, 'failed');
    assert.equal(res.exitCode, 4);
    assert.equal(res.lastAssistantText, `alpha-${t}\n\nbeta-${t}\tend\ngamma "q" ${t}\n`);
    // search finds the same messages at the same index / line.
    const s = b.run('search', ['--name', 'f/json', '--pattern', `^(beta|gamma)`, '--role', 'assistant']);
    assert.equal(s.code, 0, s.stdout);
    assert.deepEqual(
      s.json.matches.map((m: any) => [m.run, m.index, m.line]),
      lines.filter((e) => /^(beta|gamma)/.test(e.text)).map((e) => [e.run, e.index, e.line]),
    );
  });

  test('a run that is still scheduled (queued behind --max-concurrent 1) is followed from the queue to its end', async () => {
    const t = tag();
    const gh = join(q.dir, 'gate-hold');
    startShell(q, 'q/hold', `echo holding; ${gate(gh)}`, ['--max-concurrent', '1']);
    await untilStatus(q, 'q/hold', (a) => a.status === 'running', 'running');
    startShell(q, 'q/next', `echo queued-out-${t}; echo second-${t}`);
    const queued = statusOf(q, 'q/next');
    assert.equal(queued.status, 'scheduled', JSON.stringify(queued));
    assert.equal(queued.queued, true);

    const f = follow(q, ['--name', 'q/next', '--follow']);
    await until('the follower watches the run directory', () => hasInotify(f.pid) || f.settled(), LONG, 20);
    assert.ok(!f.settled(), `the follow of a scheduled run does not end at once: ${f.stdout()}`);
    assert.equal(f.stdout(), '', 'nothing to show yet');
    assert.equal(statusOf(q, 'q/next').status, 'scheduled', 'still queued');

    open(gh);
    const r = await f.done;
    assert.equal(r.code, 0, r.stdout + r.stderr);
    const lines = r.stdout.slice(0, -1).split('\n');
    assert.deepEqual(lines.slice(0, -1), [`queued-out-${t}`, `second-${t}`], r.stdout);
    const res = lastJson(r.stdout);
    assert.equal(res.ok, true);
    assert.equal(res.name, 'q/next');
    assert.equal(res.status, 'done');
    assert.equal(res.outcome, 'succeeded');
    assert.equal(res.lastAssistantText, `queued-out-${t}\nsecond-${t}\n`);
    await untilStatus(q, 'q/hold', (a) => a.status === 'done', 'the holder ended');
  });

  test('--timeout 1 on a long run: what came so far, then E_WAIT_TIMEOUT, exit 124 (no agents); the run goes on', async () => {
    const t = tag();
    const g = join(b.dir, `gate-long-${t}`);
    startShell(b, 'f/long', `echo before-${t}; ${gate(g)}`);
    await untilStatus(b, 'f/long', (a) => a.status === 'running', 'running');
    const f = follow(b, ['--name', 'f/long', '--follow', '--timeout', '1']);
    const r = await f.done;
    assert.equal(r.code, 124, r.stdout + r.stderr);
    assert.ok(r.ms >= 900, `stopped after ${r.ms} ms, not before the second`);
    const lines = r.stdout.slice(0, -1).split('\n');
    assert.equal(lines.length, 2, r.stdout);
    assert.equal(lines[0], `before-${t}`);
    const err = assertError({ ...r, json: JSON.parse(lines[1]!) }, 'E_WAIT_TIMEOUT');
    assert.equal(err.agents, undefined, 'a follow time-out carries no agents');
    assert.equal(statusOf(b, 'f/long').status, 'running', 'following never touches the run');
    // The same with --json: the events, then the error line.
    const j = await follow(b, ['--name', 'f/long', '--follow', '--json', '--timeout', '1']).done;
    assert.equal(j.code, 124, j.stdout);
    const jl = j.stdout
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l));
    assert.equal(jl.length, 2, j.stdout);
    assert.equal(jl[0].text, `before-${t}`);
    assert.equal(jl[1].code, 'E_WAIT_TIMEOUT');
    open(g);
    await untilStatus(b, 'f/long', (a) => a.status === 'done', 'done');
  });

  test('--follow errors: a missing name, --follow with --run, --timeout without --follow', async () => {
    startShell(b, 'f/there', 'echo x');
    assertError(await b.runAsync('result', ['--name', 'f/nope', '--follow']), 'E_NAME_NOT_FOUND');
    assertError(await b.runAsync('result', ['--name', 'f/there', '--follow', '--run', '1']), 'E_ARG_INVALID');
    assertError(await b.runAsync('result', ['--name', 'f/there', '--timeout', '1']), 'E_ARG_INVALID');
    assertError(await b.runAsync('result', ['--name', 'f/there', '--follow', '--timeout', 'soon']), 'E_ARG_INVALID');
    await untilStatus(b, 'f/there', (a) => a.status === 'done', 'done');
  });
});

// ---------------------------------------------------------------------------------------------------
// The real agent CLIs against their fakes. Each test: its own fake, registry, HOME, and a marker in
// the environment of every process it starts, by which its processes are ended (by pid) afterwards.

interface World {
  box: Box;
  srv: FakeServer;
}

async function world(t: { after(fn: () => void | Promise<void>): void }, cli: CliName, options: FakeOptions = {}): Promise<World> {
  const srv = await startFake(cli, options);
  const box = testBox(t, `follow-${cli}`);
  t.after(() => srv.close());
  const home = join(box.dir, 'home');
  const cwd = join(box.dir, 'work');
  mkdirSync(cwd, { recursive: true });
  const setup = cliSetup(cli, { home, baseUrl: srv.url });
  for (const k of Object.keys(box.env)) delete box.env[k];
  const tmp = join(box.dir, 'tmp');
  mkdirSync(tmp);
  Object.assign(box.env, setup.env, { SUBAGENT_DIR: box.registry, SUBAGENT_CANCEL_GRACE_MS: '1500', [MARK_KEY]: box.dir });
  if (cli === 'claude') box.env.CLAUDE_CODE_TMPDIR = tmp;
  return { box, srv };
}

const PROMPTS: Record<CliName, { extra: string[] }> = {
  claude: { extra: ['--', '--allowedTools', 'Bash'] },
  codex: { extra: [] },
  copilot: { extra: [] },
  opencode: { extra: [] },
  qwen: { extra: [] },
  gemini: { extra: [] },
};

describe('result --follow on the real agent CLIs (fake model servers)', { concurrency: true }, () => {
  for (const cli of ['claude', 'codex', 'copilot', 'opencode', 'gemini', 'qwen'] as const) {
    test(`${cli}: the answer text and a [tool] line stream, then the --json result`, async (t) => {
      if (!requireCli(t, cli)) return;
      // The model's answer after the tool call is held back until the test has seen the [tool] line:
      // the follow shows the run as it goes, not at its end.
      let release!: () => void;
      const released = new Promise<void>((resolve) => (release = resolve));
      let held = 0;
      const w = await world(t, cli, {
        handler: async (req) => {
          if ((req.conversation?.toolOutputs.length ?? 0) > 0) {
            held++;
            await released;
          }
          return undefined;
        },
      });
      t.after(release);
      const word = `tool-out-${tag()}`;
      const s = await w.box.runAsync('start-subagent', ['--name', `f/${cli}`, '--cli', cli, '--prompt', `TOOL:Bash:echo ${word}`, ...PROMPTS[cli].extra], {
        cwd: join(w.box.dir, 'work'),
      });
      assert.equal(s.code, 0, s.stdout + s.stderr);
      // Followed from the start: the run is scheduled or running, not over.
      const f = follow(w.box, ['--name', `f/${cli}`, '--follow']);
      await until('a [tool] line while the model holds its answer', () => /^\[tool\] /m.test(f.stdout()) || f.settled(), LONG, 25);
      assert.ok(!f.settled(), `the follow ended before the answer was released:\n${f.stdout()}`);
      assert.ok(!f.stdout().includes(`done: ${word}`), 'the answer is not there yet');
      await until('the model request after the tool call arrives', () => held > 0, LONG, 25);
      release();
      const r = await f.done;
      assert.equal(r.code, 0, r.stdout + r.stderr);
      const res = lastJson(r.stdout);
      assert.equal(res.ok, true, r.stdout);
      assert.equal(res.status, 'done');
      assert.equal(res.outcome, 'succeeded', r.stdout);
      assert.equal(res.lastAssistantText.trim(), `done: ${word}`);
      const lines = r.stdout.slice(0, -1).split('\n').slice(0, -1);
      const tools = lines.filter((l) => l.startsWith('[tool] '));
      assert.ok(tools.length >= 1, `a [tool] line:\n${r.stdout}`);
      assert.ok(
        tools.some((l) => l.includes(`echo ${word}`)),
        `the tool line names the command:\n${tools.join('\n')}`,
      );
      assert.ok(lines.includes(`done: ${word}`), `the answer streamed as a line:\n${r.stdout}`);
      assert.ok(lines.indexOf(`done: ${word}`) > lines.indexOf(tools[0]!), 'in order: the tool call, then the answer');

      // --json: the same transcript as events.
      const j = await follow(w.box, ['--name', `f/${cli}`, '--follow', '--json']).done;
      assert.equal(j.code, 0, j.stdout);
      const ev = j.stdout
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l));
      const last = ev.pop();
      assert.deepEqual(last, res);
      assert.ok(ev.every((e) => e.type === 'message' && e.run === 1 && typeof e.index === 'number'));
      assert.deepEqual(
        ev.map((e) => e.index),
        ev.map((_, i) => i + 1),
        'numbered 1, 2, …',
      );
      const tool = ev.find((e) => e.role === 'tool');
      assert.ok(tool?.tool && typeof tool.tool.name === 'string', JSON.stringify(ev));
      assert.ok(ev.some((e) => e.role === 'assistant' && e.text.trim() === `done: ${word}`));
    });
  }
});
