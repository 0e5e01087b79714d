// A limit is a fact with a time (issue 25, point 1) through the real executables and the REAL pinned CLIs
// against fake model servers that answer as each provider does when a usage, rate or spend limit is hit,
// with a reset time seconds ahead: Anthropic's 429 with the `anthropic-ratelimit-unified-*` headers (Claude
// Code signed in as a subscriber says when it resets in its `rate_limit_event`), OpenAI's
// `usage_limit_reached` with the `x-codex-*` headers (Codex keeps `rate_limits` with `resets_at` in its
// rollout), Google's 429 with RetryInfo (Gemini CLI: "Suggested retry after 30s."), and a chat-completions
// 429 with `Retry-After` (OpenCode passes the headers on; Qwen and Copilot say no time). Each run ends
// failed with reason rate-limit and `resetsAt` — null where the CLI does not say — in status, `status
// --runs`, `result --json`, the table and the end hook's environment; a limit near (allowed, utilisation
// high) is a `limitWarning` of a run that succeeds. The same streams replayed: test/unit/<cli>-adapter.test.ts.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { cliBox, startFake, uniq, type CliBox } from '../fakes/world.js';
import { cliVersions, requireCli, type CliName } from '../fakes/env.js';
import type { Action, FakeRequest, FakeServer } from '../fakes/script.js';
import { stderrTail } from '../support/registry.js';
import { assertOk } from '../support/run.js';
import { until } from '../support/wait.js';

/** A time `seconds` ahead, in epoch seconds (the providers' headers carry whole seconds). */
const ahead = (seconds: number): number => Math.floor(Date.now() / 1000) + seconds;
const isoOf = (epochSeconds: number): string => new Date(epochSeconds * 1000).toISOString();
const json = (status: number, body: unknown, headers: Record<string, string> = {}): Action => ({
  type: 'raw',
  status,
  headers: { 'content-type': 'application/json', ...headers },
  body: JSON.stringify(body),
});

/** Answers the model requests whose prompt holds a key of `answers` with its action (every retry too); the rest as the directives say. */
function byMarker(answers: Record<string, () => Action>): (req: FakeRequest) => Action | undefined {
  return (req) => {
    const text = req.conversation?.lastUserText ?? '';
    const key = Object.keys(answers).find((k) => text.includes(k));
    return key ? answers[key]!() : undefined;
  };
}

interface LimitWorld {
  srv: FakeServer;
  box: CliBox;
  /** Starts run `name` on `prompt` (with `extra` options) and waits for its end; its status entry. */
  end(name: string, prompt: string, extra?: string[]): Promise<any>;
}

/** A fake of `cli`'s provider answering with `handler`, and a box whose runs use it (null: the CLI is not installed). */
async function limitWorld(
  t: TestContext,
  cli: CliName,
  handler: (req: FakeRequest) => Action | undefined,
  o: { version?: string; env?: Record<string, string | null> } = {},
): Promise<LimitWorld | null> {
  if (!requireCli(t, cli, o.version)) return null;
  const srv = await startFake(cli, { handler });
  t.after(() => srv.close());
  const box = cliBox(t, cli, `e2e-limits-${cli}`, srv.url, { home: 'home', project: 'work', version: o.version });
  for (const [k, v] of Object.entries(o.env ?? {})) {
    if (v === null) delete box.env[k];
    else box.env[k] = v;
  }
  return {
    srv,
    box,
    async end(name, prompt, extra = []) {
      assertOk(await box.runAsync('start-subagent', ['--name', name, '--cli', cli, '--cwd', box.project, '--prompt', prompt, ...extra]), `start ${name}`);
      const w = assertOk(await box.runAsync('status', ['--name', name, '--wait-terminal']), `status --wait-terminal ${name}`);
      const a = w.agents[0];
      assert.equal(a.status, 'done', JSON.stringify(w));
      return a;
    },
  };
}

