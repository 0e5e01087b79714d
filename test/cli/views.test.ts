// The views for people — `status --format table` and `status --watch` — in a REAL pseudo-terminal: a
// private tmux server (socket in this file's sandbox) runs bin/status in a window of a chosen size, and
// the pane is captured as the terminal shows it (with -e: with its colour escapes). Wrapping is judged by
// the terminal itself: a row longer than the window wraps, and `capture-pane -J` then joins it, so a
// capture with and without -J differ.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { displayWidth } from '../../lib/views/width.js';
import { BIN, ROOT } from '../support/paths.js';
import { LONG, until } from '../support/wait.js';
import { makeBox, MARK_KEY } from '../support/box.js';
import { gate, open, startShell, untilStatus, waitTerminal } from '../support/shell.js';
import { HAVE_TMUX, plain, Tmux, type PaneRun } from '../support/tmux.js';

const b = makeBox('views');
const tmux = new Tmux(b.dir, b.env);
after(() => tmux.close());

const HEADS = ['NAME', 'CLI', 'STATUS', 'RUN', 'ELAPSED', 'TOOLS', 'TOKENS/COST', 'MEM', 'LAST ACTIVITY'];
const RIGHT = new Set(['RUN', 'ELAPSED', 'TOOLS', 'TOKENS/COST', 'MEM']);
const LONG_NAME = 'v/a-rather-long-name-that-does-not-fit-narrow-terminals';
/** The child's description: CJK (2 columns each), a combining accent (0 columns), an emoji of the
 * 1F600 block, Hangul. Names are ASCII by rule; this is the free text the table shows. */
const DESC = '审查接口 naïve cafe\u0301 😀 한국어 ok';
/** Wide characters outside the 1F300–1F64F block: U+1F680 ROCKET, U+2705 WHITE HEAVY CHECK MARK
 * (East Asian Width W since Unicode 9) — two columns in the terminal. */
const DESC_WIDE = 'rocket 🚀🚀🚀🚀 check ✅✅✅✅ and the end of the description';

/** The environment a pane gets: the sandbox's, without colour switches unless a test sets them. */
function paneEnv(extra: Record<string, string | undefined> = {}): Record<string, string | undefined> {
  return {
    PATH: b.env.PATH,
    HOME: b.env.HOME,
    SUBAGENT_DIR: b.registry,
    [MARK_KEY]: b.dir,
    NO_COLOR: undefined,
    COLUMNS: undefined,
    LINES: undefined,
    ...extra,
  };
}

/** Runs `bin/status ARGS` in a cols×rows terminal and waits for it to exit 0; returns the pane. */
async function paneOf(args: string[], cols: number, env: Record<string, string | undefined> = {}, rows = 30): Promise<PaneRun> {
  const p = tmux.run([join(BIN, 'status'), ...args], { cols, rows, env: paneEnv(env), cwd: b.dir });
  const code = await tmux.waitDone(p);
  assert.equal(code, 0, `status ${args.join(' ')} exited ${code}: ${tmux.capture(p).join('\n')}`);
  return p;
}

/** Cells of a row separated by runs of two or more spaces, with display-column spans. */
function spans(line: string): Array<{ text: string; start: number; end: number }> {
  const out: Array<{ text: string; start: number; end: number }> = [];
  let col = 0;
  let cur: { text: string; start: number; end: number } | null = null;
  let spaces = 0;
  for (const ch of line) {
    if (ch === ' ') {
      spaces++;
      if (cur && spaces >= 2) {
        out.push(cur);
        cur = null;
      }
    } else {
      if (cur && spaces === 1) cur.text += ' ';
      if (!cur) cur = { text: '', start: col, end: col };
      cur.text += ch;
      spaces = 0;
    }
    col += displayWidth(ch);
    if (cur && ch !== ' ') cur.end = col;
  }
  if (cur) out.push(cur);
  return out;
}

const isChild = (l: string) => l.startsWith('  └ ');

/** The table's last line: the runs by state and the registry's size (cut to the width with "…"). */
const SUMMARY = /^\d+ runs?: \d+ running · \d+ queued · \d+ succeeded · \d+ failed.* · registry \d+(\.\d)?[BKMG]?$|^\d+ runs?: .*…$/;

