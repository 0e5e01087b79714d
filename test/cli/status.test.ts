import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ISO_UTC } from '../support/run.js';
import { LONG, until } from '../support/wait.js';
import { bootId, isStopped, laterStartTime, pidAlive, procStartTime, startTimeForm } from '../support/procs.js';
import { readJson, runDirOf, settledTree } from '../support/registry.js';
import { makeBox } from '../support/box.js';
import { expectError, gate, open, resultJson, resultText, startShell, statusOf, untilStatus, waitTerminal } from '../support/shell.js';

const b = makeBox('status');

const RECORD_FIELDS = [
  'name',
  'status',
  'outcome',
  'cli',
  'model',
  'variant',
  'sessionId',
  'cwd',
  'pid',
  'exitCode',
  'signal',
  'startedAt',
  'updatedAt',
  'finishedAt',
  'run',
  'resumeCount',
  'error',
];

describe('status: the life cycle of a run', () => {
  test('scheduled/running → done succeeded, with identities recorded and /proc agreeing', async () => {
    const g = join(b.dir, 'gate-life');
    const s = startShell(b, 'life', `echo started; ${gate(g)}; echo finished`);
    assert.ok(['scheduled', 'running'].includes(s.status));

    const running = await untilStatus(b, 'life', (a) => a.status === 'running' && a.agentPid, 'running with an agent');
    for (const k of RECORD_FIELDS) assert.ok(k in running, `record misses ${k}`);
    assert.equal(running.outcome, null);
    assert.equal(running.exitCode, null);
    assert.equal(running.finishedAt, null);
    assert.equal(running.run, 1);
    assert.equal(running.resumeCount, 0);
    assert.equal(running.cli, 'shell');
    assert.match(running.startedAt, ISO_UTC);
    assert.match(running.updatedAt, ISO_UTC);
    assert.equal(running.pid, s.pid);
    assert.ok(pidAlive(running.pid), 'the supervisor lives');
    assert.ok(pidAlive(running.agentPid), 'the agent lives');

    // The record on disk names both processes by identity (pid + start time + boot id), matching /proc.
    const dir = runDirOf(b.registry, 'life');
    const rec = readJson(join(dir, 'record.json'));
    assert.equal(rec.status, 'running');
    assert.equal(rec.supervisor.pid, running.pid);
    assert.equal(rec.supervisor.startTime, procStartTime(running.pid));
    assert.equal(rec.supervisor.bootId, bootId());
    assert.equal(rec.agentProcess.pid, running.agentPid);
    assert.equal(rec.agentProcess.startTime, procStartTime(running.agentPid));
    // The supervisor is detached: its own session, not ours.
    const stat = readFileSync(`/proc/${running.pid}/stat`, 'latin1');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    assert.equal(Number(fields[3]), running.pid, 'the supervisor leads its own session');

    open(g);
    const done = waitTerminal(b, ['life']).life;
    assert.equal(done.status, 'done');
    assert.equal(done.outcome, 'succeeded');
    assert.equal(done.exitCode, 0);
    assert.equal(done.signal, null);
    assert.equal(done.error, null);
    assert.match(done.finishedAt, ISO_UTC);
    assert.ok(Date.parse(done.finishedAt) >= Date.parse(done.startedAt));
    const recDone = readJson(join(dir, 'record.json'));
    assert.equal(recDone.status, 'done');
    assert.equal(recDone.outcome, 'succeeded');
    assert.equal(recDone.exitCode, 0);
    await until('the supervisor exits after recording the end', () => !pidAlive(running.pid), LONG);
    assert.equal(statusOf(b, 'life').status, 'done', 'a clean end stays done after the supervisor is gone');
    assert.equal(resultText(b, 'life'), 'started\nfinished\n');
  });

  test('exit 3 → done, outcome failed, exitCode 3', () => {
    startShell(b, 'exit3', 'echo partial; echo first-complaint >&2; echo last-complaint >&2; exit 3');
    const a = waitTerminal(b, ['exit3']).exit3;
    assert.equal(a.status, 'done');
    assert.equal(a.outcome, 'failed');
    assert.equal(a.exitCode, 3);
    assert.equal(a.signal, null);
    assert.equal(typeof a.error, 'string');
    assert.match(a.error, /status 3/);
    assert.match(a.error, /last-complaint/, 'the error quotes the last line of stderr');
    assert.equal(a.endReason, null);
    assert.equal(resultText(b, 'exit3'), 'partial\n');
  });

  test('a script that kills itself with SIGKILL → signal "SIGKILL", outcome failed', () => {
    startShell(b, 'selfkill', 'echo before; kill -9 $$; echo never');
    const a = waitTerminal(b, ['selfkill']).selfkill;
    assert.equal(a.status, 'done');
    assert.equal(a.outcome, 'failed');
    assert.equal(a.signal, 'SIGKILL');
    assert.equal(a.exitCode, null);
    assert.equal(resultText(b, 'selfkill'), 'before\n');
  });

  test('kill -9 of the agent from outside → done with signal SIGKILL; output before the kill stays readable', async () => {
    startShell(b, 'killed', 'echo before-the-kill; while :; do sleep 0.05; done');
    const a = await untilStatus(b, 'killed', (x) => x.status === 'running' && x.agentPid, 'running');
    await until('the first output', () => resultText(b, 'killed').includes('before-the-kill'), LONG);
    process.kill(a.agentPid, 'SIGKILL');
    const d = waitTerminal(b, ['killed']).killed;
    assert.equal(d.status, 'done');
    assert.equal(d.outcome, 'failed');
    assert.equal(d.signal, 'SIGKILL');
    assert.equal(d.exitCode, null);
    const r = resultJson(b, 'killed');
    assert.equal(r.lastAssistantText, 'before-the-kill\n');
    assert.equal(r.status, 'done');
  });
});

