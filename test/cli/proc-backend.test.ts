/**
 * The process backends through the executables (lib/proc/, docs/platforms.md): SUBAGENT_PROC_BACKEND=ps
 * really asks the `ps` found on PATH — once for a whole listing — and not /proc; identities recorded by
 * one backend are checked by the other where it can, and reported, never signalled, where it cannot;
 * a bad setting or a missing `ps` is a clear error.
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BIN } from '../support/paths.js';
import { assertError } from '../support/run.js';
import { LONG, until } from '../support/wait.js';
import { pidAlive } from '../support/procs.js';
import { readJson, runDirOf } from '../support/registry.js';
import { makeBox, type Box } from '../support/box.js';
import { expectError, gate, open, startShell, statusOf, untilStatus, waitTerminal } from '../support/shell.js';

const b = makeBox('proc-backend');

const REAL_PS = spawnSync('/bin/sh', ['-c', 'command -v ps'], { encoding: 'utf8' }).stdout.trim();
const LOG = join(b.dir, 'ps-calls.log');
/** A directory holding a `ps` that logs who called it ($PPID: the verb or supervisor) and runs the real one. */
const WRAPPED = join(b.dir, 'wrapped');
/** A directory holding a `ps` that lists no process but itself (and only that). */
const SELF_ONLY = join(b.dir, 'self-only-ps');
/** A directory with node and nothing else: no ps. */
const NO_PS = join(b.dir, 'no-ps');
mkdirSync(WRAPPED);
mkdirSync(SELF_ONLY);
mkdirSync(NO_PS);
writeFileSync(join(WRAPPED, 'ps'), `#!/bin/sh\necho "$PPID" >> '${LOG}'\nexec '${REAL_PS}' "$@"\n`);
writeFileSync(join(SELF_ONLY, 'ps'), `#!/bin/sh\necho "$$ $PPID $$ S $(date '+%a %b %e %H:%M:%S %Y') ps"\n`);
chmodSync(join(WRAPPED, 'ps'), 0o755);
chmodSync(join(SELF_ONLY, 'ps'), 0o755);
symlinkSync(process.execPath, join(NO_PS, 'node'));

const PS = { SUBAGENT_PROC_BACKEND: 'ps', PATH: `${WRAPPED}:${process.env.PATH}` };
const LINUX = { SUBAGENT_PROC_BACKEND: 'linux', PATH: `${WRAPPED}:${process.env.PATH}` };

/** The callers of ps logged so far, one pid per call. */
function calls(): number[] {
  return existsSync(LOG) ? readFileSync(LOG, 'utf8').split('\n').filter(Boolean).map(Number) : [];
}

async function runningUnder(box: Box, env: NodeJS.ProcessEnv, name: string, g: string): Promise<any> {
  startShell(box, name, `${gate(g)}; echo ${name}`, [], { env });
  return untilStatus(box, name, (x) => x.status === 'running' && x.agentPid, 'running');
}