/** The table's rows, its summary line asserted and left off. */
function tableRows(lines: string[], ctx: string): string[] {
  assert.match(lines.at(-1) ?? '', SUMMARY, `${ctx}: the summary line last:\n${lines.join('\n')}`);
  return lines.slice(0, -1);
}

/** Every run row has one cell per header cell; left columns start where their head starts, right
 * (numeric) columns end where their head ends — all in display columns. Returns the heads. */
function assertAligned(lines: string[], ctx: string): string[] {
  const head = spans(lines[0]!);
  const heads = head.map((h) => h.text);
  for (const row of lines.slice(1)) {
    if (isChild(row)) continue;
    const cells = spans(row);
    assert.equal(cells.length, head.length, `${ctx}: row ${JSON.stringify(row)} has ${cells.length} cells for ${head.length} columns\n${lines.join('\n')}`);
    cells.forEach((c, i) => {
      const h = head[i]!;
      if (RIGHT.has(h.text))
        assert.equal(c.end, h.end, `${ctx}: ${h.text} cell ${JSON.stringify(c.text)} ends at column ${c.end}, the head at ${h.end}\n${lines.join('\n')}`);
      else
        assert.equal(
          c.start,
          h.start,
          `${ctx}: ${h.text} cell ${JSON.stringify(c.text)} starts at column ${c.start}, the head at ${h.start}\n${lines.join('\n')}`,
        );
    });
  }
  return heads;
}

/** The terminal did not wrap any row: joining wrapped rows (-J) changes nothing. */
function assertNoWrap(p: PaneRun, cols: number, ctx: string): string[] {
  const rows = tmux.capture(p).map((l) => l.trimEnd());
  const joined = tmux.capture(p, { joined: true }).map((l) => l.trimEnd());
  assert.deepEqual(joined, rows, `${ctx}: a row wider than ${cols} columns wrapped in the terminal`);
  for (const r of rows) assert.ok(displayWidth(r) <= cols, `${ctx}: ${JSON.stringify(r)} is ${displayWidth(r)} columns wide, the terminal ${cols}`);
  return tableRows(rows, ctx);
}

/** A fake `claude` on PATH that replays a captured stream (a run with one sub-agent), the child's
 * description replaced. */
function fakeClaude(label: string, description: string): Record<string, string> {
  const dir = join(b.dir, `fakebin-${label}`);
  mkdirSync(dir, { recursive: true });
  const fixture = readFileSync(join(ROOT, 'test', 'fixtures', 'agents', 'claude', 'task-subagent.ndjson'), 'utf8');
  assert.ok(fixture.includes('"fake subtask"'), 'the fixture names its child "fake subtask"');
  const edited = fixture.split('"fake subtask"').join(JSON.stringify(description));
  writeFileSync(join(dir, 'stream.ndjson'), edited);
  writeFileSync(join(dir, 'claude'), `#!/bin/sh\ncat '${join(dir, 'stream.ndjson')}'\n`);
  chmodSync(join(dir, 'claude'), 0o755);
  return { PATH: `${dir}:${b.env.PATH}` };
}

const gateGoing = join(b.dir, 'gate-going');

// Without tmux the views go untested: a skip on a developer's machine, a failure in CI (CI set), where
// `make test` has installed it (test/setup-tools.sh) — a CI that cannot is not testing the terminal.
const NO_TMUX = 'tmux is not installed (test/setup-tools.sh installs it)';
test('tmux is there to run the terminal views (required when CI is set)', { skip: !HAVE_TMUX && !process.env.CI ? NO_TMUX : false }, () => {
  assert.ok(HAVE_TMUX, `${NO_TMUX}; with CI=${process.env.CI} the terminal tests must run, not skip`);
});

