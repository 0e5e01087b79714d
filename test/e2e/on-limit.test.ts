// --on-limit wait waits it out (issue 25, point 2; its share of point 6) through the real executables and
// the REAL pinned CLIs against fake model servers that answer as the provider does while a limit holds —
// a 429 with the reset a few seconds ahead — and normally once it has reset: the run is parked (its next
// attempt `running` with `parkedUntil` and a statusReason, no agent), resumed in the same session at the
// reset, and its answer is the resumed run's; a cancel ends a parked run at once; a limit with no reset
// time ends the run as `fail` does. Claude Code signed in as a subscriber (its `rate_limit_event` says
// when), Codex on a ChatGPT plan (`usage_limit_reached`, the reset in its rollout's `rate_limits`), and
// OpenCode given a transient 429 with a short Retry-After (backed off the same way).
// The fake CLIs of test/cli/on-limit.test.ts cover the rest (the options, --wait, the retries).
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { cliBox, startFake, uniq, type CliBox } from '../fakes/world.js';
import { requireCli, type CliName } from '../fakes/env.js';
import type { Action, FakeRequest } from '../fakes/script.js';
import { subscriberLimit } from '../fakes/anthropic.js';
import { pidAlive } from '../support/procs.js';
import { recordOf, stderrTail } from '../support/registry.js';
import { assertOk } from '../support/run.js';
import { until } from '../support/wait.js';

/** A time `seconds` ahead, in epoch seconds (the providers' headers carry whole seconds). */
const ahead = (seconds: number): number => Math.floor(Date.now() / 1000) + seconds;
const json = (status: number, body: unknown, headers: Record<string, string> = {}): Action => ({
  type: 'raw',
  status,
  headers: { 'content-type': 'application/json', ...headers },
  body: JSON.stringify(body),
});

const codexRejected = (reset: number): Action =>
  json(
    429,
    { error: { type: 'usage_limit_reached', message: 'The usage limit has been reached', plan_type: 'plus', resets_at: reset } },
    {
      'x-codex-primary-used-percent': '100',
      'x-codex-primary-window-minutes': '300',
      'x-codex-primary-reset-at': String(reset),
    },
  );

const SUBSCRIBER = { ANTHROPIC_API_KEY: null, CLAUDE_CODE_OAUTH_TOKEN: 'sk-ant-oat01-fake-token-for-tests' };

/**
 * A world where each prompt's marker is limited until its reset: `limits[marker]` is that reset (epoch s).
 * Requests before it get `rejected(reset)`; after it, the prompt's directives answer.
 */
async function world(
  t: TestContext,
  cli: CliName,
  limits: Map<string, number>,
  rejected: (reset: number) => Action,
  env: Record<string, string | null> = {},
): Promise<CliBox | null> {
  if (!requireCli(t, cli)) return null;
  const handler = (req: FakeRequest): Action | undefined => {
    const text = req.conversation?.lastUserText ?? '';
    for (const [marker, reset] of limits) if (text.includes(marker) && Date.now() < reset * 1000) return rejected(reset);
    return undefined;
  };
  const srv = await startFake(cli, { handler });
  t.after(() => srv.close());
  const box = cliBox(t, cli, `e2e-on-limit-${cli}`, srv.url, { home: 'home', project: 'work' });
  for (const [k, v] of Object.entries(env)) {
    if (v === null) delete box.env[k];
    else box.env[k] = v;
  }
  return box;
}

async function start(box: CliBox, cli: CliName, name: string, prompt: string, extra: string[] = []): Promise<void> {
  assertOk(
    await box.runAsync('start-subagent', ['--name', name, '--cli', cli, '--cwd', box.project, '--prompt', prompt, '--on-limit', 'wait', ...extra]),
    `start ${name}`,
  );
}

async function statusOf(box: CliBox, name: string): Promise<any> {
  return assertOk(await box.runAsync('status', ['--name', name])).agents[0];
}

/** Waits until `name`'s run 2 is parked; its status entry. */
async function parked(box: CliBox, name: string): Promise<any> {
  let seen: any;
  await until(
    `${name} parked`,
    async () => {
      seen = await statusOf(box, name);
      return seen?.run === 2 && seen.status === 'running' && seen.parkedUntil !== null ? seen : null;
    },
    120_000,
    200,
  );
  return seen;
}

