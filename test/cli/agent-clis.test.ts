// test-order: early — one of the longest files (every CLI's stream, through fakes): started first (scripts/test.sh).
/**
 * The core's handling of the real agent CLIs' streams, through the real verbs with fake `claude`,
 * `codex`, `opencode`, `copilot`, `gemini` and `qwen` programs on PATH that replay captured streams (test/fixtures/agents/) and add
 * what real CLIs sometimes print: non-JSON noise, a line longer than the 16 MiB line limit, a torn last
 * line. Also: a CLI missing from PATH is refused before anything is recorded (start and resume), and a
 * child id that is not the name's is E_CHILD_NOT_FOUND for every CLI with children; a child the stream left
 * running is recorded cancelled when its run was cancelled.
 * The real programs are exercised in test/e2e/.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from '../support/paths.js';
import { assertError } from '../support/run.js';
import { runDirs } from '../support/registry.js';
import { makeBox, type Box } from '../support/box.js';
import { expectError, open, untilStatus, waitTerminal } from '../support/shell.js';

const FIXTURES = join(ROOT, 'test', 'fixtures', 'agents');
const CLIS = [
  { cli: 'claude', fixture: 'claude/plain-reply.ndjson', answer: 'hello world', sessionId: /^[0-9a-f-]{36}$/ },
  { cli: 'codex', fixture: 'codex/plain-reply.jsonl', answer: 'Hello from the fake model', sessionId: /^[0-9a-f-]{36}$/ },
  { cli: 'opencode', fixture: 'opencode/plain.jsonl', answer: 'hello from the fake model', sessionId: /^ses_/ },
  { cli: 'copilot', fixture: 'copilot/plain.jsonl', answer: 'hello from the fake model', sessionId: /^[0-9a-f-]{36}$/ },
  { cli: 'qwen', fixture: 'qwen/plain-reply.ndjson', answer: 'hello world', sessionId: /^[0-9a-f-]{36}$/ },
  { cli: 'gemini', fixture: 'gemini/plain.ndjson', answer: 'hello from the fake gemini model', sessionId: /^[0-9a-f-]{36}$/ },
] as const;
/** Over twice LineFollower.MAX_LINE (16 MiB): read in many pieces, still one skipped line. */
const OVERLONG = 2 * 16 * 1024 * 1024 + 1;

const box = makeBox('agent-clis');
const fakeBin = join(box.dir, 'fakebin');
mkdirSync(fakeBin, { recursive: true });
const withFakes = { PATH: `${fakeBin}:${box.env.PATH}` };
// PATH with node only (the verbs need it): none of the agent CLIs is on it.
const nodeOnly = join(box.dir, 'node-only');
mkdirSync(nodeOnly, { recursive: true });
symlinkSync(process.execPath, join(nodeOnly, 'node'));

/**
 * Installs a fake `program` whose run prints `body`'s output. Side commands (OpenCode's `db path` before
 * a run and `export` for a child) fail, so the core falls back to what the stream says.
 */
function fakeCli(program: string, body: string): void {
  const path = join(fakeBin, program);
  writeFileSync(path, `#!/bin/sh\ncase "$1" in db|export) exit 1;; esac\n${body}\n`);
  chmodSync(path, 0o755);
}

/**
 * A run's output: two noise lines, then (once `gate` exists) an over-long line if asked, the captured
 * stream, and a torn last line.
 */
function noisyStream(fixture: string, gate: string, overlong: boolean): string {
  return [
    `echo 'Warning: not JSON, printed by the CLI itself'`,
    `echo '{"broken":'`,
    `while [ ! -e '${gate}' ]; do sleep 0.05; done`,
    overlong ? `head -c ${OVERLONG} /dev/zero | tr '\\0' x; echo` : '',
    `cat '${join(FIXTURES, fixture)}'`,
    `printf '{"type":"torn last line'`,
  ].join('\n');
}

function runsOf(b: Box, name: string): number[] {
  return runDirs(b.registry)
    .filter((r) => r.record?.name === name)
    .map((r) => r.record.run)
    .sort();
}