describe('the ps process backend', () => {
  test('SUBAGENT_PROC_BACKEND=ps asks the ps on PATH: once for a listing of several running runs; the linux backend never', async () => {
    assert.ok(REAL_PS.startsWith('/'), `a ps on PATH: ${REAL_PS}`);
    const g = join(b.dir, 'gate-many');
    const names = ['many/a', 'many/b', 'many/c', 'many/d', 'many/e'];
    for (const n of names) startShell(b, n, `${gate(g)}; echo ${n}`, [], { env: PS });
    await until(
      'all running',
      () => {
        const r = b.run('status', ['--prefix', 'many'], { env: PS });
        return r.json?.agents?.length === names.length && r.json.agents.every((a: any) => a.status === 'running' && a.agentPid);
      },
      LONG,
      50,
    );
    assert.ok(calls().length > 0, 'start, the supervisors and status asked ps');
    const supervisors = new Set(b.run('status', ['--prefix', 'many'], { env: PS }).json.agents.map((a: any) => a.pid as number));
    const verbCalls = (from: number) =>
      calls()
        .slice(from)
        .filter((p) => !supervisors.has(p));

    const n0 = calls().length;
    const listed = b.run('status', ['--prefix', 'many'], { env: PS });
    assert.equal(listed.code, 0, listed.stdout);
    assert.deepEqual(
      listed.json.agents.map((a: any) => [a.status, a.statusReason]),
      names.map(() => ['running', null]),
    );
    assert.equal(verbCalls(n0).length, 1, `one ps for the whole listing of ${names.length} running runs`);

    const n1 = calls().length;
    const linux = b.run('status', ['--prefix', 'many'], { env: LINUX });
    assert.deepEqual(
      linux.json.agents.map((a: any) => a.status),
      names.map(() => 'running'),
      'the linux backend checks what ps recorded',
    );
    assert.equal(verbCalls(n1).length, 0, 'the linux backend reads /proc, never ps');

    // What the verbs believe is what ps says, not what /proc holds: a ps that lists only itself makes
    // the living runs look dead, and nothing is signalled on its word.
    const blind = b.run('status', ['--name', 'many/a'], { env: { SUBAGENT_PROC_BACKEND: 'ps', PATH: `${SELF_ONLY}:${process.env.PATH}` } });
    assert.equal(blind.json.agents[0].status, 'unknown');
    const blindCancel = b.run('cancel', ['--name', 'many/a'], { env: { SUBAGENT_PROC_BACKEND: 'ps', PATH: `${SELF_ONLY}:${process.env.PATH}` } });
    assertError(blindCancel, 'E_NOT_RUNNING');
    const agentA = listed.json.agents[0];
    assert.ok(pidAlive(agentA.pid) && pidAlive(agentA.agentPid), 'nothing was signalled');
    assert.equal(statusOf(b, 'many/a', { env: PS }).status, 'running');

    // Cancel through ps: the tree is found and stopped.
    const c = b.run('cancel', ['--name', 'many/a'], { env: PS });
    assert.equal(c.json?.ok, true, c.stdout);
    assert.deepEqual(c.json.survivors, []);
    assert.ok(!pidAlive(agentA.agentPid), 'the agent is gone');
    open(g);
    const end = waitTerminal(b, names, { env: PS });
    assert.deepEqual(
      names.map((n) => end[n].outcome),
      ['cancelled', 'succeeded', 'succeeded', 'succeeded', 'succeeded'],
    );
  });

  test('identities cross backends: linux checks what ps recorded; ps reports what linux recorded and never signals it', async () => {
    const g = join(b.dir, 'gate-mixed');
    const byLinux = await runningUnder(b, LINUX, 'mixed/linux', g);
    const byPs = await runningUnder(b, PS, 'mixed/ps', g);
    assert.match(readJson(join(runDirOf(b.registry, 'mixed/ps'), 'record.json')).supervisor.startTime, /^epoch:\d+$/);
    assert.match(readJson(join(runDirOf(b.registry, 'mixed/linux'), 'record.json')).supervisor.startTime, /^\d+$/);

    for (const a of b.run('status', ['--prefix', 'mixed'], { env: LINUX }).json.agents)
      assert.deepEqual([a.status, a.statusReason, a.agentAlive], ['running', null, true], a.name);
    const seen = Object.fromEntries(b.run('status', ['--prefix', 'mixed'], { env: PS }).json.agents.map((a: any) => [a.name, a]));
    assert.deepEqual([seen['mixed/ps'].status, seen['mixed/ps'].statusReason], ['running', null]);
    assert.equal(seen['mixed/linux'].status, 'running', 'never guessed dead');
    assert.match(seen['mixed/linux'].statusReason, /cannot check/);

    const refused = b.run('cancel', ['--name', 'mixed/linux'], { env: PS });
    const j = assertError(refused, 'E_IDENTITY_UNCHECKABLE');
    assert.equal(j.details.pid, byLinux.pid);
    assert.equal(j.details.backend, 'ps');
    assert.ok(pidAlive(byLinux.pid) && pidAlive(byLinux.agentPid), 'nothing was signalled');
    assert.equal(statusOf(b, 'mixed/linux', { env: LINUX }).cancelRequested, false, 'nothing was recorded');

    for (const [name, a] of [
      ['mixed/linux', byLinux],
      ['mixed/ps', byPs],
    ] as const) {
      const c = b.run('cancel', ['--name', name], { env: LINUX });
      assert.equal(c.json?.ok, true, c.stdout);
      assert.equal(c.json.outcome, 'cancelled');
      assert.ok(!pidAlive(a.agentPid), `${name}: the agent is gone`);
    }
  });

  test('a SUBAGENT_PROC_BACKEND that names no backend, and a ps that is not on PATH: E_PROC_UNAVAILABLE, nothing changed', () => {
    const bad = expectError(b, 'start-subagent', ['--name', 'never', '--cli', 'shell', '--prompt', 'echo no'], 'E_PROC_UNAVAILABLE', {
      env: { SUBAGENT_PROC_BACKEND: 'procfs' },
    });
    assert.equal(bad.details.variable, 'SUBAGENT_PROC_BACKEND');
    assert.equal(bad.details.value, 'procfs');
    const before = readFileSync(join(runDirOf(b.registry, 'many/b'), 'record.json'), 'utf8');
    const r = spawnSync(process.execPath, [join(BIN, 'start-subagent'), '--name', 'never', '--cli', 'shell', '--prompt', 'echo no'], {
      cwd: b.dir,
      env: { ...b.env, SUBAGENT_PROC_BACKEND: 'ps', PATH: NO_PS },
      encoding: 'utf8',
    });
    const missing = assertError({ code: r.status, signal: r.signal, stdout: r.stdout, stderr: r.stderr, json: JSON.parse(r.stdout) }, 'E_PROC_UNAVAILABLE');
    assert.equal(missing.details.program, 'ps');
    assert.match(missing.error, /not on PATH/);
    // A ps whose output is not in the form expected (here: no rows at all) is an error too, not a world
    // without processes.
    const mute = join(b.dir, 'mute-ps');
    mkdirSync(mute);
    writeFileSync(join(mute, 'ps'), '#!/bin/sh\nexit 0\n');
    chmodSync(join(mute, 'ps'), 0o755);
    const unread = expectError(b, 'start-subagent', ['--name', 'never', '--cli', 'shell', '--prompt', 'echo no'], 'E_PROC_UNAVAILABLE', {
      env: { SUBAGENT_PROC_BACKEND: 'ps', PATH: `${mute}:${process.env.PATH}` },
    });
    assert.match(unread.error, /cannot read the output of ps/);
    assert.equal(existsSync(join(b.registry, 'agents', 'never')), false);
    assert.equal(readFileSync(join(runDirOf(b.registry, 'many/b'), 'record.json'), 'utf8'), before);
  });
});