/** The run parked at its limit, resumed at the reset in the same session; its answer is the resumed run's. */
/** `slackMs`: how far the recorded reset may be from the fake's (a Retry-After in whole seconds, counted from the answer). */
async function waitsItOut(box: CliBox, cli: CliName, reset: number, name: string, slackMs = 0): Promise<void> {
  const p = await parked(box, name);
  assert.match(p.statusReason, /^parked: rate limit, resumes at /);
  assert.equal(p.agentPid, null, 'no agent while parked');
  const first = recordOf(box.registry, name, 1);
  assert.equal(first.reason, 'rate-limit', `${first.error} ${stderrTail(box.registry, name)}`);
  const said = Date.parse(first.resetsAt);
  assert.ok(Math.abs(said - reset * 1000) <= slackMs, `the reset the provider said: ${first.resetsAt}`);
  const w = assertOk(await box.runAsync('status', ['--name', name, '--wait-terminal']));
  const a = w.agents[0];
  assert.equal(a.run, 2, 'not terminal while parked: the wait ends on the resumed run');
  assert.equal(a.outcome, 'succeeded', `${a.error} ${stderrTail(box.registry, name, 2)}`);
  const second = recordOf(box.registry, name, 2);
  assert.ok(Date.parse(first.finishedAt) < said, `${cli}: the limited run ended before the reset (${first.finishedAt}), so the next one waited`);
  const late = Date.parse(second.agentStartedAt) - said;
  assert.ok(late >= 0 && late < 2000, `${cli}: resumed ${late} ms after the reset`);
  assert.equal(second.sessionId, first.sessionId, 'the same session');
  const runs = assertOk(await box.runAsync('status', ['--name', name, '--runs'])).runs;
  assert.deepEqual(
    runs.map((r: any) => [r.run, r.outcome, r.reason]),
    [
      [1, 'failed', 'rate-limit'],
      [2, 'succeeded', null],
    ],
  );
  const result = await box.runAsync('result', ['--name', name]);
  assert.equal(result.stdout.trim(), 'resumed', 'the answer of the resumed run');
}

test('claude (a subscriber): parked at its 5-hour limit, resumed at the reset in its session, its answer; a parked run cancelled at once; with an API key no reset time: it fails', async (t) => {
  const limits = new Map<string, number>();
  const box = await world(t, 'claude', limits, subscriberLimit, SUBSCRIBER);
  if (!box) return;
  const waitMarker = uniq('WAIT');
  const cancelMarker = uniq('CANCEL');
  const reset = ahead(30);
  limits.set(waitMarker, reset);
  limits.set(cancelMarker, ahead(600));
  await Promise.all([start(box, 'claude', 'waits', `${waitMarker} REPLY:resumed`), start(box, 'claude', 'cancelled', `${cancelMarker} REPLY:never`)]);
  const cancelling = (async () => {
    const p = await parked(box, 'cancelled');
    const t0 = Date.now();
    assertOk(await box.runAsync('cancel', ['--name', 'cancelled']));
    const a = assertOk(await box.runAsync('status', ['--name', 'cancelled', '--wait-terminal'])).agents[0];
    assert.ok(Date.now() - t0 < 15_000, 'at once, not at the reset');
    assert.deepEqual([a.run, a.outcome, a.parkedUntil], [2, 'cancelled', null]);
    await until('the parked supervisor gone', () => !pidAlive(p.pid), 10_000);
  })();
  await waitsItOut(box, 'claude', reset, 'waits');
  await cancelling;

  // Signed in with an API key Claude says no time: nothing to wait for, the run fails as with --on-limit fail.
  const keyed = await world(t, 'claude', new Map([[waitMarker, ahead(600)]]), subscriberLimit);
  if (!keyed) return;
  await start(keyed, 'claude', 'no-time', `${waitMarker} REPLY:never`);
  const a = assertOk(await keyed.runAsync('status', ['--name', 'no-time', '--wait-terminal'])).agents[0];
  assert.deepEqual([a.run, a.outcome, a.reason, a.resetsAt, a.parkedUntil], [1, 'failed', 'rate-limit', null, null]);
});

test("codex (a ChatGPT plan): parked at its usage limit (the rollout's resets_at), resumed at the reset in its thread, its answer", async (t) => {
  const limits = new Map<string, number>();
  const box = await world(t, 'codex', limits, codexRejected);
  if (!box) return;
  const marker = uniq('WAIT');
  const reset = ahead(30);
  limits.set(marker, reset);
  await start(box, 'codex', 'waits', `${marker} REPLY:resumed`);
  await waitsItOut(box, 'codex', reset, 'waits');
});

test('opencode: a transient 429 with a short Retry-After is backed off the same way: parked until then, resumed in its session, its answer', async (t) => {
  const limits = new Map<string, number>();
  const body = { error: { message: 'Rate limit reached for requests', type: 'rate_limit_exceeded', param: null, code: 'rate_limit_exceeded' } };
  // retry-after-ms 0 makes OpenCode's own retries quick; Retry-After is the wait it passes on.
  const rejected = (reset: number): Action => json(429, body, { 'retry-after-ms': '0', 'retry-after': String(Math.max(1, reset - ahead(0))) });
  const box = await world(t, 'opencode', limits, rejected);
  if (!box) return;
  const marker = uniq('WAIT');
  // Far enough ahead that OpenCode, slow to start on a loaded machine, hits the limit and parks before it.
  const reset = ahead(45);
  limits.set(marker, reset);
  await start(box, 'opencode', 'waits', `${marker} REPLY:resumed`);
  await waitsItOut(box, 'opencode', reset, 'waits', 1500);
});
