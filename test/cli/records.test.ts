/**
 * Records of every shape ever written (test/fixtures/records/; its README.md says which commit wrote which
 * fields) read through the real executables: each loads, upgraded once into a whole record
 * (lib/registry/record.ts), and status and result render what it should. A record written by today's
 * code keeps its bytes when it is read and written back, as every update of a record does.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseRecord, serialiseRecord } from '../../lib/registry/record.js';
import { makeBox } from '../support/box.js';
import { FIXTURES } from '../support/paths.js';
import { runDirOf, runDirPath } from '../support/registry.js';
import { assertError, assertOk } from '../support/run.js';
import { gate, open, resultJson, startShell, statusOf, untilStatus, waitTerminal } from '../support/shell.js';

const box = makeBox('records');
const DIR = join(FIXTURES, 'records');
const FILES = readdirSync(DIR).filter((f) => /^\d\d-.*\.json$/.test(f));
/** Each shape's whole status entry, as the code before the upgrade on read (d67ed09) rendered it. */
const RENDERED: Record<string, unknown> = JSON.parse(readFileSync(join(DIR, 'entries.json'), 'utf8'));

/** The run of each fixture, placed in a registry a real start made (so the verbs trust it). */
startShell(box, 'made/here', 'true');
waitTerminal(box, ['made/here']);
for (const file of FILES) {
  const text = readFileSync(join(DIR, file), 'utf8');
  const record = JSON.parse(text);
  const dir = runDirPath(box.registry, record.name, record.run);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  writeFileSync(join(dir, 'record.json'), text, { mode: 0o600 });
  writeFileSync(join(dir, 'prompt'), 'echo hi', { mode: 0o600 });
  writeFileSync(join(dir, 'events.log'), record.eventBytes === 2 ? 'x\n' : 'hi\n'.slice(0, record.eventBytes), { mode: 0o600 });
}