/** Asserts the run ended failed for a rate limit, with `resetsAt` as given (`within` seconds of it when a number). */
function limited(w: LimitWorld, a: any, resetsAt: string | null, within = 0): void {
  assert.equal(a.outcome, 'failed', `${a.name}: ${a.error} ${stderrTail(w.box.registry, a.name)}`);
  assert.equal(a.reason, 'rate-limit', `${a.name}: ${a.error}`);
  if (resetsAt === null || within === 0) {
    assert.equal(a.resetsAt, resetsAt, `${a.name}: ${a.error}`);
    return;
  }
  assert.ok(
    Math.abs(Date.parse(a.resetsAt) - Date.parse(resetsAt)) <= within * 1000,
    `${a.name}: resetsAt ${a.resetsAt}, not within ${within} s of ${resetsAt}`,
  );
}

/** What the verbs besides the status entry say of the run's reset: `status --runs`, `result --json`, and the table. */
async function everywhere(w: LimitWorld, name: string, resetsAt: string): Promise<void> {
  const runs = assertOk(await w.box.runAsync('status', ['--name', name, '--runs']), 'status --runs');
  assert.equal(runs.runs.at(-1).resetsAt, resetsAt, 'status --runs');
  const result = assertOk(await w.box.runAsync('result', ['--name', name, '--json']), 'result --json');
  assert.equal(result.reason, 'rate-limit');
  assert.equal(result.resetsAt, resetsAt, 'result --json');
  const table = await w.box.runAsync('status', ['--name', name, '--format', 'table'], { env: { COLUMNS: '200' } });
  assert.equal(table.code, 0, table.stderr);
  assert.match(table.stdout, /failed \(rate-limit, rese(ts in \d+[smh]|t \d+[smh] ago)\)/, table.stdout);
}

/** Anthropic's unified rate-limit headers for a subscriber: the 5-hour window at `status`, resetting at `reset` (epoch s). */
function unified(status: 'rejected' | 'allowed_warning', reset: number): Record<string, string> {
  return {
    'anthropic-ratelimit-unified-status': status === 'rejected' ? 'rejected' : 'allowed',
    'anthropic-ratelimit-unified-reset': String(reset),
    'anthropic-ratelimit-unified-representative-claim': 'five_hour',
    'anthropic-ratelimit-unified-5h-status': status === 'rejected' ? 'rejected' : 'allowed',
    'anthropic-ratelimit-unified-5h-reset': String(reset),
    'anthropic-ratelimit-unified-5h-utilization': status === 'rejected' ? '1.0' : '0.92',
    ...(status === 'allowed_warning' ? { 'anthropic-ratelimit-unified-5h-surpassed-threshold': '0.9' } : {}),
    'anthropic-ratelimit-unified-7d-status': 'allowed',
    'anthropic-ratelimit-unified-7d-reset': String(reset + 86400),
    'anthropic-ratelimit-unified-7d-utilization': '0.4',
    'anthropic-ratelimit-unified-overage-status': 'rejected',
    'anthropic-ratelimit-unified-overage-disabled-reason': 'org_level_disabled',
  };
}

const SUBSCRIBER = { ANTHROPIC_API_KEY: null, CLAUDE_CODE_OAUTH_TOKEN: 'sk-ant-oat01-fake-token-for-tests' };

