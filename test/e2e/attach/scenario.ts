// subagent-attach as a person uses it, for any CLI (issue 28, point 2): the REAL pinned CLI, in its
// interactive mode, in a real terminal (a private tmux server), against its fake model server. A run is
// started as an orchestrator starts it; the person steps into its session, types a prompt into the CLI's
// own TUI, reads the answer and leaves; that turn is the name's next run (attached, its transcript and
// usage from the CLI's store), `result --since` gives it to the orchestrator, and the orchestrator's next
// resume continues the same session with it — the model sees what the person said. Each CLI's own screens
// are its `Person` row.
import type { TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fakeWorld, uniq, type World } from '../../fakes/world.js';
import type { CliName } from '../../fakes/env.js';
import { BIN } from '../../support/paths.js';
import { HAVE_TMUX, Tmux } from '../../support/tmux.js';
import { leaveWith, submitUntil, typeUntilShown, untilScreen } from '../../support/screen.js';
import { assertOk } from '../../support/run.js';
import { stderrTail } from '../../support/registry.js';

/** What a person does with one CLI's TUI. */
export interface Person {
  /** What they have done once on their machine before using it interactively (onboarding, trust…), in its config. */
  prepare(w: World): void;
  /** The TUI is waiting for their prompt. */
  ready: RegExp;
  /** The key that leaves it (pressed until it has left: some CLIs ask for it twice). */
  leave: string;
  /** Before they step in (run 1 done: its status record). */
  beforeAttach?(w: World, one: any): void;
  /** While they are in the session (run 2 held), before they type. */
  whileAttached?(w: World, one: any): Promise<void>;
  /** Once their turn is recorded (run 2 done), before the orchestrator's resume. */
  afterAttach?(w: World, one: any): Promise<void>;
}

/**
 * A person's terminal: the suite's environment without the marks of a CI job, which the suite has in CI.
 * Gemini CLI takes CI=true or GITHUB_ACTIONS=true for a headless run ("No input provided via stdin"), and
 * Qwen Code any set CI, CONTINUOUS_INTEGRATION or CI_* for a terminal it does not draw in (docs/attach.md).
 */
function personTerminal(env: NodeJS.ProcessEnv): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = { ...env };
  for (const k of Object.keys(env)) if (k === 'CI' || k === 'CONTINUOUS_INTEGRATION' || k === 'GITHUB_ACTIONS' || k.startsWith('CI_')) out[k] = undefined;
  return out;
}

/** What the scenario leaves for a test's own checks: the world, and the session's id. */
export interface Attached {
  w: World;
  sessionId: string;
}

export async function attachScenario(t: TestContext, cli: CliName, person: Person): Promise<Attached | null> {
  if (!HAVE_TMUX) {
    if (process.env.CI) assert.fail('tmux is needed (test/setup-tools.sh installs it)');
    t.skip('tmux is not installed');
    return null;
  }
  const w = await fakeWorld(t, cli);
  if (!w) return null;
  const first = uniq(`${cli}-first`);
  const said = uniq(`${cli}-said-in-person`);
  const third = uniq(`${cli}-third`);
  await w.start('talk', `REPLY:${first}`);
  const one = await w.wait('talk');
  assert.equal(one.outcome, 'succeeded', one.error);
  person.prepare(w);
  person.beforeAttach?.(w, one);

  const tmux = new Tmux(w.box.dir, w.box.env);
  t.after(() => tmux.close());
  const out = join(w.box.dir, 'attach.json');
  // stdout taken by a file, as a script would: the CLI draws on the terminal through stderr.
  const p = tmux.run(['sh', '-c', `exec '${join(BIN, 'attach')}' --name talk > '${out}'`], {
    cols: 120,
    rows: 40,
    env: { ...personTerminal(w.box.env), TERM: 'xterm-256color' },
    cwd: w.cwd,
  });
  await untilScreen(tmux, p, 'the session open on its earlier turn', (s) => s.includes(first) && person.ready.test(s));
  // The name is held while the person is in it.
  const held = assertOk(await w.run('status', ['--name', 'talk'])).agents[0];
  assert.deepEqual([held.run, held.status, held.attached], [2, 'running', true]);
  const busy = await w.run('resume-subagent', ['--name', 'talk', '--prompt', 'REPLY:not now']);
  assert.equal(busy.json?.code, 'E_AGENT_BUSY', busy.stdout);
  await person.whileAttached?.(w, one);

  await typeUntilShown(tmux, p, `REPLY:${said}`, said);
  await submitUntil(tmux, p, 'the answer to what the person typed', (s) => s.split(said).length >= 3);
  await leaveWith(tmux, p, person.leave);
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
  await person.afterAttach?.(w, one);

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
  return { w, sessionId: one.sessionId };
}
