/**
 * Issue 16, point 5: end hooks. A run's --on-end and the registry's executable hooks/on-end run once per
 * run when it ends (done, or unknown when its supervisor died), detached, with the run's status entry on
 * stdin and SUBAGENT_NAME/STATUS/OUTCOME in their environment; their failure or hang never changes the
 * record nor holds up the supervisor or a verb, and a hang is killed after SUBAGENT_HOOK_TIMEOUT_SEC.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { assertOk } from '../support/run.js';
import { LONG, NOTICE_MS, until } from '../support/wait.js';
import { pidAlive, pidsWithEnv, untilGone } from '../support/procs.js';
import { quiet, testBox, type Box } from '../support/box.js';
import { runDirPath } from '../support/registry.js';
import { gate, open, startShell, statusOf, statusOfAsync, untilStatus, waitTerminal } from '../support/shell.js';

function readText(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}

function lines(path: string): string[] {
  return readText(path).split('\n').filter(Boolean);
}

/** A hook that records what it was given: stdin into `<out>.<run>.json`, its environment into `<out>.<run>.env`, a line into `<out>.count`. */
function recorder(out: string): string {
  return `cat > '${out}'.$SUBAGENT_RUN.json; env | grep '^SUBAGENT_' | sort > '${out}'.$SUBAGENT_RUN.env; echo "$SUBAGENT_NAME $SUBAGENT_RUN $SUBAGENT_STATUS $SUBAGENT_OUTCOME" >> '${out}.count'`;
}

function envOf(path: string): Record<string, string> {
  return Object.fromEntries(lines(path).map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]));
}

function oneEntry(line: any): any {
  assert.equal(line.agents.length, 1, JSON.stringify(line));
  return line.agents[0];
}

/** The run's status entry as `status` prints it now. */
async function entry(b: Box, name: string): Promise<any> {
  return statusOfAsync(b, name);
}

