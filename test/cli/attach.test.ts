// subagent-attach through the executable, with a fake `claude` whose interactive mode (`claude --resume ID`
// without -p) reads what the person types in the terminal and appends the turn to the session's file, as
// Claude Code does: in a real terminal (tmux). The real Claude Code and Codex: test/e2e/attach.test.ts.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { FIXTURES, BIN } from '../support/paths.js';
import { makeBox, MARK_KEY } from '../support/box.js';
import { assertOk } from '../support/run.js';
import { expectError, startShell, statusOf, untilStatus, waitTerminalAsync } from '../support/shell.js';
import { HAVE_TMUX, plain, Tmux, type PaneRun } from '../support/tmux.js';
import { pidAlive } from '../support/procs.js';
import { recordOf } from '../support/registry.js';
import { until } from '../support/wait.js';

const b = makeBox('attach');
const tmux = new Tmux(b.dir, b.env);
after(() => tmux.close());
const config = join(b.dir, 'claude-config');
const fakeBin = join(b.dir, 'fakebin');
mkdirSync(fakeBin, { recursive: true });

/**
 * The fake: with -p, the captured stream of a plain reply; with `--resume ID` alone, a TUI of one line:
 * it prints a prompt sign, reads a line, appends the person's line and an answer (with usage) to
 * `$CLAUDE_CONFIG_DIR/projects/<slug>/ID.jsonl`, prints the answer and waits for "bye" to leave.
 */
writeFileSync(
  join(fakeBin, 'claude'),
  `#!/bin/sh
for a in "$@"; do [ "$a" = "-p" ] && { cat >/dev/null; exec cat '${join(FIXTURES, 'agents', 'claude', 'plain-reply.ndjson')}'; }; done
[ "$1" = "--resume" ] || exit 9
d="$CLAUDE_CONFIG_DIR/projects/$(pwd | sed 's/[^A-Za-z0-9]/-/g')"; mkdir -p "$d"; f="$d/$2.jsonl"
echo "$$" > '${join(b.dir, 'tui.pid')}'
printf 'fake claude on session %s\\n> ' "$2"
while read -r line; do
  [ "$line" = bye ] && exit 0
  printf '{"type":"user","message":{"role":"user","content":"%s"},"sessionId":"%s"}\\n' "$line" "$2" >> "$f"
  printf '{"type":"assistant","message":{"id":"m-%s","role":"assistant","content":[{"type":"text","text":"heard: %s"}],"usage":{"input_tokens":100,"output_tokens":7}},"sessionId":"%s"}\\n' "$$" "$line" "$2" >> "$f"
  printf 'heard: %s\\n> ' "$line"
done
`,
);
chmodSync(join(fakeBin, 'claude'), 0o755);
const env = { PATH: `${fakeBin}:${b.env.PATH}`, CLAUDE_CONFIG_DIR: config };

function paneEnv(): Record<string, string | undefined> {
  return { ...b.env, ...env, SUBAGENT_DIR: b.registry, [MARK_KEY]: b.dir, TERM: 'xterm-256color' };
}

/** subagent-attach --name NAME in a terminal, its JSON line into a file. */
function attachPane(name: string): { p: PaneRun; out: string } {
  const out = join(b.dir, `attach-${name.replace('/', '-')}-${Date.now()}.json`);
  const p = tmux.run(['sh', '-c', `exec '${join(BIN, 'attach')}' --name '${name}' > '${out}'`], { cols: 100, rows: 20, env: paneEnv(), cwd: b.dir });
  return { p, out };
}

async function screenHas(p: PaneRun, text: string): Promise<void> {
  await until(`the screen shows ${JSON.stringify(text)}`, () => tmux.capture(p).map(plain).join('\n').includes(text) || null, 60_000, 50);
}

async function lineOf(pane: { p: PaneRun; out: string }): Promise<any> {
  await tmux.waitDone(pane.p);
  return JSON.parse(readFileSync(pane.out, 'utf8'));
}