const NO_CAPS = { maxCostUsd: null, maxTokens: null, maxTurns: null, maxTimeSec: null, maxMemoryBytes: null };
const LAST_WORK = '2026-11-27T18:01:24.656Z';
/** A failed run (exit 2) as every shape before today's holds it, with what a record lacking the later fields reads as. */
const OLD = {
  status: 'done',
  outcome: 'failed',
  reason: 'unknown',
  exitCode: 2,
  endReason: null,
  durationMs: 1337,
  depth: 1,
  worktree: null,
  skippedLines: 0,
  executor: 'local',
  jobId: null,
  caps: NO_CAPS,
  stallAfterSec: null,
  stallAction: 'none',
  lastWorkAt: null,
  onEnd: null,
  cancelRequested: false,
};
const STALLS = { stallAfterSec: 600, lastWorkAt: LAST_WORK };
const TODAY = { ...OLD, ...STALLS, reason: 'exit-code' };
const ENTRIES: Record<string, Record<string, unknown>> = {
  '01-core': OLD,
  '02-store-env': OLD,
  '03-queue': OLD,
  '04-fan-out': OLD,
  '05-skipped-lines': OLD,
  '06-executor': OLD,
  '07-reasons-caps': { ...OLD, reason: 'exit-code' },
  '08-stalls-hooks': { ...OLD, ...STALLS },
  '09-merged': TODAY,
  '10-max-time': TODAY,
  '11-done-final': TODAY,
  // The monotonic duration, when the supervisor recorded one, over the wall clock's.
  '12-elapsed': { ...TODAY, durationMs: 1200 },
  '13-done': { ...TODAY, outcome: 'succeeded', reason: null, exitCode: 0 },
  // A rate limit the CLI said when resets (issue 25): the time beside the reason; a limit near, shown on a success.
  '13-rate-limit': { ...TODAY, outcome: 'failed', reason: 'rate-limit', resetsAt: '2026-11-27T19:00:00.000Z', exitCode: 1 },
  // --on-limit wait (issue 25, point 2): the policy is the record's; the entry is a rate-limited run's.
  '14-on-limit': { ...TODAY, outcome: 'failed', reason: 'rate-limit', resetsAt: '2026-11-27T19:00:00.000Z', exitCode: 1, parkedUntil: null },
  '13-limit-warning': {
    ...TODAY,
    outcome: 'succeeded',
    reason: null,
    resetsAt: null,
    exitCode: 0,
    limitWarning: { window: 'five_hour', utilization: 0.92, resetsAt: '2026-11-27T22:00:00.000Z' },
  },
  '13-keep-children': { ...TODAY, outcome: 'succeeded', reason: null, exitCode: 0, durationMs: 919, lastWorkAt: '2026-11-27T18:01:26.168Z' },
  '13-ended-by-cancel': {
    ...TODAY,
    outcome: 'cancelled',
    reason: 'cancelled',
    exitCode: null,
    endReason: 'the supervisor was gone; the end was recorded by cancel, the exit status is unknown',
    durationMs: 17434,
    lastWorkAt: '2026-11-27T18:01:27.098Z',
    cancelRequested: true,
  },
  // Their processes were in another boot: gone, with no end recorded.
  '13-running': { ...TODAY, status: 'unknown', outcome: null, reason: null, exitCode: null, durationMs: null, lastWorkAt: '2026-11-27T18:01:27.098Z' },
  '13-scheduled': { ...TODAY, status: 'unknown', outcome: null, reason: null, exitCode: null, durationMs: null, lastWorkAt: null },
  // --max-memory, and the memory its supervisor sampled.
  '14-memory': {
    ...TODAY,
    durationMs: 1708,
    lastWorkAt: '2026-11-28T02:07:46.865Z',
    caps: { ...NO_CAPS, maxMemoryBytes: 1024 * 1024 * 1024 },
    memory: { rssBytes: 36_814_848, peakRssBytes: 36_814_848 },
  },
  // A revived run whose session never began: it opened its session anew (run 2).
  '14-new-session': { ...TODAY, outcome: 'succeeded', reason: null, exitCode: 0, run: 2, resumeCount: 1 },
  // A person's turn in the run's own session (subagent-attach).
  '14-attached': { ...TODAY, outcome: 'succeeded', reason: null, exitCode: 0, run: 2, resumeCount: 1, attached: true },
  // --after (issue 27): a run whose dependency failed never started; it names which.
  '15-after': {
    ...TODAY,
    reason: 'dependency-failed',
    exitCode: null,
    error: 'not started: "records/plan" run 1 failed (exit-code)',
    durationMs: 1117,
    lastWorkAt: null,
    waitingFor: [],
  },
  // Its follow-up was published before its end (issue 27): the entry is a done run's; no run 2 here.
  '15-followed-up': { ...TODAY, outcome: 'succeeded', reason: null, exitCode: 0 },
  // A run waiting for others, whose supervisor is in another boot: unknown, so waiting for nothing any more.
  '15-waiting': { ...TODAY, status: 'unknown', outcome: null, reason: null, exitCode: null, durationMs: null, lastWorkAt: null, waitingFor: [] },
  // --cli acp: the agent and the permission policy are the record's (`acp`); the entry is an ordinary run's.
  '14-acp': { ...TODAY, outcome: 'succeeded', reason: null, exitCode: 0, cli: 'acp', sessionId: 'fixture-session-1' },
};

test('every record shape ever written has its expected entry here', () => {
  assert.deepEqual(FILES.map((f) => f.slice(0, -'.json'.length)).sort(), Object.keys(ENTRIES).sort());
  assert.deepEqual(Object.keys(RENDERED).sort(), Object.keys(ENTRIES).sort());
});

for (const [shape, want] of Object.entries(ENTRIES)) {
  test(`a record of shape ${shape} loads and renders its status entry and result`, () => {
    const name = `records/${shape}`;
    const entry = statusOf(box, name);
    assert.ok(entry, `status --name ${name}`);
    const got = Object.fromEntries(Object.keys(want).map((k) => [k, entry[k]]));
    assert.deepEqual(got, want, shape);
    assert.deepEqual(entry, RENDERED[shape], `${shape}: the whole entry, as before`);
    if (want.status !== 'done') return;
    const result = resultJson(box, name);
    assert.equal(result.outcome, want.outcome);
    assert.equal(result.reason, want.reason);
    assert.equal(result.skippedLines, 0);
  });
}