for (const c of CLIS) {
  describe(`--cli ${c.cli} (a fake ${c.cli} on PATH)`, () => {
    const name = `noisy/${c.cli}`;

    test('noise, an over-long line and a torn last line are skipped and counted: status (live and at the end), result, search', async () => {
      const gate1 = join(box.dir, `gate-${c.cli}-1`);
      fakeCli(c.cli, noisyStream(c.fixture, gate1, true));
      const s = box.run('start-subagent', ['--cli', c.cli, '--name', name, '--prompt', 'say hello'], { env: withFakes });
      assert.equal(s.code, 0, s.stdout + s.stderr);
      // While the run waits at the gate, the supervisor has already counted the two noise lines.
      const live = await untilStatus(box, name, (a) => a.skippedLines === 2, 'skippedLines 2 while running');
      assert.equal(live.status, 'running');
      open(gate1);
      const a = waitTerminal(box, [name])[name];
      assert.equal(a.outcome, 'succeeded', a.error);
      assert.match(a.sessionId, c.sessionId);
      assert.equal(a.skippedLines, 4, 'two noise lines, one over-long line, one torn last line');

      const r = box.run('result', ['--name', name, '--json']);
      assert.equal(r.code, 0, r.stdout + r.stderr);
      assert.equal(r.json.lastAssistantText, c.answer, 'the lines after the over-long one are still read');
      assert.equal(r.json.skippedLines, 4);

      // A second run without the over-long line: search sums over both runs, result and status are per run.
      const gate2 = join(box.dir, `gate-${c.cli}-2`);
      fakeCli(c.cli, noisyStream(c.fixture, gate2, false));
      open(gate2);
      const rs = box.run('resume-subagent', ['--name', name, '--prompt', 'again'], { env: withFakes });
      assert.equal(rs.code, 0, rs.stdout + rs.stderr);
      const a2 = waitTerminal(box, [name])[name];
      assert.equal(a2.run, 2);
      assert.equal(a2.skippedLines, 3);
      assert.equal(box.run('result', ['--name', name, '--json']).json.skippedLines, 3);
      const since = box.run('result', ['--name', name, '--json', '--since', '0']);
      assert.deepEqual(
        since.json.runs.map((x: any) => x.skippedLines),
        [4, 3],
      );
      const history = box.run('status', ['--name', name, '--runs']);
      assert.deepEqual(
        history.json.runs.map((x: any) => x.skippedLines),
        [4, 3],
      );
      const found = box.run('search', ['--name', name, '--pattern', c.answer.split(' ').pop()!]);
      assert.equal(found.code, 0, found.stdout + found.stderr);
      assert.deepEqual([...new Set(found.json.matches.map((m: any) => m.run))], [1, 2]);
      assert.equal(found.json.skippedLines, 7);
    });

    test('not on PATH: start and resume are E_CMD_MISSING, and nothing is recorded', () => {
      const env = { PATH: nodeOnly };
      const e = expectError(box, 'start-subagent', ['--cli', c.cli, '--name', `missing/${c.cli}`, '--prompt', 'x'], 'E_CMD_MISSING', { env });
      assert.equal(e.details.program, c.cli);
      assert.deepEqual(runsOf(box, `missing/${c.cli}`), [], 'no directory for the name');
      const before = runsOf(box, name);
      assert.ok(before.length > 0, 'the previous test left runs to resume');
      expectError(box, 'resume-subagent', ['--name', name, '--prompt', 'x'], 'E_CMD_MISSING', { env });
      assert.deepEqual(runsOf(box, name), before, 'no new run directory');
    });
  });
}

test("a child id that is not the name's is E_CHILD_NOT_FOUND, for codex, opencode, copilot, gemini and qwen children (fixture streams)", async () => {
  const cases = [
    { cli: 'codex', fixture: 'codex/spawn-subagent.jsonl', child: '01a2007a-6c58-73d2-87b7-9908ebb79c3f' },
    { cli: 'opencode', fixture: 'opencode/task.jsonl', child: 'ses_dff5bec07ffeTWwDmTiFGv0naG' },
    { cli: 'copilot', fixture: 'copilot/task.jsonl', child: '9332245c-4384-4764-8158-453031591858' },
    { cli: 'qwen', fixture: 'qwen/agent-background.ndjson', child: 'general-purpose-call_fake_6845_6' },
    { cli: 'gemini', fixture: 'gemini/subagent.ndjson', child: 'invoke_agent__invoke_agent_1795560211608_0' },
  ];
  for (const c of cases) {
    fakeCli(c.cli, `cat '${join(FIXTURES, c.fixture)}'`);
    const s = box.run('start-subagent', ['--cli', c.cli, '--name', `kids/${c.cli}`, '--prompt', 'spawn a child'], { env: withFakes });
    assert.equal(s.code, 0, s.stdout + s.stderr);
  }
  const agents = waitTerminal(
    box,
    cases.map((c) => `kids/${c.cli}`),
  );
  for (const [i, c] of cases.entries()) {
    const name = `kids/${c.cli}`;
    assert.deepEqual(
      agents[name].children.map((k: any) => k.id),
      [c.child],
      `${name} lists its child`,
    );
    const own = box.run('result', ['--name', name, '--child', c.child, '--json'], { env: withFakes });
    assert.equal(own.code, 0, own.stdout + own.stderr);
    assert.equal(own.json.child, c.child);
    // Another CLI's child, and a made-up id: neither belongs to this name.
    for (const foreign of [cases[(i + 1) % cases.length]!.child, 'no-such-child']) {
      for (const verb of ['result', 'search'] as const) {
        const args = ['--name', name, '--child', foreign, ...(verb === 'search' ? ['--pattern', '.'] : [])];
        const e = assertError(box.run(verb, args, { env: withFakes }), 'E_CHILD_NOT_FOUND');
        assert.deepEqual(e.details.children, [c.child], `${verb} ${name} --child ${foreign}: the known children are listed`);
      }
    }
  }
});