describe('subagent-attach', { skip: HAVE_TMUX ? false : 'tmux is not installed (test/setup-tools.sh installs it)' }, () => {
  test("the person's turn is the name's next run: held while they are in it, its transcript and usage after", async () => {
    assertOk(b.run('start-subagent', ['--name', 'a/talk', '--cli', 'claude', '--prompt', 'first'], { env }));
    const one = (await waitTerminalAsync(b, ['a/talk']))['a/talk'];
    assert.equal(one.outcome, 'succeeded');
    const pane = attachPane('a/talk');
    await screenHas(pane.p, `fake claude on session ${one.sessionId}`);
    const held = statusOf(b, 'a/talk');
    assert.deepEqual([held.run, held.status, held.attached], [2, 'running', true]);
    expectError(b, 'resume-subagent', ['--name', 'a/talk', '--prompt', 'not now'], 'E_AGENT_BUSY', { env });
    tmux.send(pane.p, ['the tests pass'], { literal: true });
    tmux.send(pane.p, ['Enter']);
    await screenHas(pane.p, 'heard: the tests pass');
    tmux.send(pane.p, ['bye', 'Enter']);
    const line = await lineOf(pane);
    assert.deepEqual(
      [line.ok, line.name, line.run, line.outcome, line.exitCode, line.sessionId, line.cli],
      [true, 'a/talk', 2, 'succeeded', 0, one.sessionId, 'claude'],
    );
    assert.equal(line.usage.outputTokens, 7);
    const two = statusOf(b, 'a/talk');
    assert.deepEqual([two.run, two.status, two.attached, two.usage.outputTokens], [2, 'done', true, 7]);
    const since = assertOk(b.run('result', ['--name', 'a/talk', '--since', '1', '--json']));
    assert.deepEqual(
      since.runs.map((r: any) => [r.run, r.lastAssistantText]),
      [[2, 'heard: the tests pass']],
    );
    const found = assertOk(b.run('search', ['--name', 'a/talk', '--pattern', 'tests pass']));
    assert.deepEqual(
      found.matches.map((m: any) => [m.run, m.index, m.role]),
      [
        [2, 1, 'user'],
        [2, 2, 'assistant'],
      ],
      'the person’s prompt first (no prompt of ours), then the answer',
    );
    assert.equal(recordOf(b.registry, 'a/talk', 2).attached, true);
    // The next resume is an ordinary run of the same session.
    assertOk(b.run('resume-subagent', ['--name', 'a/talk', '--prompt', 'again'], { env }));
    const three = (await waitTerminalAsync(b, ['a/talk']))['a/talk'];
    assert.deepEqual([three.run, three.outcome, three.attached, three.sessionId], [3, 'succeeded', false, one.sessionId]);
  });

  test('refused before anything is recorded: a running run, a CLI without an interactive session, an unknown name', async () => {
    const gate = join(b.dir, 'gate-busy');
    startShell(b, 'a/busy', `while [ ! -e '${gate}' ]; do sleep 0.05; done`);
    await untilStatus(b, 'a/busy', (a) => a.status === 'running', 'running');
    const busy = await lineOf(attachPane('a/busy'));
    assert.equal(busy.code, 'E_AGENT_BUSY', JSON.stringify(busy));
    writeFileSync(gate, '');
    await waitTerminalAsync(b, ['a/busy']);
    const shell = await lineOf(attachPane('a/busy'));
    assert.equal(shell.code, 'E_ARG_UNSUPPORTED', JSON.stringify(shell));
    assert.match(shell.details.hint, /resume-subagent/);
    const none = await lineOf(attachPane('a/none'));
    assert.equal(none.code, 'E_SESSION_NOT_FOUND', JSON.stringify(none));
    assert.equal(existsSync(join(b.registry, 'agents', 'a+busy', '2')), false, 'no run was recorded');
  });

  test('from subagent-dash: a steps into the selected run and back into the dashboard', async () => {
    assertOk(b.run('start-subagent', ['--name', 'a/dash', '--cli', 'claude', '--prompt', 'first'], { env }));
    await waitTerminalAsync(b, ['a/dash']);
    const p = tmux.run([join(BIN, 'dash'), '--name', 'a/dash'], { cols: 110, rows: 16, env: paneEnv(), cwd: b.dir });
    await screenHas(p, 'a attach');
    tmux.send(p, ['a']);
    await screenHas(p, 'fake claude on session');
    tmux.send(p, ['from the dashboard'], { literal: true });
    tmux.send(p, ['Enter']);
    await screenHas(p, 'heard: from the dashboard');
    tmux.send(p, ['bye', 'Enter']);
    await screenHas(p, 'a/dash: your turn is run 2, succeeded');
    assert.deepEqual([statusOf(b, 'a/dash').run, statusOf(b, 'a/dash').attached], [2, true]);
    tmux.send(p, ['q']);
    assert.equal(await tmux.waitDone(p), 0);
  });

  test('no terminal: E_NOT_A_TERMINAL; no --name: E_NAME_REQUIRED; nothing changes', () => {
    expectError(b, 'attach', ['--name', 'a/talk'], 'E_NOT_A_TERMINAL');
    expectError(b, 'attach', [], 'E_NAME_REQUIRED');
  });

  test('a SIGKILLed attach leaves its run unknown (its supervisor died), and the name resumable once the CLI is gone', async () => {
    assertOk(b.run('start-subagent', ['--name', 'a/killed', '--cli', 'claude', '--prompt', 'first'], { env }));
    await waitTerminalAsync(b, ['a/killed']);
    const pane = attachPane('a/killed');
    await screenHas(pane.p, 'fake claude on session');
    const attacher = await until('the attach recorded as the run’s supervisor', () => recordOf(b.registry, 'a/killed', 2).supervisor?.pid);
    process.kill(attacher, 'SIGKILL');
    const lost = await untilStatus(b, 'a/killed', (a) => a.status === 'unknown', 'unknown');
    assert.equal(lost.run, 2);
    const tui = Number(readFileSync(join(b.dir, 'tui.pid'), 'utf8'));
    tmux.send(pane.p, ['bye', 'Enter']);
    await until('the fake CLI gone', () => !pidAlive(tui) || null);
    assertOk(b.run('resume-subagent', ['--name', 'a/killed', '--prompt', 'after'], { env }));
    const three = (await waitTerminalAsync(b, ['a/killed']))['a/killed'];
    assert.deepEqual([three.run, three.outcome], [3, 'succeeded']);
  });
});
