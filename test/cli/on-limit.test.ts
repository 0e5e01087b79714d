/**
 * --on-limit wait (issue 25, point 2) through the real executables, with a fake `claude` on PATH that
 * replays the captured rate-limit stream (test/fixtures/agents/claude/rate-limit-rejected.ndjson, its
 * reset moved a few seconds ahead) for its first calls and a plain reply after: the run is parked —
 * its next attempt `running` with `parkedUntil` and a statusReason — then resumed in the same session
 * at the reset, with the continuation prompt (or its own prompt when the agent never began); a cancel
 * ends a parked run at once; a limit without a reset time, and the last retry's, end the run as `fail`
 * does. The real CLIs against the fake model servers: test/e2e/on-limit.test.ts.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { FIXTURES } from '../support/paths.js';
import { assertOk } from '../support/run.js';
import { makeBox } from '../support/box.js';
import { expectError, resultText, untilStatus, waitTerminalAsync } from '../support/shell.js';
import { isStopped, pidAlive } from '../support/procs.js';
import { updateRecord } from '../../lib/registry/store.js';
import { recordOf, runDirOf } from '../support/registry.js';
import { until } from '../support/wait.js';

const CLAUDE = join(FIXTURES, 'agents', 'claude');
const DEFAULT_PROMPT = 'Your previous turn was cut off by a usage limit, which has now reset. Continue the task where you left off.';
const box = makeBox('on-limit');
const fakeBin = join(box.dir, 'fakebin');
mkdirSync(fakeBin, { recursive: true });

/**
 * A fake claude for the name `tag`: its first `limited` calls print the rate-limit stream, the limit
 * resetting `resetSec` seconds after the call (no rate_limit_event at all: `null`), its later calls the
 * plain reply. Each call's arguments and stdin are kept as argv-N and stdin-N in the box's `tag`/.
 * `began`: the limited call says the model answered before the limit (output tokens counted).
 */
function fakeClaude(tag: string, limited: number, resetSec: number | null, { began = false } = {}): string {
  const dir = join(box.dir, tag);
  mkdirSync(dir, { recursive: true });
  let limit = readFileSync(join(CLAUDE, 'rate-limit-rejected.ndjson'), 'utf8');
  if (resetSec === null)
    limit = limit
      .split('\n')
      .filter((l) => !l.includes('"rate_limit_event"'))
      .join('\n');
  if (began) limit = limit.replaceAll('"output_tokens":0', '"output_tokens":12');
  writeFileSync(join(dir, 'limit.ndjson'), limit);
  const program = join(fakeBin, `claude-${tag}`);
  writeFileSync(
    program,
    [
      '#!/bin/sh',
      `d='${dir}'`,
      'n=$(( $(cat "$d/count" 2>/dev/null || echo 0) + 1 )); echo $n > "$d/count"',
      `printf '%s\\n' "$@" > "$d/argv-$n"; cat > "$d/stdin-$n"`,
      `if [ $n -le ${limited} ]; then`,
      `  sed "s/\\"resetsAt\\":[0-9]*/\\"resetsAt\\":$(( $(date +%s) + ${resetSec ?? 0} ))/" "$d/limit.ndjson"; exit 1`,
      'fi',
      `cat '${join(CLAUDE, 'plain-reply.ndjson')}'`,
    ].join('\n') + '\n',
  );
  chmodSync(program, 0o755);
  // The run finds `claude` on PATH: one directory per fake.
  const bin = join(dir, 'bin');
  mkdirSync(bin, { recursive: true });
  writeFileSync(join(bin, 'claude'), `#!/bin/sh\nexec '${program}' "$@"\n`);
  chmodSync(join(bin, 'claude'), 0o755);
  return dir;
}

function envOf(dir: string): NodeJS.ProcessEnv {
  return { PATH: `${join(dir, 'bin')}:${box.env.PATH}` };
}

