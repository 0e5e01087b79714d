// subagent-dash as a person uses it: in a REAL pseudo-terminal (a private tmux server in this file's
// sandbox), typed into with send-keys and read with capture-pane, while runs start, end, fail and nest
// under it; cancel and resume from its keys, judged by the registry and the processes, not only the screen.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { displayWidth } from '../../lib/views/width.js';
import { BIN, ROOT } from '../support/paths.js';
import { makeBox, MARK_KEY } from '../support/box.js';
import { expectError, gate, open, resultText, startShell, statusOf, untilStatus, waitTerminalAsync } from '../support/shell.js';
import { HAVE_TMUX, plain, Tmux, type PaneRun } from '../support/tmux.js';
import { liveRunIds } from '../support/procs.js';
import { recordOf } from '../support/registry.js';
import { until } from '../support/wait.js';

const b = makeBox('dash');
const tmux = new Tmux(b.dir, b.env);
after(() => tmux.close());
const NO_TMUX = 'tmux is not installed (test/setup-tools.sh installs it)';

function paneEnv(extra: Record<string, string | undefined> = {}): Record<string, string | undefined> {
  return { PATH: b.env.PATH, HOME: b.env.HOME, SUBAGENT_DIR: b.registry, [MARK_KEY]: b.dir, NO_COLOR: undefined, TERM: 'xterm-256color', ...extra };
}

/** The dashboard in a cols×rows terminal. */
function dash(cols: number, rows: number, env: Record<string, string | undefined> = {}, args: string[] = []): PaneRun {
  return tmux.run([join(BIN, 'dash'), ...args], { cols, rows, env: paneEnv(env), cwd: b.dir });
}

/** Waits until the screen (its rows, escapes removed) satisfies `pred`; returns the rows. */
async function screen(p: PaneRun, what: string, pred: (rows: string[]) => boolean): Promise<string[]> {
  let last: string[] = [];
  try {
    return await until(
      what,
      () => {
        last = tmux.capture(p).map(plain);
        return pred(last) ? last : null;
      },
      60_000,
      50,
    );
  } catch (err) {
    throw new Error(`${(err as Error).message}; the screen:\n${last.join('\n')}`);
  }
}

const rowOf = (rows: string[], name: string) => rows.find((r) => new RegExp(`(^|[\\s─\`-])${name.replace(/\//g, '\\/')}\\s`).test(r));

