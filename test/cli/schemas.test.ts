// test-matrix: once — the output shapes against docs/schemas and the docs against the code (scripts/test.sh);
// the states they reach are tested on every Node and backend by status, wait and the fault suite.
/**
 * The JSON Schemas of docs/schemas/ against REAL outputs of every verb (shell runs in temp registries),
 * and the documentation against the code: every error code is in docs/errors.md and in the error
 * schema, every flag of every verb's --help is on its docs/verbs page (and every flag documented there
 * is accepted by the verb).
 */
import { test, describe, before } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ERROR_CODES } from '../../lib/base/errors.js';
import { ROOT } from '../support/paths.js';
import { assertError, assertOk, type RunOut, type Verb } from '../support/run.js';
import { LONG, WAIT_SEC, until } from '../support/wait.js';
import { bootId, hasInotify, killPids, pidAlive, procStartTime } from '../support/procs.js';
import { makeBox } from '../support/box.js';
import { check, schemaFiles, valid } from '../support/schema.js';
import { gate, open } from '../support/shell.js';

const SCHEMA_DIR = join(ROOT, 'docs', 'schemas');
const VERB_DIR = join(ROOT, 'docs', 'verbs');

/** The installed name of each verb, and so the name of its page. */
const PAGES: Record<Verb, string> = {
  'start-subagent': 'start-subagent',
  'resume-subagent': 'resume-subagent',
  status: 'subagent-status',
  result: 'subagent-result',
  search: 'subagent-search',
  cancel: 'subagent-cancel',
  dash: 'subagent-dash',
  attach: 'subagent-attach',
  prune: 'subagent-prune',
};

// ------------------------------------------------------------------------------------------------
// Schemas

// ------------------------------------------------------------------------------------------------
// A box: its every process carries a marker, so `after` ends exactly ours (by pid).

const box = makeBox('schemas');
box.env.SUBAGENT_CANCEL_GRACE_MS = '1000';

/** A registry of its own (the concurrency limit and corrupt records must not touch the others). */
/** A registry of its own, empty (named explicitly, it must exist for a reading verb). */
function otherRegistry(label: string): NodeJS.ProcessEnv {
  const dir = join(box.dir, `registry-${label}`);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  return { SUBAGENT_DIR: dir };
}

/** An error line: one JSON line, the code, the exit code (124 for E_WAIT_TIMEOUT), a hint, valid against error.schema.json. */
function failed(r: RunOut, code: string, what: string): any {
  const j = assertError(r, code);
  check('error.schema.json', j, what);
  return j;
}

function start(name: string, script: string, extra: string[] = [], env: NodeJS.ProcessEnv = {}): any {
  const j = assertOk(box.run('start-subagent', ['--cli', 'shell', '--name', name, '--prompt', script, ...extra], { env }), `start ${name}`);
  check('start.schema.json', j, `start ${name}`);
  return j;
}

function waitTerminalChecked(names: string[], env: NodeJS.ProcessEnv = {}): any {
  const j = assertOk(box.run('status', ['--wait-terminal', '--timeout', WAIT_SEC, ...names.flatMap((n) => ['--name', n])], { env }), `wait-terminal ${names}`);
  check('status.schema.json', j, `wait-terminal ${names}`);
  return j;
}

function statusOfChecked(name: string, env: NodeJS.ProcessEnv = {}): any {
  const j = assertOk(box.run('status', ['--name', name], { env }), `status ${name}`);
  check('status.schema.json', j, `status ${name}`);
  return j.agents[0];
}

async function untilRunning(name: string, env: NodeJS.ProcessEnv = {}): Promise<any> {
  return until(
    `${name} running`,
    () => {
      const a = statusOfChecked(name, env);
      return a?.status === 'running' && a.agentPid ? a : undefined;
    },
    LONG,
    50,
  );
}

// ------------------------------------------------------------------------------------------------

describe('the schemas themselves', () => {
  test('every output shape has its schema, each a draft 2020-12 schema open at the top level', () => {
    for (const f of ['start', 'batch', 'status', 'status-runs', 'result', 'search', 'cancel', 'prune', 'error', 'follow-event', 'revive']) {
      assert.ok(schemaFiles.includes(`${f}.schema.json`), `docs/schemas/${f}.schema.json is missing`);
    }
    for (const f of schemaFiles) {
      const s = JSON.parse(readFileSync(join(SCHEMA_DIR, f), 'utf8'));
      assert.equal(s.$schema, 'https://json-schema.org/draft/2020-12/schema', f);
      assert.equal(s.$id, f, `${f}: $id is its file name (relative references resolve between the files)`);
      assert.equal(s.additionalProperties, true, `${f}: new fields may be added without breaking callers`);
    }
  });

  test('the schemas are strict where the contract is firm (they reject what the verbs must never print)', () => {
    const good = {
      ok: true,
      registry: '/r',
      name: 'a',
      pid: 1,
      status: 'scheduled',
      sessionId: null,
      cli: 'shell',
      model: null,
      mode: 'new',
      run: 1,
      startedAt: '2026-11-22T01:20:06.337Z',
    };
    assert.ok(valid('start.schema.json', good));
    assert.ok(valid('start.schema.json', { ...good, somethingNew: 1 }), 'new fields are allowed');
    assert.ok(!valid('start.schema.json', { ...good, cli: 'bash' }), 'cli is an enum');
    assert.ok(!valid('start.schema.json', { ...good, startedAt: '2026-11-22 01:20:06' }), 'times are ISO-8601 UTC');
    assert.ok(!valid('start.schema.json', { ...good, name: 'a//b' }), 'names follow the rule');
    assert.ok(!valid('start.schema.json', { ...good, name: '../x' }), 'names follow the rule');
    assert.ok(!valid('start.schema.json', { ...good, mode: 'resume' }), 'a resume is run 2 or later');
    const { pid: _pid, ...noPid } = good;
    assert.ok(!valid('start.schema.json', noPid), 'required fields');
    assert.ok(!valid('error.schema.json', { ok: false, code: 'E_NOPE', error: 'x', details: { hint: 'h' } }), 'codes are an enum');
    assert.ok(!valid('error.schema.json', { ok: false, code: 'E_ARG_INVALID', error: 'x', details: {} }), 'details.hint is required');
    assert.ok(
      !valid('error.schema.json', { ok: false, code: 'E_RUN_FAILED', error: 'x', details: { hint: 'h', registry: '/r', failed: ['a'] } }),
      'E_RUN_FAILED carries agents',
    );
  });
});