test('a child the stream left running when its run is cancelled is recorded cancelled, even though the CLI then reports success (claude 2.1.331)', async () => {
  // Claude 2.1.331, SIGINT while a background child works: no end event for the child, then result/success
  // and exit 0 (test/fixtures/agents/claude/2.1.331/agent-slow-SIGINT.ndjson: its last line is the result).
  const fixture = join(FIXTURES, 'claude', '2.1.331', 'agent-slow-SIGINT.ndjson');
  fakeCli('claude', [`trap 'tail -n 1 "${fixture}"; exit 0' INT`, `head -n 13 '${fixture}'`, 'while :; do sleep 0.05; done'].join('\n'));
  const name = 'kids/cancelled';
  const s = box.run('start-subagent', ['--cli', 'claude', '--name', name, '--prompt', 'spawn a child'], { env: withFakes });
  assert.equal(s.code, 0, s.stdout + s.stderr);
  const live = await untilStatus(box, name, (a) => a.children.length === 1, 'the child listed');
  assert.deepEqual(
    live.children.map((k: any) => [k.id, k.status, k.statusSource]),
    [['a51c19559766113d9', 'running', 'stream']],
  );
  const c = box.run('cancel', ['--name', name], { env: withFakes });
  assert.equal(c.code, 0, c.stdout + c.stderr);
  assert.equal(c.json.signalSent, 'INT');
  const a = waitTerminal(box, [name])[name];
  assert.equal(a.outcome, 'cancelled');
  assert.equal(a.exitCode, 0, 'the fake printed the result line and exited 0 on SIGINT');
  assert.deepEqual(
    a.children.map((k: any) => [k.id, k.status, k.statusSource]),
    [['a51c19559766113d9', 'cancelled', 'inferred']],
  );
  assert.ok(a.children[0].finishedAt);
  const r = box.run('result', ['--name', name, '--child', 'a51c19559766113d9', '--json'], { env: withFakes });
  assert.equal(r.json.childStatus, 'cancelled');
});

test('a child the stream ends after the cancel was requested is recorded cancelled, even when the CLI says it completed (qwen 0.24.4)', async () => {
  // Under load the cancel's SIGTERM can reach the child's tool before Qwen itself: the child then ends and
  // Qwen reports it completed (test/fixtures/agents/qwen/sigterm-agent-background-completed.ndjson: its last
  // two lines are that end), then exits on its own SIGTERM.
  const fixture = join(FIXTURES, 'qwen', 'sigterm-agent-background-completed.ndjson');
  fakeCli('qwen', [`trap 'tail -n 2 "${fixture}"; exit 143' TERM`, `head -n 7 '${fixture}'`, 'while :; do sleep 0.05; done'].join('\n'));
  const name = 'kids/cancelled-qwen';
  const s = box.run('start-subagent', ['--cli', 'qwen', '--name', name, '--prompt', 'spawn a child'], { env: withFakes });
  assert.equal(s.code, 0, s.stdout + s.stderr);
  const live = await untilStatus(box, name, (a) => a.children.length === 1, 'the child listed');
  assert.deepEqual(
    live.children.map((k: any) => [k.id, k.status, k.statusSource]),
    [['general-purpose-call_fake_6845_42', 'running', 'stream']],
  );
  const c = box.run('cancel', ['--name', name], { env: withFakes });
  assert.equal(c.code, 0, c.stdout + c.stderr);
  assert.equal(c.json.signalSent, 'TERM');
  const a = waitTerminal(box, [name])[name];
  assert.equal(a.outcome, 'cancelled');
  assert.deepEqual(
    a.children.map((k: any) => [k.id, k.status, k.statusSource]),
    [['general-purpose-call_fake_6845_42', 'cancelled', 'inferred']],
  );
  assert.ok(Date.parse(a.children[0].finishedAt) >= Date.parse(a.children[0].startedAt));
});

test('a CLI that says why it failed on stderr only: copilot not signed in is failed with reason auth, its Error line in the error', () => {
  const said = join(FIXTURES, 'copilot', 'no-auth.stderr');
  fakeCli('copilot', `cat '${said}' >&2\nexit 1`);
  const name = 'noauth/copilot';
  const s = box.run('start-subagent', ['--cli', 'copilot', '--name', name, '--prompt', 'hello'], { env: withFakes });
  assert.equal(s.code, 0, s.stdout + s.stderr);
  const a = waitTerminal(box, [name], { env: withFakes })[name];
  assert.equal(a.outcome, 'failed');
  assert.equal(a.reason, 'auth');
  assert.equal(a.exitCode, 1);
  assert.equal(a.error, 'copilot exited with status 1; stderr: Error: No authentication information found.');
});