describe('subagent-dash in a real terminal', { skip: HAVE_TMUX ? false : NO_TMUX }, () => {
  test('runs appear, end, fail and nest while it is open; cancel and resume from its keys; q gives the terminal back', async () => {
    const going = join(b.dir, 'gate-first');
    startShell(b, 'd/first', `echo first words; ${gate(going)}`);
    const p = dash(120, 24);
    let rows = await screen(p, 'd/first listed running', (r) => /running/.test(rowOf(r, 'd/first') ?? ''));
    assert.match(rows[0]!, /^subagents {2}\S+ {2}1 run: 1 running/);
    assert.match(rows[1]!, /NAME\s+CLI\s+STATUS\s+RUN\s+ELAPSED/);
    const kid = join(b.dir, 'gate-kid');
    startShell(b, 'd/parent', `${join(BIN, 'start-subagent')} --name d/parent/kid --cli shell --prompt "${gate(kid)}" >/dev/null; echo started`);
    startShell(b, 'd/fail', 'echo broken >&2; exit 3');
    rows = await screen(
      p,
      'the child under its parent, the failure',
      (r) => /failed \(exit-code\)/.test(rowOf(r, 'd/fail') ?? '') && /[└`]─? ?d\/parent\/kid/.test(r.join('\n')),
    );
    const at = (name: string) => rows.indexOf(rowOf(rows, name) ?? '');
    assert.equal(at('d/parent/kid'), at('d/parent') + 1, 'the child is listed under its parent');
    assert.ok(at('d/first') < at('d/fail'), 'work going on is listed before finished work');
    open(going);
    rows = await screen(p, 'd/first succeeded', (r) => /succeeded/.test(rowOf(r, 'd/first') ?? ''));
    // Cancel the child: filter to it, c, then y.
    tmux.send(p, ['/']);
    tmux.send(p, ['kid'], { literal: true });
    tmux.send(p, ['Enter']);
    await screen(p, 'only the child listed', (r) => r.some((l) => /^› .*d\/parent\/kid/.test(l)) && !rowOf(r, 'd/first'));
    tmux.send(p, ['c']);
    await screen(p, 'the confirmation', (r) => /cancel d\/parent\/kid\? y to cancel/.test(r.at(-1) ?? ''));
    tmux.send(p, ['y']);
    await screen(p, 'the child cancelled', (r) => /cancelled/.test(rowOf(r, 'd/parent/kid') ?? ''));
    assert.equal(statusOf(b, 'd/parent/kid').outcome, 'cancelled');
    const runId = recordOf(b.registry, 'd/parent/kid').runId;
    await until('nothing of the child left', () => !liveRunIds(b.dir).has(runId));
    // Esc clears the filter.
    tmux.send(p, ['Escape']);
    // Resume d/first with a typed prompt: the filter, Enter and r in one write, as a fast typist's come in
    // one read — r acts on the run the filter left, not on the one selected before (d/parent/kid).
    tmux.send(p, ['/', 'f', 'i', 'r', 's', 't', 'Enter', 'r']);
    await screen(p, 'the prompt line', (r) => /resume d\/first with: _/.test(r.at(-1) ?? ''));
    tmux.send(p, ['echo second words'], { literal: true });
    tmux.send(p, ['Enter']);
    const second = await untilStatus(b, 'd/first', (a) => a.run === 2 && a.status === 'done', 'run 2 done');
    assert.equal(second.outcome, 'succeeded');
    assert.equal(resultText(b, 'd/first'), 'second words\n');
    await screen(p, 'run 2 shown', (r) => /succeeded/.test(rowOf(r, 'd/first') ?? '') && /\s2\s/.test(rowOf(r, 'd/first') ?? ''));
    // Its conversation: both runs' prompts and answers, then back to the list.
    tmux.send(p, ['Enter']);
    rows = await screen(p, 'the conversation', (r) => r.some((l) => /second words$/.test(l)) && r.some((l) => /run 2/.test(l)));
    assert.match(rows[0]!, /^d\/first {2}run 2 {2}succeeded/);
    assert.ok(
      rows.some((l) => l.startsWith('› echo second words')),
      rows.join('\n'),
    );
    tmux.send(p, ['Escape']);
    await screen(p, 'back to the list', (r) => /NAME\s+CLI/.test(r[1] ?? ''));
    tmux.send(p, ['q']);
    assert.equal(await tmux.waitDone(p), 0);
    const after = tmux.capture(p).map(plain);
    assert.ok(!after.some((l) => l.startsWith('subagents ')), `the alternate screen was left: ${after.join('\n')}`);
    assert.equal(tmux.display(p, '#{alternate_on}'), '0');
    assert.equal(tmux.display(p, '#{cursor_flag}'), '1', 'the cursor is shown again');
  });

  test('a conversation streams while open; a run’s own sub-agents are listed under it and opened with Tab', async () => {
    const more = join(b.dir, 'gate-more');
    startShell(b, 's/stream', `echo line one; ${gate(more)}; echo line two`);
    const env = fakeClaude();
    const s = b.run('start-subagent', ['--cli', 'claude', '--name', 's/claude', '--prompt', 'TASK: x'], { env });
    assert.equal(s.code, 0, s.stdout + s.stderr);
    await waitTerminalAsync(b, ['s/claude']);
    const p = dash(100, 20, {}, ['--prefix', 's']);
    let rows = await screen(p, 'the sub-agent under its run', (r) => r.some((l) => /↳ \S+ fake subtask \(done, claude\)/.test(l)));
    assert.ok(!rows.some((l) => /d\/first/.test(l)), '--prefix s lists only s/…');
    // Open s/stream (listed first: it is at work), see its first line, then the second as it comes.
    tmux.send(p, ['g', 'Enter']);
    await screen(p, 'the first line', (r) => r.some((l) => l === 'line one'));
    open(more);
    rows = await screen(p, 'the second line, with no key pressed', (r) => r.some((l) => l === 'line two'));
    // The last row is s/claude's sub-agent; the one above it, s/claude.
    tmux.send(p, ['Escape', 'G', 'k', 'Enter']);
    rows = await screen(
      p,
      's/claude opened, its tool calls on one line each',
      (r) => /^s\/claude {2}run 1/.test(r[0] ?? '') && /sub-agents \(Tab\): \[all\]/.test(r[1] ?? '') && r.some((l) => /^⚙ /.test(l)),
    );
    assert.ok(
      rows.some((l) => l.startsWith('› TASK: x')),
      rows.join('\n'),
    );
    tmux.send(p, ['Tab']);
    rows = await screen(p, 'the sub-agent’s messages alone', (r) => /sub-agents \(Tab\): all {2}\[\S+ done\]/.test(r[1] ?? ''));
    tmux.send(p, ['C-c']);
    assert.equal(await tmux.waitDone(p), 0, 'Ctrl-C quits as q does');
  });

  test('narrow and wide terminals and a resize: nothing wraps, NAME and STATUS stay; plain ASCII on NO_COLOR and TERM=dumb', async () => {
    startShell(b, 'w/a-rather-long-name-for-a-narrow-terminal', 'echo x');
    await waitTerminalAsync(b, ['w/a-rather-long-name-for-a-narrow-terminal']);
    const p = dash(50, 16, {}, ['--prefix', 'w']);
    let rows = await screen(p, 'the narrow list', (r) => /STATUS/.test(r[1] ?? '') && r.some((l) => /succeeded/.test(l)));
    for (const r of tmux.capture(p, { joined: true }).map(plain)) assert.ok(displayWidth(r) <= 50, `${JSON.stringify(r)} is wider than 50`);
    assert.match(rows[1]!, /NAME/);
    assert.doesNotMatch(rows[1]!, /LAST ACTIVITY/, 'the least important columns dropped');
    tmux.resize(p, 140, 16);
    rows = await screen(p, 'the wide list after the resize', (r) => /LAST ACTIVITY/.test(r[1] ?? ''));
    tmux.send(p, ['q']);
    assert.equal(await tmux.waitDone(p), 0);
    for (const plainEnv of [{ NO_COLOR: '1' }, { TERM: 'dumb' }]) {
      const q = dash(100, 16, plainEnv, ['--name', 'd/parent', '--name', 'd/parent/kid']);
      await screen(q, 'the list', (r) => r.some((l) => /^> /.test(l)));
      const raw = tmux.capture(q, { escapes: true }).join('\n');
      assert.doesNotMatch(raw, /\x1b\[[0-9;]*m/, `no colour with ${JSON.stringify(plainEnv)}`);
      assert.doesNotMatch(plain(raw), /[^\x00-\x7f]/, `ASCII only with ${JSON.stringify(plainEnv)}`);
      assert.match(plain(raw), /`- d\/parent\/kid/);
      assert.doesNotMatch(plain(raw), /d\/first/, '--name lists those names only');
      tmux.send(q, ['q']);
      assert.equal(await tmux.waitDone(q), 0);
    }
  });
});