describe('real outputs against the schemas', () => {
  // Started first: it takes 15 s (the lock timeout), and runs while the other tests do.
  let lockTimeout: Promise<RunOut> | null = null;
  let lockHolder: ChildProcess | null = null;

  before(async () => {
    // Long enough to outlive the file on a loaded machine (it took over 10 min once): the cancel must find it running.
    start('locked', 'sleep 3600');
    const a = await untilRunning('locked');
    // A live process that is not a subagents command holds the run's record lock: cancel must give up after 15 s.
    lockHolder = spawn('sleep', ['600'], { env: { ...box.env }, stdio: 'ignore' });
    const startTime = procStartTime(lockHolder.pid!);
    const dir = join(box.registry, 'agents', 'locked', String(a.run));
    writeFileSync(join(dir, 'record.lock'), JSON.stringify({ pid: lockHolder.pid, startTime, bootId: bootId() }));
    lockTimeout = box.runAsync('cancel', ['--name', 'locked']);
  });

  test('start and resume: start.schema.json; status: status.schema.json', () => {
    const s = start('life', 'echo hello; echo world');
    assert.equal(s.mode, 'new');
    const w = waitTerminalChecked(['life']);
    assert.equal(w.agents[0].outcome, 'succeeded');
    const r = assertOk(box.run('resume-subagent', ['--name', 'life', '--prompt', 'echo again']), 'resume');
    check('start.schema.json', r, 'resume');
    assert.equal(r.mode, 'resume');
    assert.equal(r.run, 2);
    waitTerminalChecked(['life']);
    // A plain listing of everything, and --prefix.
    check('status.schema.json', assertOk(box.run('status', []), 'status'), 'status (all)');
    check('status.schema.json', assertOk(box.run('status', ['--prefix', 'nothing-here']), 'status --prefix'), 'status --prefix (empty)');
  });

  test('start --batch: batch.schema.json, ok and E_BATCH_INCOMPLETE (which is also an error line)', () => {
    const good = ['{"name":"batch/1","prompt":"echo one"}', '// a comment', '', '{"name":"batch/2","prompt":"echo two","cli":"shell"}'].join('\n');
    const j = assertOk(box.run('start-subagent', ['--batch', '-', '--cli', 'shell'], { input: good }), 'batch');
    check('batch.schema.json', j, 'batch ok');
    assert.equal(j.started.length, 2);
    const bad = [
      '{"name":"batch/3","prompt":"echo three"}',
      '{"name":"batch/4"}',
      'not json',
      '{"name":"batch/5","prompt":"x","colour":"red"}',
      '{"name":"batch/1","prompt":"x"}',
    ].join('\n');
    const r = box.run('start-subagent', ['--batch', '-', '--cli', 'shell'], { input: bad });
    const e = failed(r, 'E_BATCH_INCOMPLETE', 'batch incomplete');
    check('batch.schema.json', e, 'batch incomplete');
    assert.deepEqual(
      e.failed.map((f: any) => f.code),
      ['E_PROMPT_REQUIRED', 'E_ARG_INVALID', 'E_ARG_UNKNOWN', 'E_NAME_EXISTS'],
    );
    waitTerminalChecked(['batch/1', 'batch/2', 'batch/3']);
  });

  test('status --wait (changed), --wait-terminal, --junit, --require-success (E_RUN_FAILED), E_WAIT_TIMEOUT with agents', async () => {
    const g = join(box.dir, 'gate-wait');
    start('wait/slow', `${gate(g)}; echo done`);
    start('wait/bad', 'echo oops >&2; exit 3');
    await untilRunning('wait/slow');
    // A time-out: exit 124 and the last known records.
    const t = failed(box.run('status', ['--wait-terminal', '--name', 'wait/slow', '--timeout', '0.3']), 'E_WAIT_TIMEOUT', 'wait-terminal time-out');
    assert.equal(t.agents.length, 1);
    assert.equal(t.agents[0].status, 'running');
    // --wait returns at the first change and says what changed.
    const waiter = box.spawn('status', ['--wait', '--name', 'wait/slow', '--timeout', WAIT_SEC]);
    await until('the waiter watches', () => hasInotify(waiter.pid), LONG);
    open(g);
    const w = assertOk(await waiter.done, '--wait');
    check('status.schema.json', w, 'status --wait');
    assert.deepEqual(
      w.changed.map((c: any) => [c.name, c.previousStatus, c.status]),
      [['wait/slow', 'running', 'done']],
    );
    const done = assertOk(
      box.run('status', ['--wait-terminal', '--prefix', 'wait', '--timeout', WAIT_SEC, '--junit', 'reports/ok.xml']),
      '--wait-terminal --junit',
    );
    check('status.schema.json', done, 'status --wait-terminal --junit');
    assert.equal(done.junit, join(box.dir, 'reports', 'ok.xml'));
    const f = failed(
      box.run('status', ['--wait-terminal', '--prefix', 'wait', '--require-success', '--junit', 'reports/ci.xml', '--timeout', WAIT_SEC]),
      'E_RUN_FAILED',
      'require-success',
    );
    assert.deepEqual(f.details.failed, ['wait/bad']);
    assert.equal(f.agents.length, 2);
    assert.equal(f.junit, join(box.dir, 'reports', 'ci.xml'));
  });

  test('a stall: the stalled run, its change, a run cancelled for it, and the settings of a run', async () => {
    // Three seconds: the waiter takes its first look well before the stall.
    start('stall/quiet', 'sleep 600', ['--stall-after', '3', '--on-end', 'true']);
    await untilRunning('stall/quiet');
    const waiter = box.spawn('status', ['--wait', '--name', 'stall/quiet', '--timeout', WAIT_SEC]);
    const w = assertOk(await waiter.done, '--wait');
    check('status.schema.json', w, 'status --wait woken by a stall');
    assert.deepEqual(
      w.changed.map((c: any) => [c.previousStatus, c.status, c.stalled]),
      [['running', 'running', true]],
    );
    assert.equal(w.agents[0].onEnd, 'true');
    start('stall/cancelled', 'sleep 600', ['--stall-after', '1', '--stall-action', 'cancel']);
    const end = waitTerminalChecked(['stall/cancelled']).agents[0];
    assert.deepEqual([end.outcome, end.endReason, end.stalled], ['cancelled', 'stalled', false]);
    assertOk(box.run('cancel', ['--name', 'stall/quiet']), 'cancel');
  });

  test('resume --queue and cancel --queued: follow-ups.schema.json; a status entry with queued prompts: status.schema.json', () => {
    const g = join(box.dir, 'gate-follow-ups');
    start('follow-ups', gate(g));
    const q = assertOk(box.run('resume-subagent', ['--queue', '--name', 'follow-ups', '--prompt', 'echo next']), 'resume --queue');
    check('follow-ups.schema.json', q, 'resume --queue');
    assertOk(box.run('resume-subagent', ['--queue', '--name', 'follow-ups', '--prompt', 'echo after', '--after-any']), 'resume --queue');
    check('status.schema.json', assertOk(box.run('status', ['--name', 'follow-ups'])), 'status with queued prompts');
    writeFileSync(join(box.dir, 'follow-ups.jsonl'), `${JSON.stringify({ name: 'follow-ups', prompt: 'echo batch' })}\n`);
    check(
      'follow-ups.schema.json',
      assertOk(box.run('resume-subagent', ['--queue', '--batch', 'follow-ups.jsonl']), 'resume --queue --batch'),
      'resume --queue --batch',
    );
    const c = assertOk(box.run('cancel', ['--name', 'follow-ups', '--queued']), 'cancel --queued');
    check('follow-ups.schema.json', c, 'cancel --queued');
    assert.equal(c.dropped.length, 3);
    open(g);
    waitTerminalChecked(['follow-ups']);
  });

  test('status --runs: status-runs.schema.json', () => {
    const j = assertOk(box.run('status', ['--name', 'life', '--runs']), '--runs');
    check('status-runs.schema.json', j, 'status --runs');
    assert.deepEqual(
      j.runs.map((r: any) => r.run),
      [1, 2],
    );
  });

  test('a concurrency limit: queue, and a queued run with its place in line', async () => {
    const env = otherRegistry('queue');
    start('q/first', 'sleep 600', ['--max-concurrent', '1'], env);
    start('q/second', 'sleep 600', [], env);
    const j = await until(
      'q/first running and q/second queued',
      () => {
        const r = assertOk(box.run('status', [], { env }), 'status (queue)');
        const first = r.agents.find((a: any) => a.name === 'q/first');
        const second = r.agents.find((a: any) => a.name === 'q/second');
        return r.queue && first?.status === 'running' && second?.queued ? r : undefined;
      },
      LONG,
      50,
    );
    check('status.schema.json', j, 'status with a queue');
    assert.deepEqual(j.queue, { limit: 1, running: 1, queued: 1, minFreeMemory: null, availableMemory: null });
    assert.equal(j.agents.find((a: any) => a.name === 'q/second').queuePosition, 1);
    // Cancelling a queued run (no agent yet), then the running one.
    const c = assertOk(box.run('cancel', ['--name', 'q/second'], { env }), 'cancel queued');
    check('cancel.schema.json', c, 'cancel of a queued run');
    assert.equal(c.previousStatus, 'scheduled');
    assert.equal(c.agentPid, null);
    check('cancel.schema.json', assertOk(box.run('cancel', ['--name', 'q/first'], { env }), 'cancel q/first'), 'cancel q/first');
  });

  test('a registry found by walking up and not made here: untrusted in the listing', () => {
    const proj = join(box.dir, 'found-untrusted');
    mkdirSync(join(proj, '.subagents', 'agents'), { recursive: true, mode: 0o700 });
    const j = assertOk(box.run('status', [], { cwd: proj, env: { SUBAGENT_DIR: '', OPENCODE_PSA_DIR: '' } }), 'status of an untrusted registry');
    check('status.schema.json', j, 'status with untrusted');
    assert.equal(typeof j.untrusted.reason, 'string');
    assert.ok(!valid('status.schema.json', { ...j, untrusted: { reason: 'x' } }), 'untrusted has a hint');
  });

  test('a corrupt record: problems in the listing, E_REGISTRY_CORRUPT when named', () => {
    const env = otherRegistry('corrupt');
    start('fine', 'echo fine', [], env);
    start('broken', 'echo broken', [], env);
    waitTerminalChecked(['fine', 'broken'], env);
    writeFileSync(join(env.SUBAGENT_DIR!, 'agents', 'broken', '1', 'record.json'), '{"format":1');
    const j = assertOk(box.run('status', [], { env }), 'status with a corrupt record');
    check('status.schema.json', j, 'status with problems');
    assert.deepEqual(
      j.agents.map((a: any) => a.name),
      ['fine'],
    );
    assert.equal(j.problems[0].name, 'broken');
    failed(box.run('status', ['--name', 'broken'], { env }), 'E_REGISTRY_CORRUPT', 'status --name of a corrupt record');
    failed(box.run('result', ['--name', 'broken'], { env }), 'E_REGISTRY_CORRUPT', 'result of a corrupt record');
  });

  test('result --json, --run, --since (and the plain text is not JSON)', () => {
    const latest = assertOk(box.run('result', ['--name', 'life', '--json']), 'result --json');
    check('result.schema.json', latest, 'result --json');
    assert.equal(latest.lastAssistantText, 'again\n');
    const first = assertOk(box.run('result', ['--name', 'life', '--json', '--run', '1']), 'result --run 1');
    check('result.schema.json', first, 'result --run 1');
    assert.equal(first.lastAssistantText, 'hello\nworld\n');
    for (const k of ['0', '1', '2']) {
      const s = assertOk(box.run('result', ['--name', 'life', '--json', '--since', k]), `result --since ${k}`);
      check('result.schema.json', s, `result --since ${k}`);
      assert.equal(s.runs.length, 2 - Number(k));
    }
    const text = box.run('result', ['--name', 'life']);
    assert.equal(text.code, 0);
    assert.equal(text.stdout, 'again\n');
  });

  test('search: search.schema.json (every role, and no match)', () => {
    for (const role of ['any', 'user', 'assistant', 'tool']) {
      const j = assertOk(box.run('search', ['--name', 'life', '--pattern', 'hello|again', '--role', role]), `search --role ${role}`);
      check('search.schema.json', j, `search --role ${role}`);
    }
    const none = assertOk(box.run('search', ['--name', 'life', '--pattern', 'no such text']), 'search (nothing)');
    check('search.schema.json', none, 'search without a match');
    assert.equal(none.total, 0);
  });

  test('result --follow --json: follow-event.schema.json lines, then the result line; E_WAIT_TIMEOUT without agents', async () => {
    const g = join(box.dir, 'gate-follow');
    start('follow', `echo one; ${gate(g)}; echo two`);
    const following = box.spawn('result', ['--name', 'follow', '--follow', '--json', '--timeout', WAIT_SEC]);
    await until('the follower watches', () => hasInotify(following.pid), LONG);
    open(g);
    const r = await following.done;
    assert.equal(r.code, 0, r.stdout + r.stderr);
    const lines = r.stdout
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l));
    const last = lines.pop();
    check('result.schema.json', last, 'the last line of --follow --json');
    assert.ok(lines.length >= 2);
    for (const [i, l] of lines.entries()) check('follow-event.schema.json', l, `follow line ${i + 1}`);
    assert.deepEqual(
      lines.map((l) => l.text),
      ['one', 'two'],
    );
    // Plain --follow also ends with the result line.
    const plain = box.run('result', ['--name', 'follow', '--follow']);
    assert.equal(plain.code, 0);
    const plainLines = plain.stdout.trimEnd().split('\n');
    check('result.schema.json', JSON.parse(plainLines.at(-1)!), 'the last line of --follow');
    // Following a run that does not end in time.
    start('follow/long', 'sleep 600');
    const t = failed(box.run('result', ['--name', 'follow/long', '--follow', '--json', '--timeout', '0.3']), 'E_WAIT_TIMEOUT', 'follow --timeout');
    assert.equal(t.agents, undefined);
    check('cancel.schema.json', assertOk(box.run('cancel', ['--name', 'follow/long']), 'cancel follow/long'), 'cancel');
  });

  test('cancel (a running run) and cancel --recursive (descendants)', async () => {
    start('c/plain', 'sleep 600');
    await untilRunning('c/plain');
    const c = assertOk(box.run('cancel', ['--name', 'c/plain']), 'cancel');
    check('cancel.schema.json', c, 'cancel');
    assert.equal(c.outcome, 'cancelled');
    assert.equal(c.descendants, undefined);
    // A lead run that starts a helper from inside itself (the supervisor passes SUBAGENT_DIR and SUBAGENT_PARENT).
    const bin = join(ROOT, 'bin', 'start-subagent');
    start('lead', `'${bin}' --cli shell --name lead/helper --prompt 'sleep 600' >/dev/null; sleep 600`);
    const helper = await untilRunning('lead/helper');
    assert.equal(helper.parent, 'lead');
    assert.equal(helper.depth, 2);
    const rc = assertOk(box.run('cancel', ['--name', 'lead', '--recursive']), 'cancel --recursive');
    check('cancel.schema.json', rc, 'cancel --recursive');
    assert.deepEqual(
      rc.descendants.map((d: any) => [d.name, d.outcome]),
      [['lead/helper', 'cancelled']],
    );
    // The run itself already ended, a descendant still going: signalSent null, the descendant cancelled.
    start('lead2', `'${bin}' --cli shell --name lead2/helper --prompt 'sleep 600' >/dev/null`);
    waitTerminalChecked(['lead2']);
    await untilRunning('lead2/helper');
    const r2 = assertOk(box.run('cancel', ['--name', 'lead2', '--recursive']), 'cancel --recursive of an ended run');
    check('cancel.schema.json', r2, 'cancel --recursive (the run had ended)');
    assert.equal(r2.signalSent, null);
    failed(box.run('cancel', ['--name', 'lead2', '--recursive']), 'E_NOT_RUNNING', 'cancel --recursive, nothing going');
  });

  test('prune (--dry-run, runs removed, a whole name) and its errors', () => {
    start('pr/a', 'echo one');
    waitTerminalChecked(['pr/a']);
    assertOk(box.run('resume-subagent', ['--name', 'pr/a', '--prompt', 'echo two']), 'resume pr/a');
    waitTerminalChecked(['pr/a']);
    const dry = assertOk(box.run('prune', ['--prefix', 'pr', '--keep-last', '1', '--dry-run']), 'prune --dry-run');
    check('prune.schema.json', dry, 'prune --dry-run');
    assert.deepEqual(
      dry.removed.map((r: any) => [r.name, r.run]),
      [['pr/a', 1]],
    );
    check('prune.schema.json', assertOk(box.run('prune', ['--prefix', 'pr', '--keep-last', '1']), 'prune'), 'prune');
    const whole = assertOk(box.run('prune', ['--name', 'pr/a', '--whole-names']), 'prune --whole-names');
    check('prune.schema.json', whole, 'prune --whole-names');
    assert.deepEqual(
      whole.removed.map((r: any) => [r.name, r.run]),
      [['pr/a', 2]],
    );
    failed(box.run('prune', []), 'E_ARG_INVALID', 'prune without a selector');
    failed(box.run('prune', ['--older-than', 'soon']), 'E_ARG_INVALID', 'prune --older-than soon');
  });

  test('a CLI with a JSON stream (a fake claude replaying a captured stream): usage, children, --child, tool messages', async () => {
    const fake = join(box.dir, 'fakebin');
    mkdirSync(fake, { recursive: true });
    const fixture = join(ROOT, 'test', 'fixtures', 'agents', 'claude', 'task-subagent.ndjson');
    writeFileSync(join(fake, 'claude'), `#!/bin/sh\ncat '${fixture}'\n`);
    chmodSync(join(fake, 'claude'), 0o755);
    const env = { PATH: `${fake}:${box.env.PATH}` };
    const s = assertOk(box.run('start-subagent', ['--cli', 'claude', '--name', 'cl', '--prompt', 'TASK: x', '--model', 'sonnet'], { env }), 'start claude');
    check('start.schema.json', s, 'start --cli claude');
    assert.equal(typeof s.sessionId, 'string');
    const w = waitTerminalChecked(['cl'], env);
    const a = w.agents[0];
    assert.notEqual(a.usage, null);
    assert.ok(a.children.length >= 1);
    const child = a.children[0].id;
    const cr = assertOk(box.run('result', ['--name', 'cl', '--child', child, '--json'], { env }), 'result --child');
    check('result.schema.json', cr, 'result --child');
    check(
      'search.schema.json',
      assertOk(box.run('search', ['--name', 'cl', '--pattern', 'child', '--role', 'tool'], { env }), 'search tool'),
      'search (tool role)',
    );
    check(
      'search.schema.json',
      assertOk(box.run('search', ['--name', 'cl', '--pattern', 'child', '--child', child], { env }), 'search --child'),
      'search --child',
    );
    const f = box.run('result', ['--name', 'cl', '--follow', '--json'], { env });
    assert.equal(f.code, 0, f.stdout);
    const lines = f.stdout
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l));
    check('result.schema.json', lines.pop(), 'last line of --follow --json');
    for (const [i, l] of lines.entries()) check('follow-event.schema.json', l, `follow line ${i + 1}`);
    assert.ok(
      lines.some((l) => l.role === 'tool' && l.tool),
      'a tool message',
    );
    assert.ok(
      lines.some((l) => l.childId),
      'a child message',
    );
    check('status-runs.schema.json', assertOk(box.run('status', ['--name', 'cl', '--runs'], { env }), 'runs'), 'status --runs (claude)');
    failed(box.run('result', ['--name', 'cl', '--child', 'no-such-child'], { env }), 'E_CHILD_NOT_FOUND', 'result --child unknown');
  });

  test('one error line of each kind the shell CLI can provoke: error.schema.json', async () => {
    const g = join(box.dir, 'gate-busy');
    start('busy', gate(g));
    await untilRunning('busy');
    mkdirSync(join(box.dir, 'elsewhere'), { recursive: true });
    // PATH with node only: the agent CLIs are not on it.
    const nodeOnly = join(box.dir, 'node-only');
    mkdirSync(nodeOnly, { recursive: true });
    symlinkSync(process.execPath, join(nodeOnly, 'node'));
    const notADir = join(box.dir, 'a-file');
    writeFileSync(notADir, '');

    const cases: Array<[string, Verb, string[], { env?: NodeJS.ProcessEnv; input?: string }?]> = [
      ['E_NAME_REQUIRED', 'start-subagent', ['--cli', 'shell', '--prompt', 'x']],
      ['E_NAME_INVALID', 'start-subagent', ['--cli', 'shell', '--name', 'a//b', '--prompt', 'x']],
      ['E_NAME_INVALID', 'status', ['--name', 'h\u00e9llo']],
      ['E_NAME_EXISTS', 'start-subagent', ['--cli', 'shell', '--name', 'life', '--prompt', 'x']],
      ['E_NAME_NOT_FOUND', 'result', ['--name', 'nope']],
      ['E_NAME_NOT_FOUND', 'status', ['--wait-terminal', '--name', 'nope']],
      ['E_PROMPT_REQUIRED', 'start-subagent', ['--cli', 'shell', '--name', 'x']],
      ['E_ARG_UNKNOWN', 'start-subagent', ['--cli', 'shell', '--name', 'x', '--promt', 'y']],
      ['E_ARG_UNKNOWN', 'status', ['--', 'x']],
      ['E_ARG_INVALID', 'start-subagent', ['--cli', 'shell', '--name', 'x', '--name', 'y', '--prompt', 'x']],
      ['E_ARG_INVALID', 'search', ['--name', 'life', '--pattern', 'x', '--role', 'bot']],
      ['E_ARG_INVALID', 'result', ['--name', 'life', '--run', '1', '--since', '0']],
      ['E_CWD_INVALID', 'start-subagent', ['--cli', 'shell', '--name', 'x', '--prompt', 'x', '--cwd', join(box.dir, 'no-such-dir')]],
      ['E_CLI_UNKNOWN', 'start-subagent', ['--cli', 'bash', '--name', 'x', '--prompt', 'x']],
      ['E_CMD_MISSING', 'start-subagent', ['--cli', 'claude', '--name', 'x', '--prompt', 'x'], { env: { PATH: nodeOnly } }],
      ['E_AGENT_BUSY', 'resume-subagent', ['--name', 'busy', '--prompt', 'x']],
      ['E_NOT_RUNNING', 'cancel', ['--name', 'life']],
      ['E_SIGNAL_UNSUPPORTED', 'cancel', ['--name', 'busy', '--signal', 'HUP']],
      ['E_PATTERN_REQUIRED', 'search', ['--name', 'life']],
      ['E_PATTERN_INVALID', 'search', ['--name', 'life', '--pattern', '(']],
      ['E_SESSION_NOT_FOUND', 'resume-subagent', ['--name', 'never-started', '--prompt', 'x']],
      ['E_CWD_MISMATCH', 'resume-subagent', ['--name', 'life', '--prompt', 'x', '--cwd', join(box.dir, 'elsewhere')]],
      ['E_WAIT_NAME_REQUIRED', 'status', ['--wait-terminal']],
      ['E_WAIT_TIMEOUT', 'status', ['--wait', '--name', 'busy', '--timeout', '0.2']],
      ['E_ARG_UNSUPPORTED', 'start-subagent', ['--cli', 'shell', '--name', 'x', '--prompt', 'x', '--model', 'm']],
      ['E_RUN_NOT_FOUND', 'result', ['--name', 'life', '--run', '9']],
      ['E_RUN_FAILED', 'status', ['--name', 'wait/bad', '--require-success']],
      ['E_DEPTH_LIMIT', 'start-subagent', ['--cli', 'shell', '--name', 'x', '--prompt', 'x'], { env: { SUBAGENT_PARENT: 'life', SUBAGENT_MAX_DEPTH: '1' } }],
      ['E_REGISTRY_UNWRITABLE', 'start-subagent', ['--cli', 'shell', '--name', 'x', '--prompt', 'x'], { env: { SUBAGENT_DIR: join(notADir, 'registry') } }],
    ];
    const seen = new Set<string>();
    for (const [code, verb, args, opts] of cases) {
      const j = failed(box.run(verb, args, opts ?? {}), code, `${verb} ${args.join(' ')}`);
      seen.add(j.code);
    }
    open(g);
    waitTerminalChecked(['busy']);
    assert.ok(seen.size >= 10, `at least 10 different codes (${seen.size})`);
  });

  test('a record that is a directory: E_REGISTRY_CORRUPT naming it, one valid error line', () => {
    const env = otherRegistry('eisdir');
    const path = join(env.SUBAGENT_DIR!, 'agents', 'odd', '1', 'record.json');
    mkdirSync(path, { recursive: true });
    const j = failed(box.run('status', ['--name', 'odd'], { env }), 'E_REGISTRY_CORRUPT', 'status of a record that is a directory');
    assert.equal(j.details.path, path);
  });

  test('E_INTERNAL: an unexpected exception in a verb (test-only SUBAGENT_TEST_THROW_AT=before-output) is one error line with the first lines of its stack, exit 1, nothing on stderr', () => {
    const env = otherRegistry('internal');
    const r = box.run('status', [], { env: { ...env, SUBAGENT_TEST_THROW_AT: 'before-output' } });
    const j = failed(r, 'E_INTERNAL', 'status with an injected exception');
    assert.equal(r.stderr, '');
    assert.deepEqual(Object.keys(j), ['ok', 'code', 'error', 'details']);
    assert.equal(j.ok, false);
    assert.equal(j.error, 'internal error: injected by SUBAGENT_TEST_THROW_AT=before-output');
    const { stack, ...details } = j.details;
    assert.deepEqual(details, { registry: env.SUBAGENT_DIR, hint: 'this is a bug in subagents; please report it with the command line that caused it' });
    assert.ok(Array.isArray(stack) && stack.length >= 2 && stack.length <= 6, `details.stack holds the first lines only: ${JSON.stringify(stack)}`);
    assert.equal(stack[0], 'Error: injected by SUBAGENT_TEST_THROW_AT=before-output');
    for (const line of stack.slice(1)) assert.match(line, /^ {4}at /);
    // The knob alone makes the difference: the same command without it succeeds.
    assertOk(box.run('status', [], { env }), 'status without the injected exception');
  });

  test('E_LOCK_TIMEOUT: a record lock held by a live process for 15 s', async () => {
    const r = await lockTimeout!;
    failed(r, 'E_LOCK_TIMEOUT', 'cancel of a locked record');
    lockHolder!.kill('SIGKILL');
    rmSync(join(box.registry, 'agents', 'locked', '1', 'record.lock'), { force: true });
    check('cancel.schema.json', assertOk(box.run('cancel', ['--name', 'locked']), 'cancel locked'), 'cancel once unlocked');
  });

  test('status --runs reports an earlier run that ended unknown as unknown, not done', async () => {
    start('crash', 'sleep 600');
    const a = await untilRunning('crash');
    killPids([a.pid, a.agentPid]);
    await until('crash unknown', () => !pidAlive(a.pid) && !pidAlive(a.agentPid) && statusOfChecked('crash').status === 'unknown', LONG, 50);
    assertOk(box.run('resume-subagent', ['--name', 'crash', '--prompt', 'echo again']), 'resume crash');
    waitTerminalChecked(['crash']);
    const runs = assertOk(box.run('status', ['--name', 'crash', '--runs']), 'runs');
    check('status-runs.schema.json', runs, 'status --runs after an unknown run');
    assert.equal(runs.runs[0].status, 'unknown');
    assert.equal(runs.runs[0].outcome, null);
    assert.equal(runs.runs[1].status, 'done');
  });

  test('resume-subagent --revive: revive.schema.json, a run revived and runs skipped', async () => {
    start('revive/crashed', 'sleep 600');
    const a = await untilRunning('revive/crashed');
    killPids([a.pid, a.agentPid]);
    await until('revive/crashed unknown', () => !pidAlive(a.pid) && !pidAlive(a.agentPid) && statusOfChecked('revive/crashed').status === 'unknown', LONG, 50);
    start('revive/ok', 'true');
    waitTerminalChecked(['revive/ok']);
    const r = assertOk(box.run('resume-subagent', ['--revive', '--prefix', 'revive']), 'revive');
    check('revive.schema.json', r, 'resume-subagent --revive');
    assert.deepEqual(
      r.revived.map((x: any) => x.name),
      ['revive/crashed'],
    );
    assert.deepEqual(
      r.skipped.map((x: any) => x.name),
      ['revive/ok'],
    );
    assertOk(box.run('cancel', ['--name', 'revive/crashed']), 'cancel the revived run');
  });
});