describe('status: listing and filtering', () => {
  const c = makeBox('status-list');
  const spare = makeBox('status-empty');
  test('no --name lists every run sorted by name; --name filters and is repeatable; a missing name is just not listed', () => {
    for (const n of ['charlie', 'alpha', 'bravo/two', 'bravo/one', 'Zulu']) startShell(c, n, `echo ${n.replace('/', '-')}`);
    waitTerminal(c, ['charlie', 'alpha', 'bravo/two', 'bravo/one', 'Zulu']);
    const all = c.run('status', []);
    assert.equal(all.code, 0);
    assert.deepEqual(
      all.json.agents.map((a: any) => a.name),
      ['Zulu', 'alpha', 'bravo/one', 'bravo/two', 'charlie'].sort(),
    );
    for (const a of all.json.agents) for (const k of RECORD_FIELDS) assert.ok(k in a, `${a.name} misses ${k}`);

    const two = c.run('status', ['--name', 'charlie', '--name', 'alpha', '--name', 'missing']);
    assert.equal(two.code, 0);
    assert.deepEqual(
      two.json.agents.map((a: any) => a.name),
      ['alpha', 'charlie'],
    );

    const none = c.run('status', ['--name', 'missing']);
    assert.equal(none.code, 0);
    assert.equal(none.json.ok, true);
    assert.deepEqual(none.json.agents, []);
  });

  test('a registry named explicitly that does not exist is an error for every verb but a start (a typo is not "no runs yet"), and nothing creates it', () => {
    const d = spare;
    for (const [verb, args] of [
      ['status', []],
      ['status', ['--name', 'x']],
      ['status', ['--wait', '--timeout', '1']],
      ['status', ['--wait-terminal', '--name', 'x']],
      ['result', ['--name', 'x']],
      ['search', ['--name', 'x', '--pattern', 'y']],
      ['cancel', ['--name', 'x']],
      ['resume-subagent', ['--name', 'x', '--prompt', 'echo']],
    ] as const) {
      const e = expectError(d, verb, [...args], 'E_REGISTRY_NOT_FOUND');
      assert.equal(e.details.path, d.registry);
      assert.match(e.details.hint, /SUBAGENT_DIR/);
      const flagged = expectError(d, verb, [...args, '--registry', join(d.dir, 'typo')], 'E_REGISTRY_NOT_FOUND');
      assert.match(flagged.details.hint, /--registry/);
    }
    assert.deepEqual(settledTree(d.dir), [], 'nothing created the registry');
    // A file where the registry should be is no registry: an error, for a start too.
    writeFileSync(join(d.dir, 'file'), 'x');
    for (const verb of ['status', 'start-subagent'] as const) {
      const args = verb === 'status' ? [] : ['--name', 'x', '--cli', 'shell', '--prompt', 'true'];
      const e = expectError(d, verb, [...args, '--registry', join(d.dir, 'file')], 'E_REGISTRY_NOT_DIRECTORY');
      assert.equal(e.details.path, join(d.dir, 'file'));
    }
  });
});