describe('subagent-dash outside a terminal', () => {
  test('no terminal: E_NOT_A_TERMINAL; bad flags: their codes; nothing changes', () => {
    const e = expectError(b, 'dash', [], 'E_NOT_A_TERMINAL');
    assert.match(e.details.hint, /subagent-status --format table/);
    expectError(b, 'dash', ['--prefix', '../x'], 'E_NAME_INVALID');
    expectError(b, 'dash', ['--colour'], 'E_ARG_UNKNOWN');
    expectError(b, 'dash', ['--name', 'a', '--prefix', 'b'], 'E_ARG_INVALID');
    const help = b.run('dash', ['--help']);
    assert.equal(help.code, 0);
    assert.match(help.stdout, /^usage: subagent-dash/);
  });
});

/** A fake `claude` on PATH that replays a captured stream with one sub-agent ("fake subtask"). */
function fakeClaude(): Record<string, string> {
  const dir = join(b.dir, 'fakebin');
  mkdirSync(dir, { recursive: true });
  const fixture = readFileSync(join(ROOT, 'test', 'fixtures', 'agents', 'claude', 'task-subagent.ndjson'), 'utf8');
  writeFileSync(join(dir, 'stream.ndjson'), fixture);
  writeFileSync(join(dir, 'claude'), `#!/bin/sh\ncat '${join(dir, 'stream.ndjson')}'\n`);
  chmodSync(join(dir, 'claude'), 0o755);
  return { PATH: `${dir}:${b.env.PATH}` };
}