test('--brief shows resetsAt only where a run has one: the rate-limited record, not the others', () => {
  const brief = assertOk(box.run('status', ['--prefix', 'records', '--brief'])).agents as any[];
  const limited = brief.find((a) => a.name === 'records/13-rate-limit');
  assert.equal(limited.resetsAt, '2026-11-27T19:00:00.000Z');
  assert.deepEqual(Object.keys(limited), ['name', 'status', 'outcome', 'reason', 'run', 'exitCode', 'finishedAt', 'stalled', 'resetsAt']);
  // 14-on-limit is a rate-limited record too (with --on-limit wait's policy).
  assert.equal(brief.find((a) => a.name === 'records/14-on-limit').resetsAt, '2026-11-27T19:00:00.000Z');
  const limitedNames = ['records/13-rate-limit', 'records/14-on-limit'];
  for (const a of brief.filter((x) => !limitedNames.includes(x.name))) assert.ok(!('resetsAt' in a), a.name);
});

test("a record of today's shape read and written back keeps its bytes: the fixtures and fresh runs", async () => {
  for (const file of FILES.filter((f) => f.startsWith('13-') || f.startsWith('14-'))) {
    const text = readFileSync(join(DIR, file), 'utf8');
    assert.equal(serialiseRecord(parseRecord(text, file)), text, file);
  }
  const g = join(box.dir, 'hold');
  startShell(box, 'fresh/ok', 'echo hi');
  startShell(box, 'fresh/failed', 'exit 3', ['--stall-after', '30', '--on-end', 'true']);
  startShell(box, 'fresh/kept', 'sleep 30 & echo x', ['--keep-children']);
  startShell(box, 'fresh/held', gate(g));
  await untilStatus(box, 'fresh/held', (a) => a.status === 'running', 'running');
  const held = runDirOf(box.registry, 'fresh/held');
  const running = readFileSync(join(held, 'record.json'), 'utf8');
  assert.equal(serialiseRecord(parseRecord(running, 'running')), running, 'a running record');
  assertOk(box.run('cancel', ['--name', 'fresh/held']), 'cancel');
  open(g);
  waitTerminal(box, ['fresh/ok', 'fresh/failed', 'fresh/kept', 'fresh/held']);
  for (const name of ['fresh/ok', 'fresh/failed', 'fresh/kept', 'fresh/held']) {
    const text = readFileSync(join(runDirOf(box.registry, name), 'record.json'), 'utf8');
    assert.equal(serialiseRecord(parseRecord(text, name)), text, name);
  }
  const kept = JSON.parse(readFileSync(join(runDirOf(box.registry, 'fresh/kept'), 'record.json'), 'utf8'));
  assert.equal(kept.keepChildren, true, 'the kept run says so');
  assert.ok(kept.leftovers.length > 0, 'and what it left running');
});

test('a record outside the closed shapes is E_REGISTRY_CORRUPT, and is kept as it is', () => {
  const running = JSON.parse(readFileSync(join(DIR, '13-running.json'), 'utf8'));
  const done = JSON.parse(readFileSync(join(DIR, '13-done.json'), 'utf8'));
  const cases: Array<[string, Record<string, unknown>, RegExp]> = [
    ['running-with-outcome', { ...running, outcome: 'failed' }, /a running run has the fields of an end/],
    ['running-with-reason', { ...running, reason: 'auth' }, /a running run has the fields of an end/],
    ['done-without-finish', { ...done, finishedAt: null }, /a done run without its outcome or finishedAt/],
    ['unknown-reason', { ...done, outcome: 'failed', reason: 'bad-luck' }, /bad field: reason/],
    ['unknown-end-reason', { ...done, endReason: 'it felt like it' }, /bad field: endReason/],
    ['bad-depth', { ...done, depth: 0 }, /bad field: depth/],
  ];
  for (const [shape, record, why] of cases) {
    const name = `corrupt/${shape}`;
    const dir = runDirPath(box.registry, name);
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const text = JSON.stringify({ ...record, name }, null, 1) + '\n';
    writeFileSync(join(dir, 'record.json'), text, { mode: 0o600 });
    const e = assertError(box.run('status', ['--name', name]), 'E_REGISTRY_CORRUPT');
    assert.match(e.error, why, shape);
    assertError(box.run('result', ['--name', name]), 'E_REGISTRY_CORRUPT');
    assert.equal(readFileSync(join(dir, 'record.json'), 'utf8'), text, `${shape}: the file is kept`);
  }
});