/** A run's supervisor.log, for the message of an assertion about how it ended. */
function supervisorLog(name: string, run: number): string {
  const log = join(runDirOf(box.registry, name, run), 'supervisor.log');
  return existsSync(log) ? readFileSync(log, 'utf8') : '(none)';
}

function callsOf(dir: string): number {
  return existsSync(join(dir, 'count')) ? Number(readFileSync(join(dir, 'count'), 'utf8')) : 0;
}

describe('the options', () => {
  test('--on-limit, --limit-retries and SUBAGENT_ON_LIMIT: a bad value is E_ARG_INVALID before anything is recorded', () => {
    const env = envOf(fakeClaude('bad', 0, null));
    for (const args of [
      ['--on-limit', 'later'],
      ['--limit-retries', '-1'],
      ['--limit-retries', 'many'],
      ['--limit-retries', '1001'],
      ['--limit-prompt', ''],
    ]) {
      expectError(box, 'start-subagent', ['--name', 'bad/opt', '--cli', 'claude', '--prompt', 'x', ...args], 'E_ARG_INVALID', { env });
    }
    const e = expectError(box, 'start-subagent', ['--name', 'bad/env', '--cli', 'shell', '--prompt', 'true'], 'E_ARG_INVALID', {
      env: { SUBAGENT_ON_LIMIT: 'sometimes' },
    });
    assert.equal(e.details.variable, 'SUBAGENT_ON_LIMIT');
    assert.ok(!existsSync(join(box.registry, 'agents', 'bad+opt')), 'nothing recorded');
  });

  test('recorded as onLimit (fail: not at all), from the flag, the variable or a batch line; a resume keeps it unless given', async () => {
    const dir = fakeClaude('opts', 0, null);
    const env = envOf(dir);
    assertOk(box.run('start-subagent', ['--name', 'o/flag', '--cli', 'claude', '--prompt', 'x', '--on-limit', 'wait', '--limit-retries', '5'], { env }));
    assertOk(
      box.run('start-subagent', ['--name', 'o/env', '--cli', 'claude', '--prompt', 'x', '--limit-prompt', 'go on'], {
        env: { ...env, SUBAGENT_ON_LIMIT: 'wait' },
      }),
    );
    assertOk(box.run('start-subagent', ['--name', 'o/fail', '--cli', 'claude', '--prompt', 'x'], { env }));
    writeFileSync(
      join(box.dir, 'limit.jsonl'),
      `${JSON.stringify({ name: 'o/batch', cli: 'claude', prompt: 'x', onLimit: 'wait', limitRetries: 2, limitPrompt: 'more' })}\n`,
    );
    assertOk(box.run('start-subagent', ['--batch', 'limit.jsonl'], { env }));
    await waitTerminalAsync(box, ['o/flag', 'o/env', 'o/fail', 'o/batch']);
    assert.deepEqual(recordOf(box.registry, 'o/flag').onLimit, { action: 'wait', prompt: null, retries: 5, retry: 0 });
    assert.deepEqual(recordOf(box.registry, 'o/env').onLimit, { action: 'wait', prompt: 'go on', retries: 3, retry: 0 });
    assert.deepEqual(recordOf(box.registry, 'o/batch').onLimit, { action: 'wait', prompt: 'more', retries: 2, retry: 0 });
    assert.ok(!('onLimit' in recordOf(box.registry, 'o/fail')), 'fail, the default, is not written');
    assertOk(box.run('resume-subagent', ['--name', 'o/flag', '--prompt', 'y', '--limit-retries', '1'], { env }));
    assertOk(box.run('resume-subagent', ['--name', 'o/env', '--prompt', 'y', '--on-limit', 'fail'], { env }));
    await waitTerminalAsync(box, ['o/flag', 'o/env']);
    assert.deepEqual(recordOf(box.registry, 'o/flag', 2).onLimit, { action: 'wait', prompt: null, retries: 1, retry: 0 }, 'kept, its retries replaced');
    assert.ok(!('onLimit' in recordOf(box.registry, 'o/env', 2)), '--on-limit fail drops it');
  });
});