describe('end hooks', { concurrency: 2 }, () => {
  test('--on-end fires once per run, with the status entry on stdin and the run in its environment; resume keeps it', async (t) => {
    const b = testBox(t, 'hook-run');
    const out = join(b.dir, 'h');
    startShell(b, 'r/one', 'echo hello; exit 3', ['--on-end', recorder(out)]);
    await until('the hook ran', () => lines(`${out}.count`).length === 1, LONG);
    await quiet(b);
    const a = await entry(b, 'r/one');
    assert.equal(a.status, 'done');
    assert.equal(a.outcome, 'failed');
    assert.equal(a.onEnd, recorder(out));
    assert.deepEqual(JSON.parse(readText(`${out}.1.json`)), a, 'stdin: the run as status reports it');
    const env = envOf(`${out}.1.env`);
    assert.equal(env.SUBAGENT_NAME, 'r/one');
    assert.equal(env.SUBAGENT_STATUS, 'done');
    assert.equal(env.SUBAGENT_OUTCOME, 'failed');
    assert.equal(env.SUBAGENT_REASON, 'exit-code', 'why it failed, as the entry says');
    assert.equal(env.SUBAGENT_REASON, a.reason);
    assert.equal(env.SUBAGENT_RUN, '1');
    assert.equal(env.SUBAGENT_DIR, b.registry);
    assert.equal(env.SUBAGENT_RUN_DIR, runDirPath(b.registry, 'r/one'));
    assert.equal(env.SUBAGENT_RUN_ID, undefined, 'no run marker: a cancel of a run never finds the hook');
    assert.match(readText(join(runDirPath(b.registry, 'r/one'), 'on-end.log')), /exited with status 0/);
    for (const f of ['on-end.log', 'on-end.json'])
      assert.equal(statSync(join(runDirPath(b.registry, 'r/one'), f)).mode & 0o777, 0o600, `${f} is private, as the registry's files are`);

    // Readers do not fire it again.
    for (let i = 0; i < 3; i++) assertOk(b.run('status', []), 'status');
    assertOk(b.run('result', ['--name', 'r/one', '--json']), 'result');

    assertOk(b.run('resume-subagent', ['--name', 'r/one', '--prompt', 'echo again']), 'resume');
    await until('the hook ran for run 2', () => lines(`${out}.count`).length === 2, LONG);
    await quiet(b);
    assert.deepEqual(lines(`${out}.count`), ['r/one 1 done failed', 'r/one 2 done succeeded']);
    assert.equal(JSON.parse(readText(`${out}.2.json`)).run, 2);

    assertOk(b.run('resume-subagent', ['--name', 'r/one', '--prompt', 'true', '--on-end', '']), 'resume without the hook');
    waitTerminal(b, ['r/one']);
    await quiet(b);
    assert.equal(statusOf(b, 'r/one').onEnd, null);
    assert.equal(lines(`${out}.count`).length, 2, '--on-end "" removed it');
    assert.equal(existsSync(join(runDirPath(b.registry, 'r/one', 3), 'on-end.json')), false, 'no hook, no claim');
  });

  test('the registry hook (an executable hooks/on-end) fires for every run, beside the own hook of a run', async (t) => {
    const b = testBox(t, 'hook-registry');
    const all = join(b.dir, 'all');
    const own = join(b.dir, 'own');
    mkdirSync(join(b.registry, 'hooks'), { recursive: true });
    const hook = join(b.registry, 'hooks', 'on-end');
    writeFileSync(hook, `#!/bin/sh\nread -r entry\necho "$SUBAGENT_NAME $SUBAGENT_OUTCOME \${#entry}" >> '${all}'\n`);
    chmodSync(hook, 0o755);
    startShell(b, 'g/a', 'true');
    startShell(b, 'g/b', 'exit 1', ['--on-end', recorder(own)]);
    startShell(b, 'g/c', 'sleep 300');
    assertOk(b.run('cancel', ['--name', 'g/c']), 'cancel');
    await until('the registry hook ran for each run', () => lines(all).length === 3, LONG);
    await until('the run hook ran', () => lines(`${own}.count`).length === 1, LONG);
    await quiet(b);
    const seen = lines(all).map((l) => l.split(' ').slice(0, 2).join(' '));
    assert.deepEqual(seen.sort(), ['g/a succeeded', 'g/b failed', 'g/c cancelled']);
    for (const l of lines(all)) assert.ok(Number(l.split(' ')[2]) > 100, `the entry came on stdin: ${l}`);
    assert.deepEqual(lines(`${own}.count`), ['g/b 1 done failed']);
    assert.match(readText(join(runDirPath(b.registry, 'g/b'), 'registry-on-end.log')), /exited with status 0/);

    // Not executable: not a hook.
    chmodSync(hook, 0o644);
    startShell(b, 'g/d', 'true');
    waitTerminal(b, ['g/d']);
    await quiet(b);
    assert.equal(lines(all).length, 3);
  });

  test('a failing hook and a hanging one change nothing and hold up nobody; the hanging one is killed after its timeout', async (t) => {
    const b = testBox(t, 'hook-bad');
    // Failing.
    startShell(b, 'bad/fails', 'echo out', ['--on-end', 'echo oops >&2; exit 1']);
    const log = join(runDirPath(b.registry, 'bad/fails'), 'on-end.log');
    const done = waitTerminal(b, ['bad/fails'])['bad/fails'];
    await until('the hook failed', () => /exited with status 1/.test(readText(log)), LONG);
    assert.match(readText(log), /oops/);
    assert.deepEqual(await entry(b, 'bad/fails'), done, 'the record is as the supervisor left it');
    assert.equal(done.outcome, 'succeeded');

    // Hanging on a gate, within its time: the run ends, its supervisor exits, the verbs answer.
    const g = join(b.dir, 'gate');
    const hp = join(b.dir, 'hook-pid');
    startShell(b, 'bad/hangs', 'true', ['--on-end', `echo $$ > '${hp}'; ${gate(g)}`]);
    const ended = waitTerminal(b, ['bad/hangs'])['bad/hangs'];
    const hookPid = await until('the hook runs', () => Number(readText(hp)) || null, LONG);
    await untilGone(ended.pid, 'the supervisor exits while its hook runs', NOTICE_MS);
    assert.ok(pidAlive(hookPid), 'the hook still runs');
    assert.deepEqual(await entry(b, 'bad/hangs'), ended);
    open(g);
    await untilGone(hookPid, 'the hook ends once its gate opens', NOTICE_MS);

    // Hanging past SUBAGENT_HOOK_TIMEOUT_SEC, deaf to SIGTERM: killed, with all it started.
    const kp = join(b.dir, 'kill-pids');
    startShell(b, 'bad/killed', 'true', ['--on-end', `trap '' TERM; sleep 300 & echo $! > '${kp}'; echo $$ >> '${kp}'; wait`], {
      env: { SUBAGENT_HOOK_TIMEOUT_SEC: '1' },
    });
    const killed = waitTerminal(b, ['bad/killed'])['bad/killed'];
    const pids = await until('the hook runs', () => (lines(kp).length === 2 ? lines(kp).map(Number) : null), LONG);
    for (const p of pids) await untilGone(p, `hook process ${p} is killed after the timeout`, LONG);
    const klog = readText(join(runDirPath(b.registry, 'bad/killed'), 'on-end.log'));
    assert.match(klog, /still running after 1 s: stopped/);
    await quiet(b);
    assert.deepEqual(pidsWithEnv(b.marker), [], 'nothing of the hook is left');
    assert.deepEqual(await entry(b, 'bad/killed'), killed, 'the record is as the supervisor left it');
  });

  test('after a kill -9 of the supervisor reading the run fires nothing; status --announce fires it exactly once, even when two race', async (t) => {
    const b = testBox(t, 'hook-crash');
    const out = join(b.dir, 'h');
    const g = join(b.dir, 'gate');
    startShell(b, 'k', gate(g), ['--on-end', recorder(out)]);
    const a = await untilStatus(b, 'k', (x) => x.status === 'running' && x.agentPid, 'running');
    process.kill(a.pid, 'SIGKILL');
    await untilGone(a.pid, 'the supervisor is dead');
    // Reading never acts: listing, status, result, search and a wait see `unknown` and start nothing
    // (the claim, on-end.json, would be made before the verb answers).
    const claim = join(runDirPath(b.registry, 'k', 1), 'on-end.json');
    assert.equal((await statusOfAsync(b, 'k')).status, 'unknown');
    assertOk(await b.runAsync('status', []));
    await b.runAsync('result', ['--name', 'k']);
    await b.runAsync('search', ['--name', 'k', '--pattern', 'x']);
    assertOk(await b.runAsync('status', ['--wait-terminal', '--name', 'k', '--timeout', '5']));
    assert.equal(existsSync(claim), false, 'a reading verb fired the end hooks');
    const announced = async () => oneEntry(assertOk(await b.runAsync('status', ['--name', 'k', '--announce'])));
    const [one, two] = await Promise.all([announced(), announced()]);
    assert.equal(one.status, 'unknown');
    assert.equal(two.status, 'unknown');
    await until('the hook ran', () => lines(`${out}.count`).length > 0, LONG);
    // The orphaned agent is cancelled: the run becomes done, and the hook does not fire again.
    assertOk(b.run('cancel', ['--name', 'k']), 'cancel');
    assert.equal(statusOf(b, 'k').outcome, 'cancelled');
    await quiet(b);
    assert.deepEqual(lines(`${out}.count`), ['k 1 unknown '], 'exactly once, as unknown');
    const given = JSON.parse(readText(`${out}.1.json`));
    assert.equal(given.status, 'unknown');
    assert.equal(given.agentAlive, true);
    assert.match(given.statusReason, /supervisor/);
    assert.equal(envOf(`${out}.1.env`).SUBAGENT_OUTCOME, '');
    assert.equal(envOf(`${out}.1.env`).SUBAGENT_REASON, '');
  });
});
