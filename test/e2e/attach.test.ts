// subagent-attach as a person uses it (issue 28, point 2): the REAL pinned Claude Code and Codex, in their
// interactive mode, in a real terminal (a private tmux server), against the fake model servers. A run is
// started as an orchestrator starts it; the person steps into its session, types a prompt into the CLI's
// own TUI, reads the answer and leaves; that turn is the name's next run (attached, its transcript and
// usage from the CLI's store), `result --since` gives it to the orchestrator, and the orchestrator's next
// resume continues the same session with it — the model sees what the person said.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, appendFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fakeWorld, uniq, type World } from '../fakes/world.js';
import type { CliName } from '../fakes/env.js';
import { BIN } from '../support/paths.js';
import { HAVE_TMUX, plain, Tmux, type PaneRun } from '../support/tmux.js';
import { assertOk } from '../support/run.js';
import { stderrTail } from '../support/registry.js';
import { until } from '../support/wait.js';

/** What a person has done once on their machine before using the CLI interactively (onboarding, trust). */
const PREPARE: Record<'claude' | 'codex', (w: World) => void> = {
  claude(w) {
    // Claude Code: onboarding done, the API key of the environment approved, the project trusted.
    const dir = w.box.env.CLAUDE_CONFIG_DIR!;
    mkdirSync(dir, { recursive: true });
    const file = join(dir, '.claude.json');
    const config = existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : {};
    config.hasCompletedOnboarding = true;
    config.customApiKeyResponses = { approved: [w.box.env.ANTHROPIC_API_KEY!.slice(-20)], rejected: [] };
    config.projects = { ...(config.projects ?? {}), [w.cwd]: { hasTrustDialogAccepted: true } };
    writeFileSync(file, JSON.stringify(config));
  },
  codex(w) {
    // Codex: the project trusted (else a "Trust this folder?" screen first).
    appendFileSync(w.box.env.CODEX_HOME + '/config.toml', `\n[projects.${JSON.stringify(w.cwd)}]\ntrust_level = "trusted"\n`);
  },
};

/** The TUI is waiting for the person's prompt. */
const READY: Record<'claude' | 'codex', RegExp> = { claude: /\? for shortcuts/, codex: /Ask Codex to do anything/ };
/** The key that leaves it (pressed until it has left: each CLI asks for it twice). */
const LEAVE: Record<'claude' | 'codex', string> = { claude: 'C-d', codex: 'C-c' };

async function screen(tmux: Tmux, p: PaneRun, what: string, pred: (text: string) => boolean, timeoutMs = 90_000): Promise<string> {
  let last = '';
  try {
    return await until(
      what,
      () => {
        last = tmux.capture(p).map(plain).join('\n');
        return pred(last) ? last : null;
      },
      timeoutMs,
      100,
    );
  } catch (err) {
    throw new Error(`${(err as Error).message}; the screen:\n${last}`);
  }
}