for (const version of cliVersions('claude')) {
  test(`claude ${version}: a subscriber's 5-hour limit (429, unified headers) is rate-limit with its reset everywhere, the hook's SUBAGENT_RESETS_AT too; a limit near is a warning, shown while the run goes (status, the table) and after, of a run that succeeds; signed in with an API key Claude says no time: null`, async (t) => {
    const reset = ahead(40);
    const warnReset = ahead(3600);
    const limit = uniq('LIMIT');
    const near = uniq('NEAR');
    const rejected = () =>
      json(
        429,
        { type: 'error', error: { type: 'rate_limit_error', message: "This request would exceed your account's rate limit. Please try again later." } },
        { 'retry-after': String(Math.max(1, reset - ahead(0))), 'x-should-retry': 'false', ...unified('rejected', reset) },
      );
    // A limit near on the first answer (a tool call); the next answer comes slowly, so the run is seen running with its warning.
    const handler = (req: FakeRequest): Action | undefined => {
      const c = req.conversation;
      if (!c?.lastUserText.includes(near)) return byMarker({ [limit]: rejected })(req);
      if (c.toolOutputs.length === 0)
        return {
          type: 'tool',
          calls: [{ name: 'Bash', input: { command: 'echo near', description: 'say near' } }],
          headers: unified('allowed_warning', warnReset),
        };
      // The provider sends its headers on every answer (without them Claude 2.1.197 says the limit is clear).
      return { type: 'text', text: 'fine, for now', delayMs: 6000, headers: unified('allowed_warning', warnReset) };
    };
    const w = await limitWorld(t, 'claude', handler, { version, env: SUBSCRIBER });
    if (!w) return;
    const hookOut = join(w.box.dir, 'resets-at.txt');
    const seenRunning = (async () => {
      const warning = { window: 'five_hour', utilization: 0.92, resetsAt: isoOf(warnReset) };
      await until(
        'the run near its limit is seen running with its warning',
        async () => {
          const s = await w.box.runAsync('status', ['--name', 'near']);
          const e = s.json?.agents?.[0];
          return e?.status === 'running' && JSON.stringify(e.limitWarning) === JSON.stringify(warning);
        },
        60_000,
        250,
      );
      const table = await w.box.runAsync('status', ['--name', 'near', '--format', 'table'], { env: { COLUMNS: '200' } });
      assert.match(table.stdout, /running \(limit 92%\)/, table.stdout);
    })();
    const [a, warned] = await Promise.all([
      w.end('limit', `REPLY:never ${limit}`, ['--on-end', `printf '%s' "$SUBAGENT_RESETS_AT" > '${hookOut}'`]),
      w.end('near', `REPLY:fine ${near}`),
    ]);
    await seenRunning;
    limited(w, a, isoOf(reset));
    assert.match(a.error, /limit · resets/);
    assert.equal(a.limitWarning, null);
    await everywhere(w, 'limit', isoOf(reset));
    await until('the end hook wrote SUBAGENT_RESETS_AT', () => existsSync(hookOut) && readFileSync(hookOut, 'utf8') !== '', 30_000);
    assert.equal(readFileSync(hookOut, 'utf8'), isoOf(reset), 'the end hook has the reset in its environment');

    assert.equal(warned.outcome, 'succeeded', `${warned.error} ${stderrTail(w.box.registry, 'near')}`);
    assert.equal(warned.reason, null);
    assert.equal(warned.resetsAt, null);
    assert.deepEqual(warned.limitWarning, { window: 'five_hour', utilization: 0.92, resetsAt: isoOf(warnReset) }, 'a warning, never a failure');

    // Signed in with an API key Claude makes nothing of the unified headers (no rate_limit_event): no time, none recorded.
    const k = await limitWorld(t, 'claude', handler, { version });
    if (!k) return;
    const keyed = await k.end('keyed', `REPLY:never ${limit}`);
    limited(k, keyed, null);
    assert.match(keyed.error, /Request rejected \(429\)/);
  });
}

test("codex: a ChatGPT plan's usage limit (429 usage_limit_reached, x-codex-* headers) is rate-limit with the reset of its rollout's rate_limits; a window at 91 % is a warning of a run that succeeds; a plain 429 says no time: null", async (t) => {
  const reset = ahead(40);
  const limit = uniq('LIMIT');
  const near = uniq('NEAR');
  const plain = uniq('PLAIN');
  const windows = (used: number) => ({
    'x-codex-primary-used-percent': String(used),
    'x-codex-primary-window-minutes': '300',
    'x-codex-primary-reset-at': String(reset),
    'x-codex-secondary-used-percent': '40',
    'x-codex-secondary-window-minutes': '10080',
    'x-codex-secondary-reset-at': String(reset + 86400),
  });
  const w = await limitWorld(
    t,
    'codex',
    byMarker({
      [limit]: () =>
        json(429, { error: { type: 'usage_limit_reached', message: 'The usage limit has been reached', plan_type: 'plus', resets_at: reset } }, windows(100)),
      [near]: (): Action => ({ type: 'text', text: 'fine, for now', headers: windows(91) }),
      [plain]: () =>
        json(429, { error: { message: 'Rate limit reached for requests', type: 'rate_limit_exceeded', param: null, code: 'rate_limit_exceeded' } }),
    }),
  );
  if (!w) return;
  const [a, warned, none] = await Promise.all([
    w.end('limit', `REPLY:never ${limit}`),
    w.end('near', `REPLY:fine ${near}`),
    w.end('plain', `REPLY:never ${plain}`),
  ]);
  limited(w, a, isoOf(reset));
  assert.match(a.error, /hit your usage limit/);
  await everywhere(w, 'limit', isoOf(reset));
  assert.equal(warned.outcome, 'succeeded', `${warned.error} ${stderrTail(w.box.registry, 'near')}`);
  assert.deepEqual(warned.limitWarning, { window: 'five_hour', utilization: 0.91, resetsAt: isoOf(reset) });
  limited(w, none, null);
});