describe('status: crashes are seen, identities are checked', () => {
  test('supervisor killed with SIGKILL → unknown (reason, agent alive); cancel then kills the agent and the run ends cancelled', async () => {
    startShell(b, 'orphan', 'echo up; while :; do sleep 0.05; done');
    const a = await untilStatus(b, 'orphan', (x) => x.status === 'running' && x.agentPid, 'running');
    process.kill(a.pid, 'SIGKILL');
    await until('the supervisor is gone', () => !pidAlive(a.pid), LONG);
    const u = statusOf(b, 'orphan');
    assert.equal(u.status, 'unknown');
    assert.equal(typeof u.statusReason, 'string');
    assert.ok(u.statusReason.length > 0);
    assert.equal(u.agentAlive, true);
    assert.ok(pidAlive(a.agentPid), 'the agent outlived its supervisor');
    // A waiter treats unknown as terminal.
    const w = waitTerminal(b, ['orphan']).orphan;
    assert.equal(w.status, 'unknown');

    const c = b.run('cancel', ['--name', 'orphan']);
    assert.equal(c.code, 0, c.stdout);
    assert.equal(c.json.ok, true);
    assert.equal(c.json.previousStatus, 'unknown');
    assert.ok(!pidAlive(a.agentPid), 'cancel killed the orphaned agent');
    const d = statusOf(b, 'orphan');
    assert.equal(d.status, 'done');
    assert.equal(d.outcome, 'cancelled');
    assert.equal(d.agentAlive, false);
  });

  test('a record pointing at a live but unrelated process (wrong start time) is never running and that process gets no signal', async () => {
    startShell(b, 'imposter', 'echo real');
    waitTerminal(b, ['imposter']);
    const sleeper = spawn('sleep', ['300'], { stdio: 'ignore' });
    b.own.push(sleeper.pid!);
    await until('sleep runs', () => procStartTime(sleeper.pid!) !== null, LONG);
    const real = procStartTime(sleeper.pid!)!;
    const wrong = laterStartTime(real, 12345);
    const dir = runDirOf(b.registry, 'imposter');
    const path = join(dir, 'record.json');
    const rec = readJson(path);
    const fake = { pid: sleeper.pid!, startTime: wrong, bootId: bootId() };
    writeFileSync(
      path,
      JSON.stringify(
        { ...rec, status: 'running', outcome: null, exitCode: null, finishedAt: null, supervisor: fake, agentProcess: { ...fake, pgid: sleeper.pid! } },
        null,
        1,
      ),
    );
    const s = statusOf(b, 'imposter');
    assert.notEqual(s.status, 'running');
    assert.equal(s.status, 'unknown');
    assert.equal(s.agentAlive, false);

    const c = b.run('cancel', ['--name', 'imposter']);
    // Nothing of this run is alive: either "not running" or a no-op cancel; never a signal to the sleep.
    assert.ok(c.json && (c.json.ok === true || c.json.code === 'E_NOT_RUNNING'), c.stdout);
    assert.ok(pidAlive(sleeper.pid!), 'the unrelated process was not signalled');
    // The same with the right start time but another boot id (a reboot).
    writeFileSync(
      path,
      JSON.stringify(
        {
          ...rec,
          status: 'running',
          outcome: null,
          exitCode: null,
          finishedAt: null,
          supervisor: { ...fake, startTime: real, bootId: '00000000-0000-0000-0000-000000000000' },
          agentProcess: { ...fake, startTime: real, bootId: '00000000-0000-0000-0000-000000000000', pgid: sleeper.pid! },
        },
        null,
        1,
      ),
    );
    assert.equal(statusOf(b, 'imposter').status, 'unknown');
    b.run('cancel', ['--name', 'imposter']);
    assert.ok(pidAlive(sleeper.pid!), 'a process from "another boot" was not signalled');
    sleeper.kill('SIGKILL');
  });

  test('a scheduled record whose supervisor is a recycled pid is unknown, not scheduled forever', async () => {
    startShell(b, 'recycled', 'echo real');
    waitTerminal(b, ['recycled']);
    const sleeper = spawn('sleep', ['300'], { stdio: 'ignore' });
    b.own.push(sleeper.pid!);
    await until('sleep runs', () => procStartTime(sleeper.pid!) !== null, LONG);
    const path = join(runDirOf(b.registry, 'recycled'), 'record.json');
    const rec = readJson(path);
    const fake = { pid: sleeper.pid!, startTime: startTimeForm(1), bootId: bootId() };
    writeFileSync(
      path,
      JSON.stringify(
        { ...rec, status: 'scheduled', outcome: null, exitCode: null, finishedAt: null, starter: fake, supervisor: fake, agentProcess: null },
        null,
        1,
      ),
    );
    const s = statusOf(b, 'recycled');
    assert.equal(s.status, 'unknown');
    b.run('cancel', ['--name', 'recycled']);
    assert.ok(pidAlive(sleeper.pid!), 'the unrelated process was not signalled');
    assert.ok(existsSync(path));
    sleeper.kill('SIGKILL');
  });
});