describe('status --format table and --watch in a real terminal', { skip: HAVE_TMUX ? false : NO_TMUX }, () => {
  before(async () => {
    startShell(b, 'v/ok', 'echo fine');
    startShell(b, 'v/bad', 'echo broken >&2; exit 3');
    startShell(b, LONG_NAME, 'echo long');
    startShell(b, 'v/going', gate(gateGoing));
    const env = fakeClaude('cjk', DESC);
    const s = b.run('start-subagent', ['--cli', 'claude', '--name', 'v/cc', '--prompt', 'TASK: x'], { env });
    assert.equal(s.code, 0, s.stdout + s.stderr);
    const env2 = fakeClaude('wide', DESC_WIDE);
    const s2 = b.run('start-subagent', ['--cli', 'claude', '--name', 'e/wide', '--prompt', 'TASK: x'], { env: env2 });
    assert.equal(s2.code, 0, s2.stdout + s2.stderr);
    const done = waitTerminal(b, ['v/ok', 'v/bad', LONG_NAME, 'v/cc', 'e/wide']);
    assert.equal(done['v/ok'].outcome, 'succeeded');
    assert.equal(done['v/bad'].outcome, 'failed');
    assert.equal(done['v/cc'].outcome, 'succeeded');
    assert.equal(done['v/cc'].children[0]?.description, DESC, 'the child carries the edited description');
    assert.equal(done['e/wide'].children[0]?.description, DESC_WIDE);
    await untilStatus(b, 'v/going', (a) => a.status === 'running', 'running');
  });
  after(() => open(gateGoing));

  test('on a TTY: the header, one aligned row per run, the child indented under its run, colour', async () => {
    const cols = 160;
    const p = await paneOf(['--format', 'table', '--prefix', 'v'], cols);
    const rows = assertNoWrap(p, cols, 'wide terminal');
    const heads = assertAligned(rows, 'wide terminal');
    assert.deepEqual(heads, HEADS, rows.join('\n'));
    // Sorted by name, the child right under its run.
    const names = rows.slice(1).map((r) => (isChild(r) ? '(child)' : spans(r)[0]!.text));
    assert.deepEqual(names, [LONG_NAME, 'v/bad', 'v/cc', '(child)', 'v/going', 'v/ok'], rows.join('\n'));
    const byName = (n: string) => spans(rows.find((r) => !isChild(r) && spans(r)[0]!.text === n)!);
    const cell = (n: string, h: string) => byName(n)[HEADS.indexOf(h)]!.text;
    assert.equal(cell('v/ok', 'STATUS'), 'succeeded');
    assert.equal(cell('v/bad', 'STATUS'), 'failed (exit-code)', 'a failure says why, briefly');
    assert.equal(cell('v/going', 'STATUS'), 'running');
    assert.equal(cell('v/cc', 'CLI'), 'claude');
    assert.equal(cell('v/ok', 'CLI'), 'shell');
    assert.equal(cell('v/ok', 'RUN'), '1');
    assert.equal(cell('v/cc', 'TOOLS'), '1');
    assert.match(cell('v/cc', 'TOKENS/COST'), /^\d+(\.\d)?k \$\d+\.\d+$/, 'tokens and cost of the claude run');
    assert.equal(cell('v/ok', 'TOKENS/COST'), '-');
    assert.match(cell('v/going', 'MEM'), /^(\d+(\.\d)?[KMG]|-)$/, 'the memory of the running run, once sampled');
    assert.match(cell('v/going', 'ELAPSED'), /^\d+s$|^\d+m\d\ds$/);
    assert.match(cell('v/ok', 'LAST ACTIVITY'), /^\d+[smhd] ago$/);
    // The child: indented, with its id, its full non-ASCII description, its status and CLI.
    const child = rows[rows.findIndex((r) => !isChild(r) && r.startsWith('v/cc ')) + 1]!;
    assert.ok(isChild(child), child);
    assert.ok(child.includes(`a205944a1b4de9572 ${DESC} (done, claude)`), `child row: ${JSON.stringify(child)}`);
    assert.equal(displayWidth(DESC), 8 + 7 + 4 + 0 + 1 + 2 + 1 + 6 + 3, 'CJK, Hangul and the emoji count 2, the combining accent 0');

    // Colour: the terminal saw SGR escapes — bold header, green succeeded, red failed, cyan running.
    const esc = tmux.capture(p, { escapes: true });
    assert.deepEqual(esc.map((l) => plain(l).trimEnd()).slice(0, -1), rows, 'the escapes are only colour');
    const sgr = (n: number, word: string) => new RegExp(`\\x1b\\[(?:[0-9;]*;)?${n}m${word}`);
    assert.match(esc[0]!, /\x1b\[(?:[0-9;]*;)?1mNAME/, 'bold header');
    assert.match(esc.find((l) => plain(l).startsWith('v/ok '))!, sgr(32, 'succeeded'));
    assert.match(esc.find((l) => plain(l).startsWith('v/bad '))!, sgr(31, 'failed'));
    assert.match(esc.find((l) => plain(l).startsWith('v/going '))!, sgr(36, 'running'));
  });

  test('NO_COLOR=1 (and TERM=dumb) on a TTY: the same table, not one escape', async () => {
    const cols = 160;
    for (const env of [{ NO_COLOR: '1' }, { TERM: 'dumb' }]) {
      const what = JSON.stringify(env);
      const p = await paneOf(['--format', 'table', '--prefix', 'v'], cols, env);
      const esc = tmux.capture(p, { escapes: true });
      assert.ok(esc.length >= 7, `${what}: ${esc.join('\n')}`);
      for (const l of esc) assert.ok(!l.includes('\x1b'), `${what}: an escape in ${JSON.stringify(l)}`);
      const rows = assertNoWrap(p, cols, what);
      assert.deepEqual(assertAligned(rows, what), HEADS);
    }
  });

  test('piped (not a TTY): no escapes, nothing cut; COLUMNS sizes it', () => {
    const r = b.run('status', ['--format', 'table', '--prefix', 'v'], { env: { COLUMNS: undefined } });
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.ok(!r.stdout.includes('\x1b'), `escapes in piped output: ${JSON.stringify(r.stdout)}`);
    assert.ok(r.stdout.endsWith('\n'));
    const rows = tableRows(r.stdout.slice(0, -1).split('\n'), 'piped');
    assert.deepEqual(assertAligned(rows, 'piped'), HEADS);
    assert.equal(rows.length, 7, r.stdout);
    assert.ok(
      rows.some((l) => l.startsWith(LONG_NAME + ' ')),
      'the long name is not cut',
    );
    assert.ok(
      rows.some((l) => isChild(l) && l.includes(DESC)),
      'the child with its description',
    );

    const n = b.run('status', ['--format', 'table', '--prefix', 'v'], { env: { COLUMNS: '40' } });
    assert.equal(n.code, 0, n.stdout + n.stderr);
    const nrows = tableRows(n.stdout.slice(0, -1).split('\n'), 'piped, COLUMNS=40');
    const heads = assertAligned(nrows, 'piped, COLUMNS=40');
    assert.ok(heads.includes('NAME') && heads.includes('STATUS'), heads.join(','));
    for (const l of nrows) assert.ok(displayWidth(l) <= 40, `${JSON.stringify(l)} is wider than COLUMNS=40`);
  });

  test('a narrow terminal (40 columns): less important columns dropped, NAME and STATUS kept, nothing wider than the window', async () => {
    for (const cols of [40, 60, 24]) {
      const ctx = `${cols} columns`;
      const p = await paneOf(['--format', 'table', '--prefix', 'v'], cols);
      const rows = assertNoWrap(p, cols, ctx);
      const heads = assertAligned(rows, ctx);
      assert.ok(heads.includes('NAME') && heads.includes('STATUS'), `${ctx}: ${heads.join(',')}`);
      assert.ok(heads.length < HEADS.length, `${ctx}: some column is dropped: ${heads.join(',')}`);
      assert.ok(!heads.includes('TOKENS/COST'), `${ctx}: the least important column goes first`);
      // The kept columns keep their order and are the most important ones.
      assert.deepEqual(
        heads,
        HEADS.filter((h) => heads.includes(h)),
        ctx,
      );
      const keep = ['NAME', 'STATUS', 'ELAPSED', 'LAST ACTIVITY', 'CLI', 'RUN', 'TOOLS', 'MEM', 'TOKENS/COST'];
      assert.deepEqual([...heads].sort(), keep.slice(0, heads.length).sort(), `${ctx}: dropped from the least important end`);
      assert.equal(rows.length, 7, `${ctx}: one row per run and the child:\n${rows.join('\n')}`);
      // The long name is cut with "…"; every status is still readable (a failure without its reason: the
      // name and the outcome come first).
      const long = rows.find((r) => r.startsWith('v/a-rather'))!;
      assert.match(spans(long)[0]!.text, /…$/, `${ctx}: ${long}`);
      const st = heads.indexOf('STATUS');
      assert.deepEqual(
        rows
          .slice(1)
          .filter((r) => !isChild(r))
          .map((r) => spans(r)[st]!.text)
          .sort(),
        ['failed', 'running', 'succeeded', 'succeeded', 'succeeded'],
        ctx,
      );
      // The child row (CJK, emoji, a combining accent) is cut to the window by display width.
      const child = rows.find(isChild)!;
      assert.ok(child.endsWith('…'), `${ctx}: ${child}`);
      assert.ok(displayWidth(child) >= cols - 2 && displayWidth(child) <= cols, `${ctx}: the cut child row uses the width: ${displayWidth(child)}`);
    }
  });

  test('a pseudo-terminal that reports 0×0 (`script` run without a terminal, as in CI) is not 0 columns wide', () => {
    // script(1) copies the size of its own stdin when that is a terminal; here it is a pipe, so the
    // pty says 0 rows, 0 columns — "unknown", like a terminal that never set its size.
    const r = spawnSync('script', ['-qfec', `${join(BIN, 'status')} --format table --name v/ok`, '/dev/null'], {
      cwd: b.dir,
      env: { ...b.env, COLUMNS: undefined, LINES: undefined, NO_COLOR: '1' },
      input: '',
      encoding: 'utf8',
      timeout: LONG,
    });
    assert.equal(r.status, 0, r.stdout + r.stderr);
    const rows = tableRows(r.stdout.replace(/\r/g, '').trimEnd().split('\n'), 'pty of size 0x0');
    assert.equal(rows.length, 2, r.stdout);
    // One short row fits any real terminal (80 columns when the size is unknown): every column shows.
    assert.deepEqual(assertAligned(rows, 'pty of size 0x0'), HEADS, `the table was sized for 0 columns:\n${r.stdout}`);
  });

  test('wide emoji outside U+1F300–1F64F (🚀 U+1F680, ✅ U+2705) are measured as the terminal shows them', async () => {
    const cols = 40;
    const p = await paneOf(['--format', 'table', '--prefix', 'e'], cols);
    const rows = assertNoWrap(p, cols, 'child with wide emoji');
    assert.ok(rows.some(isChild), rows.join('\n'));
    // And the whole description, unwrapped, measures as wide as the terminal draws it.
    assert.equal(displayWidth('🚀✅'), 4, 'displayWidth of two wide emoji');
  });

  test('--watch 1 --prefix P redraws in place until every run is terminal, with the summary line', async () => {
    const g1 = join(b.dir, 'gate-w1');
    const g2 = join(b.dir, 'gate-w2');
    startShell(b, 'w/one', `${gate(g1)}; echo one`);
    startShell(b, 'w/two', `${gate(g2)}; exit 2`);
    startShell(b, 'w/three', `${gate(g2)}; echo three`);
    for (const n of ['w/one', 'w/two', 'w/three']) await untilStatus(b, n, (a) => a.status === 'running', 'running');

    const cols = 120;
    const p = tmux.run([join(BIN, 'status'), '--watch', '1', '--prefix', 'w'], { cols, rows: 30, env: paneEnv(), cwd: b.dir });
    const screen = () => tmux.capture(p).map((l) => l.trimEnd());
    const first = await until(
      'the first frame: 3 running',
      () => {
        const s = screen();
        return s.at(-1) === '3 runs: 3 running · 0 queued · 0 succeeded · 0 failed' ? s : undefined;
      },
      LONG,
      50,
    );
    assert.deepEqual(assertAligned(first.slice(0, -1), 'watch, first frame'), HEADS);
    assert.equal(first.length, 5, `header, 3 rows, summary:\n${first.join('\n')}`);
    assert.ok(!existsSync(p.doneFile), 'the watch is still going');
    // A later frame (the view is redrawn at least every second: elapsed / last activity move on).
    const later = await until(
      'a redrawn frame',
      () => {
        const s = screen();
        return s.join('\n') !== first.join('\n') && s.at(-1)?.includes('3 running') ? s : undefined;
      },
      LONG,
      50,
    );
    assert.equal(later.length, 5, `redrawn in place:\n${later.join('\n')}`);
    // In place: one table on the screen, and the cursor back under it (appending would push it down).
    const heads = (lines: string[]) => lines.filter((l) => /^NAME\s/.test(l)).length;
    const summaries = (lines: string[]) => lines.filter((l) => /^\d+ runs?: /.test(l)).length;
    assert.equal(heads(later), 1, later.join('\n'));
    assert.equal(summaries(later), 1, later.join('\n'));
    // (Polled: a redraw in progress has the cursor at the top for an instant.)
    await until('the cursor under the one table (row 5)', () => tmux.display(p, '#{cursor_y}') === '5', LONG, 20);

    open(g1);
    await until('one succeeded', () => screen().at(-1) === '3 runs: 2 running · 0 queued · 1 succeeded · 0 failed', LONG, 50);
    assert.ok(!existsSync(p.doneFile), 'the watch goes on while runs are running');
    open(g2);
    const code = await tmux.waitDone(p);
    assert.equal(code, 0, 'the watch exits 0 once every run is terminal, whatever the outcomes');
    const last = screen();
    assert.equal(last.at(-1), '3 runs: 0 running · 0 queued · 2 succeeded · 1 failed', last.join('\n'));
    assert.equal(last.length, 5, last.join('\n'));
    assertAligned(last.slice(0, -1), 'watch, final frame');
    const status = Object.fromEntries(last.slice(1, -1).map((r) => [spans(r)[0]!.text, spans(r)[2]!.text]));
    assert.deepEqual(status, { 'w/one': 'succeeded', 'w/three': 'succeeded', 'w/two': 'failed (exit-code)' });
    assert.equal(heads(last), 1, `no stale table left on the screen:\n${last.join('\n')}`);
    assert.equal(summaries(last), 1, last.join('\n'));
    assert.equal(tmux.display(p, '#{cursor_y}'), '5', 'the final frame is drawn where the first one was');
    const esc = tmux.capture(p, { escapes: true });
    assert.ok(
      esc.some((l) => /\x1b\[(?:[0-9;]*;)?32msucceeded/.test(l)),
      'coloured on the TTY',
    );
    assert.ok(esc.some((l) => /\x1b\[(?:[0-9;]*;)?31mfailed/.test(l)));
  });

  test('--watch with nothing selected yet keeps waiting for runs to appear, and says so (docs/verbs/subagent-status.md)', async () => {
    const p = tmux.run([join(BIN, 'status'), '--watch', '1', '--prefix', 'later'], { cols: 200, rows: 30, env: paneEnv(), cwd: b.dir });
    const screen = () => tmux.capture(p).map((l) => l.trimEnd());
    const waiting = `waiting for runs named later/… to appear in ${b.registry} (Ctrl-C stops the watch)`;
    await until('the first frame, saying what it waits for', () => screen().includes(waiting), LONG, 50);
    startShell(b, 'later/one', 'echo late');
    const code = await tmux.waitDone(p);
    assert.equal(code, 0);
    const last = screen();
    assert.equal(last.at(-1), '1 run: 0 running · 0 queued · 1 succeeded · 0 failed', `the watch ended before the run appeared:\n${last.join('\n')}`);
    waitTerminal(b, ['later/one']);
  });

  test('--watch when piped: each frame appended (no cursor movement), the last one final', async () => {
    const g = join(b.dir, 'gate-pw');
    startShell(b, 'pw/one', `${gate(g)}; echo one`);
    await untilStatus(b, 'pw/one', (a) => a.status === 'running', 'running');
    const watching = b.runAsync('status', ['--watch', '1', '--prefix', 'pw'], { env: { COLUMNS: undefined } });
    open(g);
    const r = await watching;
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.ok(!r.stdout.includes('\x1b'), 'no escapes when piped');
    // Frames one after the other, a blank line between them; each a header, the row, the summary.
    const frames = r.stdout.trimEnd().split('\n\n');
    for (const f of frames) {
      const l = f.split('\n');
      assert.equal(l.length, 3, `a frame: ${JSON.stringify(f)}`);
      assert.deepEqual(assertAligned(l.slice(0, 2), 'piped frame'), HEADS);
      assert.match(l[2]!, /^1 run: /);
    }
    assert.equal(frames.at(-1)!.split('\n').at(-1), '1 run: 0 running · 0 queued · 1 succeeded · 0 failed', r.stdout);
    for (const f of frames.slice(0, -1)) assert.match(f, /1 run: 1 running/, 'only the last frame is final');
  });
});