test('gemini: a 429 with RetryInfo (retryDelay 30s) and Retry-After is rate-limit, reset 30 s after Gemini gave up; a 429 without a delay: null', async (t) => {
  const limit = uniq('LIMIT');
  const plain = uniq('PLAIN');
  const quota = (details: unknown[]) => ({
    error: { code: 429, message: 'You exceeded your current quota, please check your plan and billing details.', status: 'RESOURCE_EXHAUSTED', details },
  });
  const w = await limitWorld(
    t,
    'gemini',
    byMarker({
      [limit]: () => json(429, quota([{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '30s' }]), { 'retry-after': '30' }),
      [plain]: () => json(429, quota([])),
    }),
  );
  if (!w) return;
  const before = Date.now();
  const [a, none] = await Promise.all([w.end('limit', `REPLY:never ${limit}`), w.end('plain', `REPLY:never ${plain}`)]);
  const after = Date.parse(a.finishedAt);
  limited(w, a, new Date((before + after) / 2 + 30_000).toISOString(), (after - before) / 2000 + 1);
  assert.match(a.error, /Suggested retry after 30s/);
  await everywhere(w, 'limit', a.resetsAt);
  limited(w, none, null);
});

test("opencode: a 429 with Retry-After (the provider's retry-after-ms 0 makes its retries quick) is rate-limit, reset when the last answer said; without Retry-After: null", async (t) => {
  const reset = ahead(40);
  const limit = uniq('LIMIT');
  const plain = uniq('PLAIN');
  const body = { error: { message: 'Rate limit reached for requests', type: 'rate_limit_exceeded', param: null, code: 'rate_limit_exceeded' } };
  const w = await limitWorld(
    t,
    'opencode',
    byMarker({
      [limit]: () => json(429, body, { 'retry-after-ms': '0', 'retry-after': String(Math.max(1, reset - ahead(0))) }),
      [plain]: () => json(429, body, { 'retry-after-ms': '0' }),
    }),
  );
  if (!w) return;
  const [a, none] = await Promise.all([w.end('limit', `REPLY:never ${limit}`), w.end('plain', `REPLY:never ${plain}`)]);
  // Retry-After is in whole seconds, counted from the answer: within a second of the reset.
  limited(w, a, isoOf(reset), 1.5);
  assert.match(a.error, /HTTP 429/);
  await everywhere(w, 'limit', a.resetsAt);
  limited(w, none, null);
});

for (const cli of ['qwen', 'copilot'] as const) {
  test(`${cli}: a 429 with Retry-After is rate-limit; ${cli} says no reset time (it waits Retry-After out itself, and prints none), so none is recorded`, async (t) => {
    const limit = uniq('LIMIT');
    const w = await limitWorld(
      t,
      cli,
      byMarker({
        [limit]: () =>
          json(
            429,
            { error: { message: 'Rate limit reached for requests', type: 'rate_limit_exceeded', param: null, code: 'rate_limit_exceeded' } },
            { 'retry-after': '1' },
          ),
      }),
    );
    if (!w) return;
    const a = await w.end('limit', `REPLY:never ${limit}`);
    limited(w, a, null);
    assert.match(a.error, /429/);
    assert.equal(a.limitWarning, null);
  });
}