describe('status: a clean end is never reported unknown', () => {
  const c = makeBox('status-clean');
  test('polling many short runs from start to end never sees "unknown"', async () => {
    const names = Array.from({ length: 8 }, (_, i) => `clean/${i}`);
    for (const n of names) startShell(c, n, 'echo quick');
    const seen = new Set<string>();
    await until(
      'every run done',
      () => {
        const r = c.run('status', []);
        assert.equal(r.code, 0, r.stdout);
        for (const a of r.json.agents) seen.add(a.status);
        assert.ok(!r.json.agents.some((a: any) => a.status === 'unknown'), `a clean run was reported unknown: ${r.stdout.slice(0, 1000)}`);
        return r.json.agents.length === names.length && r.json.agents.every((a: any) => a.status === 'done');
      },
      LONG,
      0,
    );
    assert.ok(seen.has('done'));
    for (const a of Object.values(waitTerminal(c, names))) assert.equal((a as any).outcome, 'succeeded');
  });

  test("a run that ends cleanly between status's read of the record and its liveness check is done/succeeded, not unknown (the record is read again)", async () => {
    const g = join(c.dir, 'gate-between');
    startShell(c, 'between', `${gate(g)}; echo bye`);
    const a = await untilStatus(c, 'between', (x) => x.status === 'running' && x.agentPid, 'running');
    // Held still right after it read "running", before it asks /proc whether the supervisor lives.
    const s = c.spawn('status', ['--name', 'between'], { env: { SUBAGENT_TEST_PAUSE_AT: 'observe-before-liveness' } });
    await until('status holds still after its first read', () => isStopped(s.pid) || s.settled(), LONG);
    assert.equal(s.settled(), false, 'status returned without stopping at its checkpoint');
    // The run ends cleanly and its supervisor exits: the liveness check will find it dead.
    open(g);
    await until(
      'the run is done and its supervisor gone',
      () => readJson(join(runDirOf(c.registry, 'between'), 'record.json')).status === 'done' && !pidAlive(a.pid),
      LONG,
    );
    process.kill(s.pid, 'SIGCONT');
    const r = await s.done;
    assert.equal(r.code, 0, r.stdout + r.stderr);
    const got = r.json.agents[0];
    assert.equal(got.status, 'done', `a clean end was reported ${got.status}: ${r.stdout}`);
    assert.equal(got.outcome, 'succeeded');
    assert.equal(got.exitCode, 0);
    assert.equal(got.statusReason, null);
  });
});