describe('--on-limit wait', () => {
  test('parked until the reset (running, parkedUntil, statusReason), then resumed in the same session with its prompt; its answer; both runs in the history', async () => {
    const dir = fakeClaude('park', 1, 12);
    assertOk(box.run('start-subagent', ['--name', 'p/one', '--cli', 'claude', '--prompt', 'do the thing', '--on-limit', 'wait'], { env: envOf(dir) }));
    const parked = await untilStatus(box, 'p/one', (a) => a.run === 2 && a.status === 'running' && a.parkedUntil !== null, 'parked');
    assert.match(parked.statusReason, /^parked: rate limit, resumes at \S+ \(attempt 1 of 3\)$/);
    assert.equal(parked.agentPid, null);
    const brief = assertOk(box.run('status', ['--name', 'p/one', '--brief'])).agents[0];
    if (brief.run === 2 && brief.status === 'running') assert.equal(brief.parkedUntil, parked.parkedUntil, '--brief shows it where set');
    assert.equal(callsOf(dir), 1, 'no agent while parked');
    const first = recordOf(box.registry, 'p/one', 1);
    assert.equal(first.status, 'done');
    assert.equal(first.reason, 'rate-limit');
    const reset = Date.parse(first.resetsAt);
    assert.ok(Date.parse(parked.parkedUntil) >= reset && Date.parse(parked.parkedUntil) < reset + 1000, 'the reset plus less than 1 s of jitter');
    const a = (await waitTerminalAsync(box, ['p/one']))['p/one'];
    assert.equal(a.outcome, 'succeeded', a.error);
    assert.equal(a.run, 2);
    assert.equal(a.parkedUntil, null);
    const started = Date.parse(recordOf(box.registry, 'p/one', 2).agentStartedAt);
    assert.ok(started >= reset && started < reset + 2000, `resumed within 2 s of the reset (${started - reset} ms)`);
    const argv = readFileSync(join(dir, 'argv-2'), 'utf8').split('\n');
    assert.equal(argv[argv.indexOf('--resume') + 1], first.sessionId, 'the same session');
    assert.equal(readFileSync(join(dir, 'stdin-2'), 'utf8'), 'do the thing', 'the agent never began: its own prompt again');
    assert.equal(resultText(box, 'p/one').trimEnd(), 'hello world');
    const runs = assertOk(box.run('status', ['--name', 'p/one', '--runs'])).runs;
    assert.deepEqual(
      runs.map((r: any) => [r.run, r.outcome, r.reason]),
      [
        [1, 'failed', 'rate-limit'],
        [2, 'succeeded', null],
      ],
    );
  });

  test('an agent that began is resumed with the continuation prompt (--limit-prompt, else the default)', async () => {
    const dir = fakeClaude('began', 1, 2, { began: true });
    assertOk(box.run('start-subagent', ['--name', 'p/began', '--cli', 'claude', '--prompt', 'work', '--on-limit', 'wait'], { env: envOf(dir) }));
    assert.equal((await waitTerminalAsync(box, ['p/began']))['p/began'].outcome, 'succeeded');
    assert.equal(readFileSync(join(dir, 'stdin-2'), 'utf8'), DEFAULT_PROMPT);
    const own = fakeClaude('began2', 1, 2, { began: true });
    assertOk(
      box.run('start-subagent', ['--name', 'p/began2', '--cli', 'claude', '--prompt', 'work', '--on-limit', 'wait', '--limit-prompt', 'keep going'], {
        env: envOf(own),
      }),
    );
    assert.equal((await waitTerminalAsync(box, ['p/began2']))['p/began2'].outcome, 'succeeded');
    assert.equal(readFileSync(join(own, 'stdin-2'), 'utf8'), 'keep going');
  });

  test('status --wait wakes when the run parks and when it goes on', async () => {
    // The reset 15 s ahead: long enough for the test to see the run parked, and wait on it, on a loaded machine.
    const dir = fakeClaude('wake', 1, 15);
    // The fake's first call waits for a gate, so that the wait starts on the running run.
    const gate = join(dir, 'go');
    const program = join(fakeBin, 'claude-wake');
    writeFileSync(program, readFileSync(program, 'utf8').replace('#!/bin/sh\n', `#!/bin/sh\nwhile [ ! -e '${gate}' ]; do sleep 0.05; done\n`));
    assertOk(box.run('start-subagent', ['--name', 'p/wake', '--cli', 'claude', '--prompt', 'x', '--on-limit', 'wait'], { env: envOf(dir) }));
    await untilStatus(box, 'p/wake', (a) => a.status === 'running' && a.agentPid !== null, 'running');
    // The waiter takes its first look on the running run and holds still there (a loaded machine may take
    // seconds to start it: had it looked after the park, it would wait for the next change); then the gate.
    const w = box.spawn('status', ['--wait', '--name', 'p/wake', '--timeout', '60'], { env: { SUBAGENT_TEST_PAUSE_AT: 'wait-after-read' } });
    await until('the waiter holds still after its first look', () => isStopped(w.pid) || w.settled(), 60_000);
    writeFileSync(gate, '');
    process.kill(w.pid, 'SIGCONT');
    const woke = assertOk(await w.done);
    const change = woke.changed.find((c: any) => c.name === 'p/wake');
    assert.equal(change.status === 'running' || change.status === 'scheduled', true, JSON.stringify(change));
    assert.equal(change.run, 2);
    await untilStatus(box, 'p/wake', (a) => a.parkedUntil !== null && a.status === 'running', 'parked');
    const goesOn = assertOk(await box.runAsync('status', ['--wait', '--name', 'p/wake', '--timeout', '60']));
    const on = goesOn.changed.find((c: any) => c.name === 'p/wake');
    assert.equal(on.parkedUntil, null, JSON.stringify(on));
    assert.equal((await waitTerminalAsync(box, ['p/wake']))['p/wake'].outcome, 'succeeded');
  });

  test('--wait-terminal does not return while the name is parked', async () => {
    const dir = fakeClaude('term', 1, 3);
    assertOk(box.run('start-subagent', ['--name', 'p/term', '--cli', 'claude', '--prompt', 'x', '--on-limit', 'wait'], { env: envOf(dir) }));
    const a = (await waitTerminalAsync(box, ['p/term']))['p/term'];
    assert.equal(a.run, 2, 'the wait ended on the resumed run, not on the limited one');
    assert.equal(a.outcome, 'succeeded');
  });

  test('cancel ends a parked run at once, its supervisor gone', async () => {
    const dir = fakeClaude('cancel', 1, 120);
    assertOk(box.run('start-subagent', ['--name', 'p/cancel', '--cli', 'claude', '--prompt', 'x', '--on-limit', 'wait'], { env: envOf(dir) }));
    const parked = await untilStatus(box, 'p/cancel', (a) => a.run === 2 && a.status === 'running' && a.parkedUntil !== null, 'parked');
    const t0 = Date.now();
    const c = assertOk(await box.runAsync('cancel', ['--name', 'p/cancel']));
    assert.equal(c.previousStatus, 'running');
    const a = (await waitTerminalAsync(box, ['p/cancel']))['p/cancel'];
    assert.ok(Date.now() - t0 < 10_000, 'at once, not at the reset');
    assert.equal(a.outcome, 'cancelled');
    assert.equal(a.run, 2);
    assert.equal(a.parkedUntil, null);
    await until('the parked supervisor gone', () => !pidAlive(parked.pid), 10_000);
    assert.equal(callsOf(dir), 1, 'never resumed');
  });

  test('with a concurrency limit in force, a parked run holds no slot, and takes one when it goes on', async () => {
    const dir = fakeClaude('queue', 1, 12);
    assertOk(
      box.run('start-subagent', ['--name', 'q/limited', '--cli', 'claude', '--prompt', 'x', '--on-limit', 'wait', '--max-concurrent', '1'], {
        env: envOf(dir),
      }),
    );
    await untilStatus(box, 'q/limited', (a) => a.run === 2 && a.parkedUntil !== null, 'parked');
    // The one slot is free while it is parked: another run starts and ends meanwhile.
    assertOk(box.run('start-subagent', ['--name', 'q/other', '--cli', 'shell', '--prompt', 'echo other']));
    const other = (await waitTerminalAsync(box, ['q/other']))['q/other'];
    assert.equal(other.outcome, 'succeeded');
    assert.ok(Date.parse(other.finishedAt) < Date.parse(recordOf(box.registry, 'q/limited', 2).parkedUntil), 'it ran while the other was parked');
    const a = (await waitTerminalAsync(box, ['q/limited']))['q/limited'];
    assert.equal(a.outcome, 'succeeded', a.error);
    assert.ok(recordOf(box.registry, 'q/limited', 2).queueTicket, 'a ticket taken at the reset');
    assertOk(box.run('start-subagent', ['--name', 'q/reset', '--cli', 'shell', '--prompt', 'true', '--max-concurrent', '0']));
    await waitTerminalAsync(box, ['q/reset']);
  });

  test('a parked run whose supervisor was killed (a reboot) is revived parked until its reset, then resumed', async () => {
    const dir = fakeClaude('revive', 1, 15);
    assertOk(box.run('start-subagent', ['--name', 'p/revive', '--cli', 'claude', '--prompt', 'x', '--on-limit', 'wait'], { env: envOf(dir) }));
    const parked = await untilStatus(box, 'p/revive', (a) => a.run === 2 && a.status === 'running' && a.parkedUntil !== null, 'parked');
    process.kill(parked.pid, 'SIGKILL');
    await untilStatus(box, 'p/revive', (a) => a.status === 'unknown', 'unknown');
    const r = assertOk(box.run('resume-subagent', ['--revive', '--name', 'p/revive'], { env: envOf(dir) }));
    assert.deepEqual(
      r.revived.map((x: any) => [x.name, x.run]),
      [['p/revive', 3]],
    );
    const again = await untilStatus(box, 'p/revive', (a) => a.run === 3 && a.status === 'running' && a.parkedUntil !== null, 'parked again');
    assert.equal(again.parkedUntil, parked.parkedUntil, 'until the same reset');
    assert.deepEqual(recordOf(box.registry, 'p/revive', 3).onLimit, recordOf(box.registry, 'p/revive', 2).onLimit, 'the same attempt: its count goes on');
    assert.equal(recordOf(box.registry, 'p/revive', 3).onLimit.retry, 1);
    const a = (await waitTerminalAsync(box, ['p/revive']))['p/revive'];
    assert.deepEqual([a.run, a.outcome], [3, 'succeeded']);
    assert.ok(Date.parse(recordOf(box.registry, 'p/revive', 3).agentStartedAt) >= Date.parse(parked.parkedUntil), 'not before the reset');
    assert.equal(callsOf(dir), 2);
  });

  test('a cancel of run N that lands while its next attempt is being published reaches that attempt too', async () => {
    const dir = fakeClaude('race', 1, 120);
    const env = { ...envOf(dir), SUBAGENT_TEST_PAUSE_AT: 'limit-next-published' };
    assertOk(box.run('start-subagent', ['--name', 'p/race', '--cli', 'claude', '--prompt', 'x', '--on-limit', 'wait'], { env }));
    const pid = await until('run 1 supervisor paused with run 2 published', () => {
      const sup = recordOf(box.registry, 'p/race', 1).supervisor?.pid;
      return sup && isStopped(sup) && existsSync(join(box.registry, 'agents', 'p+race', '2', 'record.json')) ? sup : null;
    });
    // A cancel that read run 1 as the latest just before run 2 appeared: its intent is on run 1.
    updateRecord(runDirOf(box.registry, 'p/race', 1), (r) => ({ ...r, cancel: { requestedAt: new Date().toISOString(), signal: 'SIGTERM', by: process.pid } }));
    process.kill(pid, 'SIGCONT');
    const a = (await waitTerminalAsync(box, ['p/race']))['p/race'];
    assert.deepEqual([a.run, a.outcome], [2, 'cancelled']);
    assert.equal(recordOf(box.registry, 'p/race', 1).outcome, 'cancelled');
    await until('run 2 supervisor gone', () => !pidAlive(a.pid), 10_000);
    assert.equal(callsOf(dir), 1, 'never resumed');
  });

  test('a listing that chose run N as the latest just before its next attempt appeared shows that attempt, never run N ended', async () => {
    const dir = fakeClaude('chosen', 1, 120);
    const gate = join(dir, 'go');
    const program = join(fakeBin, 'claude-chosen');
    writeFileSync(program, readFileSync(program, 'utf8').replace('#!/bin/sh\n', `#!/bin/sh\nwhile [ ! -e '${gate}' ]; do sleep 0.05; done\n`));
    assertOk(box.run('start-subagent', ['--name', 'r/chosen', '--cli', 'claude', '--prompt', 'x', '--on-limit', 'wait'], { env: envOf(dir) }));
    await untilStatus(box, 'r/chosen', (a) => a.status === 'running' && a.agentPid !== null, 'running');
    // Both the listing and the one-name look (resume, cancel and result take the latest run so) hold
    // still once they have chosen run 1; then run 1 ends on its limit, run 2 is published, run 1 is done.
    const env = { SUBAGENT_TEST_PAUSE_AT: 'observe-latest-chosen' };
    const listing = box.spawn('status', ['--prefix', 'r'], { env });
    const one = box.spawn('status', ['--name', 'r/chosen'], { env });
    for (const v of [listing, one]) await until('the look holds still after its choice', () => isStopped(v.pid) || v.settled(), 60_000);
    writeFileSync(gate, '');
    await until('run 1 recorded done', () => recordOf(box.registry, 'r/chosen', 1).status === 'done', 60_000);
    for (const v of [listing, one]) {
      process.kill(v.pid, 'SIGCONT');
      const a = assertOk(await v.done).agents.find((x: any) => x.name === 'r/chosen');
      assert.equal(a.run, 2, JSON.stringify(a));
      assert.notEqual(a.status, 'done');
    }
    assertOk(box.run('cancel', ['--name', 'r/chosen']));
  });

  test('a limit without a reset time ends the run as fail does; so does the limit after the last retry', async () => {
    const none = fakeClaude('none', 1, null);
    assertOk(box.run('start-subagent', ['--name', 'p/none', '--cli', 'claude', '--prompt', 'x', '--on-limit', 'wait'], { env: envOf(none) }));
    const a = (await waitTerminalAsync(box, ['p/none']))['p/none'];
    assert.deepEqual([a.run, a.outcome, a.reason, a.resetsAt], [1, 'failed', 'rate-limit', null]);
    const always = fakeClaude('always', 9, 1);
    assertOk(
      box.run('start-subagent', ['--name', 'p/always', '--cli', 'claude', '--prompt', 'x', '--on-limit', 'wait', '--limit-retries', '2'], {
        env: envOf(always),
      }),
    );
    const b = (await waitTerminalAsync(box, ['p/always']))['p/always'];
    assert.deepEqual(
      [b.run, b.outcome, b.reason],
      [3, 'failed', 'rate-limit'],
      `two retries, then the limit ends it; run ${b.run}'s supervisor.log: ${supervisorLog('p/always', b.run)}`,
    );
    assert.deepEqual(recordOf(box.registry, 'p/always', 3).onLimit, { action: 'wait', prompt: null, retries: 2, retry: 2 });
    assert.equal(callsOf(always), 3);
  });
});