async function attachScenario(t: TestContext, cli: 'claude' | 'codex'): Promise<void> {
  if (!HAVE_TMUX) {
    if (process.env.CI) assert.fail('tmux is needed (test/setup-tools.sh installs it)');
    t.skip('tmux is not installed');
    return;
  }
  const w = await fakeWorld(t, cli);
  if (!w) return;
  const first = uniq(`${cli}-first`);
  const said = uniq(`${cli}-said-in-person`);
  const third = uniq(`${cli}-third`);
  await w.start('talk', `REPLY:${first}`);
  const one = await w.wait('talk');
  assert.equal(one.outcome, 'succeeded', one.error);
  PREPARE[cli](w);

  const tmux = new Tmux(w.box.dir, w.box.env);
  t.after(() => tmux.close());
  const out = join(w.box.dir, 'attach.json');
  // stdout taken by a file, as a script would: the CLI draws on the terminal through stderr.
  const p = tmux.run(['sh', '-c', `exec '${join(BIN, 'attach')}' --name talk > '${out}'`], {
    cols: 120,
    rows: 40,
    env: { ...w.box.env, TERM: 'xterm-256color' },
    cwd: w.cwd,
  });
  await screen(tmux, p, 'the session open on its earlier turn', (s) => s.includes(first) && READY[cli].test(s));
  // The name is held while the person is in it.
  const held = assertOk(await w.run('status', ['--name', 'talk'])).agents[0];
  assert.deepEqual([held.run, held.status, held.attached], [2, 'running', true]);
  const busy = await w.run('resume-subagent', ['--name', 'talk', '--prompt', 'REPLY:not now']);
  assert.equal(busy.json?.code, 'E_AGENT_BUSY', busy.stdout);

  // Typed as a person types: until the TUI shows it in its input (a TUI still settling may drop keys), then Enter.
  await until(
    'the prompt typed into the TUI',
    async () => {
      tmux.send(p, ['C-u']);
      tmux.send(p, [`REPLY:${said}`], { literal: true });
      return await screen(tmux, p, 'the typed prompt shown', (s) => s.includes(said), 3_000).catch(() => null);
    },
    60_000,
    10,
  );
  tmux.send(p, ['Enter']);
  await screen(tmux, p, 'the answer to what the person typed', (s) => s.split(said).length >= 3);
  // Leaving: each CLI asks for its key twice in a row.
  for (let i = 0; i < 5 && !existsSync(p.doneFile); i++) {
    tmux.send(p, [LEAVE[cli]]);
    await screen(tmux, p, 'asked for the key again', (s) => /again/i.test(s) || existsSync(p.doneFile), 3_000).catch(() => undefined);
    if (!existsSync(p.doneFile)) tmux.send(p, [LEAVE[cli]]);
    await until('the CLI left', () => existsSync(p.doneFile) || null, 3_000).catch(() => undefined);
  }
  assert.equal(await tmux.waitDone(p), 0, tmux.capture(p).join('\n'));
  const line = JSON.parse(readFileSync(out, 'utf8'));
  assert.equal(line.ok, true, JSON.stringify(line));
  assert.deepEqual([line.name, line.run, line.outcome, line.exitCode, line.sessionId], ['talk', 2, 'succeeded', 0, one.sessionId]);
  assert.ok(line.usage?.totalTokens > 0, `the turn's usage from the CLI's store: ${JSON.stringify(line.usage)}`);

  // The orchestrator's look: everything since run 1.
  const since = assertOk(await w.run('result', ['--name', 'talk', '--since', '1', '--json']));
  assert.deepEqual(
    since.runs.map((r: any) => [r.run, r.outcome, r.lastAssistantText]),
    [[2, 'succeeded', said]],
  );
  const found = assertOk(await w.run('search', ['--name', 'talk', '--pattern', said]));
  assert.deepEqual(
    found.matches.map((m: any) => [m.run, m.role]),
    [
      [2, 'user'],
      [2, 'assistant'],
    ],
    'the person’s prompt and the answer, in run 2’s transcript',
  );
  const two = assertOk(await w.run('status', ['--name', 'talk'])).agents[0];
  assert.deepEqual([two.run, two.status, two.attached, two.sessionId], [2, 'done', true, one.sessionId]);

  // The next resume continues the same session, with what was said in person.
  assertOk(await w.run('resume-subagent', ['--name', 'talk', '--prompt', `REPLY:${third}`]));
  const three = await w.wait('talk');
  assert.deepEqual(
    [three.run, three.outcome, three.sessionId, three.attached],
    [3, 'succeeded', one.sessionId, false],
    `${three.error} ${stderrTail(w.box.registry, 'talk', 3)}`,
  );
  const request = w.srv.modelRequests().find((r) => JSON.stringify(r.body).includes(third));
  assert.ok(request, 'the resume reached the model');
  assert.ok(JSON.stringify(request.body).includes(said), 'the model saw what the person said in the session');
}

for (const cli of ['claude', 'codex'] as const satisfies readonly CliName[]) {
  test(`${cli}: attach steps into the run's session in its own TUI; the person's turn is the next run; result --since and the next resume carry it`, async (t) => {
    await attachScenario(t, cli);
  });
}