describe('status: --brief and --fields', () => {
  const BRIEF = ['name', 'status', 'outcome', 'reason', 'run', 'exitCode', 'finishedAt', 'stalled'];
  const fb = makeBox('status-fields');
  const line = (args: string[], env: NodeJS.ProcessEnv = {}) => {
    const r = fb.run('status', args, { env });
    assert.equal(r.code, 0, r.stdout + r.stderr);
    return r;
  };

  test('--brief: the fields an orchestrator acts on, in order, from the cache and without it alike; --fields: those named, in the order given', async () => {
    for (const n of ['ok', 'bad']) startShell(fb, n, n === 'ok' ? 'echo ok' : 'exit 3');
    const g = join(fb.dir, 'gate-fields');
    startShell(fb, 'live', `${gate(g)}`);
    waitTerminal(fb, ['ok', 'bad']);
    await untilStatus(fb, 'live', (a) => a.status === 'running', 'running');
    const full = line([]).json.agents as any[];
    const briefs = [line(['--brief']), line(['--brief']), line(['--brief'], { SUBAGENT_FAST_PATHS: '0' })];
    for (const r of briefs) {
      assert.deepEqual(
        r.json.agents,
        full.map((a) => Object.fromEntries(BRIEF.map((f) => [f, a[f]]))),
      );
      for (const a of r.json.agents) assert.deepEqual(Object.keys(a), BRIEF, 'in this order, nothing else');
    }
    assert.ok(briefs[0]!.stdout.length * 3 < line([]).stdout.length, 'a brief listing is a fraction of the full one');
    const picked = line(['--fields', 'exitCode,name', '--name', 'bad']).json.agents;
    assert.deepEqual(picked, [{ exitCode: 3, name: 'bad' }]);
    // The waits print the fields chosen too, and so do the errors that carry the listing.
    assert.deepEqual(line(['--wait-terminal', '--name', 'ok', '--brief']).json.agents[0], Object.fromEntries(BRIEF.map((f) => [f, full[2][f]])));
    const timedOut = fb.run('status', ['--wait-terminal', '--name', 'live', '--timeout', '0.3', '--fields', 'name,status']);
    assert.equal(timedOut.code, 124, timedOut.stdout);
    assert.deepEqual(timedOut.json.agents, [{ name: 'live', status: 'running' }]);
    const failed = fb.run('status', ['--require-success', '--name', 'bad', '--brief']);
    assert.equal(failed.json.code, 'E_RUN_FAILED');
    assert.deepEqual(Object.keys(failed.json.agents[0]), BRIEF);
    open(g);
    waitTerminal(fb, ['live']);
  });

  test('an unknown field is E_ARG_INVALID, its hint listing the fields; --brief with --fields, and either with a text view or --runs, are refused', () => {
    const bad = expectError(fb, 'status', ['--fields', 'name,bogus'], 'E_ARG_INVALID');
    assert.match(bad.error, /bogus/);
    for (const f of ['name', 'status', 'exitCode', 'usageTotal', 'queuePosition']) assert.ok(bad.details.hint.includes(f), bad.details.hint);
    expectError(fb, 'status', ['--fields', ','], 'E_ARG_INVALID');
    expectError(fb, 'status', ['--brief', '--fields', 'name'], 'E_ARG_INVALID');
    for (const view of [['--tree'], ['--format', 'table'], ['--watch', '1'], ['--name', 'ok', '--runs']])
      expectError(fb, 'status', [...view, '--brief'], 'E_ARG_INVALID');
  });
});