// ------------------------------------------------------------------------------------------------
// The documentation against the code.

describe('the documentation against the code', () => {
  const errorsMd = readFileSync(join(ROOT, 'docs', 'errors.md'), 'utf8');
  const errorSchema = JSON.parse(readFileSync(join(SCHEMA_DIR, 'error.schema.json'), 'utf8'));

  /** Code rows of the table in `section` of docs/errors.md (the text from that heading to the next). */
  const codeRows = (section: string | null): string[] => {
    const from = section === null ? 0 : errorsMd.indexOf(`\n## ${section}\n`);
    assert.ok(from >= 0, `docs/errors.md has a section "${section}"`);
    const next = errorsMd.indexOf('\n## ', from + 1);
    return [...errorsMd.slice(from, next < 0 ? undefined : next).matchAll(/^\|\s*`(E_[A-Z_]+)`/gm)].map((m) => m[1]!);
  };

  test('every code of lib/base/errors.ts is in docs/errors.md (a row of the table) and in the error schema enum, and nothing else is', () => {
    const enumCodes: string[] = errorSchema.$defs.code.enum;
    assert.deepEqual([...enumCodes].sort(), [...ERROR_CODES].sort());
    assert.deepEqual([...codeRows(null)].sort(), [...ERROR_CODES].sort(), 'one table row per code');
  });

  test('every code the skill installer prints is a code of the suite or a row of the installer tables in docs/errors.md and docs/skill.md', () => {
    const script = readFileSync(join(ROOT, 'scripts', 'install-skill.sh'), 'utf8');
    const printed = [...new Set([...script.matchAll(/\b(?:die|fail_line) (E_[A-Z_]+)/g)].map((m) => m[1]!))].sort();
    assert.ok(printed.includes('E_TARGET_EXISTS') && printed.includes('E_ARG_INVALID'), `codes found in the script: ${printed}`);
    const own = printed.filter((c) => !(ERROR_CODES as readonly string[]).includes(c));
    assert.deepEqual(codeRows("The skill installer's codes").sort(), own, "errors.md: one row per code of the installer's own");
    const skillMd = readFileSync(join(ROOT, 'docs', 'skill.md'), 'utf8');
    const skillRows = [...skillMd.matchAll(/^\|\s*`(E_[A-Z_]+)`/gm)].map((m) => m[1]!).sort();
    assert.deepEqual(skillRows, printed, 'docs/skill.md: one row per code the installer prints');
  });

  test('docs/errors.md links to every verb page, and every code a verb page names is a real code', () => {
    for (const page of Object.values(PAGES)) {
      assert.ok(errorsMd.includes(`verbs/${page}.md`), `docs/errors.md links to verbs/${page}.md`);
      const text = readFileSync(join(VERB_DIR, `${page}.md`), 'utf8');
      for (const m of text.matchAll(/\bE_[A-Z_]+\b/g))
        assert.ok((ERROR_CODES as readonly string[]).includes(m[0]), `${page}.md names ${m[0]}, which is not a code`);
    }
  });

  test('every complete JSON example in docs/verbs, docs/errors.md and docs/states.md is valid against its schema', () => {
    const pick = (j: any): string =>
      j.type === 'message'
        ? 'follow-event.schema.json'
        : j.ok === false
          ? 'error.schema.json'
          : 'started' in j
            ? 'batch.schema.json'
            : 'agents' in j
              ? 'status.schema.json'
              : 'signalSent' in j
                ? 'cancel.schema.json'
                : 'freedBytes' in j
                  ? 'prune.schema.json'
                  : 'matches' in j
                    ? 'search.schema.json'
                    : 'mode' in j
                      ? 'start.schema.json'
                      : 'runs' in j && !('since' in j)
                        ? 'status-runs.schema.json'
                        : 'result.schema.json';
    let checked = 0;
    const files = [...Object.values(PAGES).map((p) => join(VERB_DIR, `${p}.md`)), join(ROOT, 'docs', 'errors.md'), join(ROOT, 'docs', 'states.md')];
    for (const file of files) {
      for (const line of readFileSync(file, 'utf8').split('\n')) {
        if (!line.startsWith('{') || line.includes('…')) continue;
        const j = JSON.parse(line);
        check(pick(j), j, `an example in ${file.slice(ROOT.length)}`);
        checked++;
      }
    }
    assert.ok(checked >= 20, `only ${checked} examples checked`);
  });

  test('every verb page has the manual-page sections', () => {
    for (const page of Object.values(PAGES)) {
      const text = readFileSync(join(VERB_DIR, `${page}.md`), 'utf8');
      let at = -1;
      for (const s of ['NAME', 'SYNOPSIS', 'DESCRIPTION', 'OPTIONS', 'OUTPUT', 'EXIT CODES', 'ERRORS', 'NOTES', 'SEE ALSO']) {
        const i = text.indexOf(`\n## ${s}\n`);
        assert.ok(i > at, `${page}.md: section ${s} missing or out of order`);
        at = i;
      }
    }
  });

  const helpOf = (verb: Verb): string => {
    const r = box.run(verb, ['--help']);
    assert.equal(r.code, 0);
    return r.stdout;
  };
  const flagsIn = (text: string): string[] => [...new Set([...text.matchAll(/(?<![A-Za-z0-9-])--[a-z][a-z-]*/g)].map((m) => m[0]))].sort();
  /** The flags a page documents: the first cell of each row of its OPTIONS table. */
  const documented = (page: string): string[] => {
    const text = readFileSync(join(VERB_DIR, `${page}.md`), 'utf8');
    const section = text.slice(text.indexOf('\n## OPTIONS\n'), text.indexOf('\n## OUTPUT\n'));
    return flagsIn(
      section
        .split('\n')
        .filter((l) => l.startsWith('| `-'))
        .map((l) => l.split('|')[1]!)
        .join(' '),
    );
  };

  test("every flag a verb's --help lists is documented in the OPTIONS of its page", () => {
    for (const [verb, page] of Object.entries(PAGES) as Array<[Verb, string]>) {
      const help = flagsIn(helpOf(verb));
      assert.ok(help.length >= 4, `${verb} --help lists flags`);
      const doc = documented(page);
      for (const flag of help) assert.ok(doc.includes(flag), `${page}.md OPTIONS lacks ${flag} (from ${verb} --help)`);
    }
  });

  test('every flag a page documents is accepted by the verb (never E_ARG_UNKNOWN)', async () => {
    for (const [verb, page] of Object.entries(PAGES) as Array<[Verb, string]>) {
      // --help and --version are answered before any other flag is looked at (small-wrongs.test.ts checks --version).
      const flags = documented(page).filter((f) => f !== '--help' && f !== '--version');
      // A flag that takes a value swallows the first probe; a switch leaves it: either way a probe is the unknown one.
      const outs = await Promise.all(flags.map((flag) => box.runAsync(verb, [flag, '--zz-probe', '--yy-probe'])));
      flags.forEach((flag, i) => {
        const r = outs[i]!;
        assert.equal(r.json?.code, 'E_ARG_UNKNOWN', `${verb} ${flag}: ${r.stdout}`);
        assert.ok(['--zz-probe', '--yy-probe'].includes(r.json.details.argument), `${verb} does not know ${flag}: ${r.stdout}`);
      });
    }
  });
});
