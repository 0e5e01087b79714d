// The spend caps in-process: how the verbs' text is read (lib/commands/caps.ts), what a resume keeps,
// what each adapter can be held to, and the supervisor's side (lib/supervisor/caps.ts, end.ts): when a
// cap counts as crossed and how a run's end is recorded. Through the real executables: test/cli/caps.test.ts.
import { formatSize, parseSize } from '../../lib/base/size.js';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadAdapter } from '../../lib/agents/index.js';
import { emptyState } from '../../lib/agents/shared/stream.js';
import { CLI_NAMES, type StreamState, type Verdict } from '../../lib/agents/types.js';
import { SubagentError } from '../../lib/base/errors.js';
import { checkCaps, parseCap, parseCapFlags, settleCaps } from '../../lib/commands/caps.js';
import { NO_CAPS, type RunRecord } from '../../lib/registry/record.js';
import { crossedCap } from '../../lib/supervisor/caps.js';
import { endOf } from '../../lib/supervisor/end.js';

const code = (fn: () => unknown): string | null => {
  try {
    fn();
    return null;
  } catch (err) {
    return err instanceof SubagentError ? err.code : `not a SubagentError: ${String(err)}`;
  }
};

test('parseCap: dollars as a plain decimal above 0, tokens and turns as whole numbers ≥ 1, "none" as no cap', () => {
  assert.equal(parseCap('maxCostUsd', '2.50'), 2.5);
  assert.equal(parseCap('maxCostUsd', '.5'), 0.5);
  assert.equal(parseCap('maxCostUsd', '3'), 3);
  assert.equal(parseCap('maxTokens', '200000'), 200000);
  assert.equal(parseCap('maxTurns', ' 7 '), 7);
  for (const k of ['maxCostUsd', 'maxTokens', 'maxTurns'] as const) assert.equal(parseCap(k, 'none'), null);
  for (const bad of ['0', '0.0', '-1', '1e3', 'Infinity', 'NaN', '', ' ', '$1', '1,5', '0x10'])
    assert.equal(
      code(() => parseCap('maxCostUsd', bad)),
      'E_ARG_INVALID',
      bad,
    );
  for (const bad of ['0', '1.5', '2.0', '-3', '1e3', 'ten', '']) {
    assert.equal(
      code(() => parseCap('maxTokens', bad)),
      'E_ARG_INVALID',
      bad,
    );
    assert.equal(
      code(() => parseCap('maxTurns', bad)),
      'E_ARG_INVALID',
      bad,
    );
  }
  assert.deepEqual(
    parseCapFlags((f) => ({ 'max-cost': '1', 'max-turns': 'none' })[f]),
    { maxCostUsd: 1, maxTurns: null },
  );
});

test('checkCaps: the same rules for numbers given to the library', () => {
  assert.equal(
    code(() => checkCaps({ maxCostUsd: 0.01, maxTokens: 1, maxTurns: null })),
    null,
  );
  for (const bad of [
    { maxCostUsd: 0 },
    { maxCostUsd: Number.NaN },
    { maxCostUsd: Number.POSITIVE_INFINITY },
    { maxTokens: 1.5 },
    { maxTurns: 0 },
    { maxTokens: 2 ** 60 },
  ])
    assert.equal(
      code(() => checkCaps(bad)),
      'E_ARG_INVALID',
      JSON.stringify(bad),
    );
});

test('settleCaps: given ones win, the rest are inherited (a resume), null drops one; a cap the adapter cannot hold is E_ARG_UNSUPPORTED', async () => {
  const claude = await loadAdapter('claude');
  const before = { maxCostUsd: 1, maxTokens: 500, maxTurns: 3 };
  assert.deepEqual(settleCaps(claude, {}, before), { ...before, maxTimeSec: null, maxMemoryBytes: null }, 'a record from before the time cap has none');
  assert.deepEqual(settleCaps(claude, { maxTurns: null, maxCostUsd: 2 }, before), {
    maxCostUsd: 2,
    maxTokens: 500,
    maxTurns: null,
    maxTimeSec: null,
    maxMemoryBytes: null,
  });
  assert.deepEqual(settleCaps(claude, {}), NO_CAPS);
  const shell = await loadAdapter('shell');
  assert.deepEqual(settleCaps(shell, { maxTimeSec: 90 }), { ...NO_CAPS, maxTimeSec: 90 }, 'the time cap holds for every CLI');
  assert.deepEqual(settleCaps(shell, { maxMemoryBytes: 2 ** 30 }), { ...NO_CAPS, maxMemoryBytes: 2 ** 30 }, 'the memory cap holds for every CLI');
  assert.deepEqual(settleCaps(shell, {}, { ...NO_CAPS, maxMemoryBytes: 2 ** 30 }).maxMemoryBytes, 2 ** 30, 'a resume keeps it');
  assert.deepEqual(settleCaps(shell, { maxCostUsd: null }), NO_CAPS, 'no cap needs no support');
  assert.equal(
    code(() => settleCaps(shell, { maxTurns: 2 })),
    'E_ARG_UNSUPPORTED',
  );
  try {
    settleCaps(shell, {}, { ...NO_CAPS, maxTokens: 9 });
    assert.fail('an inherited cap the CLI cannot hold is refused too');
  } catch (err) {
    assert.match((err as SubagentError).details.hint!, /resume with --max-tokens none/);
  }
});

test('every adapter declares how it honours each cap; the shapes are the interface’s', async () => {
  const modes = new Set(['native', 'stream', null]);
  const seen: Record<string, unknown> = {};
  for (const cli of CLI_NAMES) {
    const a = await loadAdapter(cli);
    assert.deepEqual(Object.keys(a.caps).sort(), ['cost', 'tokens', 'turns'], cli);
    for (const m of Object.values(a.caps)) assert.ok(modes.has(m), `${cli}: ${m}`);
    seen[cli] = a.caps;
  }
  assert.deepEqual(seen, {
    opencode: { cost: 'stream', tokens: 'stream', turns: 'stream' },
    claude: { cost: 'native', tokens: 'stream', turns: 'native' },
    codex: { cost: null, tokens: 'stream', turns: 'stream' },
    copilot: { cost: null, tokens: 'stream', turns: 'stream' },
    gemini: { cost: null, tokens: 'stream', turns: 'stream' },
    qwen: { cost: null, tokens: 'stream', turns: 'stream' },
    acp: { cost: null, tokens: null, turns: null },
    shell: { cost: null, tokens: null, turns: null },
  });
});

function state(over: Partial<StreamState> & { tokens?: number; cost?: number | null }): StreamState {
  const s = emptyState();
  if (over.tokens !== undefined)
    s.usage = {
      inputTokens: over.tokens,
      outputTokens: 0,
      cacheReadTokens: 0,
      cacheWriteTokens: 0,
      reasoningTokens: 0,
      totalTokens: over.tokens,
      costUsd: over.cost ?? null,
    };
  s.turns = over.turns ?? 0;
  return s;
}

test('crossedCap: only the caps the adapter leaves to the supervisor, and only past them (a cap of N allows N)', async () => {
  const opencode = await loadAdapter('opencode');
  const claude = await loadAdapter('claude');
  const caps = { maxCostUsd: 1, maxTokens: 100, maxTurns: 2 };
  assert.equal(crossedCap(caps, opencode, state({ tokens: 100, cost: 1, turns: 2 })), null, 'at the cap is not past it');
  assert.deepEqual(crossedCap(caps, opencode, state({ tokens: 10, cost: 1.5 })), {
    reason: 'max-cost',
    message: 'stopped at --max-cost 1: the run had cost $1.5',
  });
  assert.deepEqual(crossedCap(caps, opencode, state({ tokens: 101, cost: 0 })), {
    reason: 'max-tokens',
    message: 'stopped at --max-tokens 100: the run had used 101 tokens',
  });
  assert.deepEqual(crossedCap(caps, opencode, state({ turns: 3 })), { reason: 'max-turns', message: 'stopped at --max-turns 2: the run began turn 3' });
  // Claude's cost and turns are its own limits: the supervisor does not second-guess them.
  assert.equal(crossedCap(caps, claude, state({ tokens: 50, cost: 9, turns: 9 })), null);
  assert.equal(crossedCap(caps, claude, state({ tokens: 101 }))?.reason, 'max-tokens');
  assert.equal(crossedCap(NO_CAPS, opencode, state({ tokens: 1e9, cost: 1e9, turns: 1e9 })), null);
  assert.equal(crossedCap(caps, opencode, state({ tokens: 5, cost: null })), null, 'an unknown cost crosses nothing');
});

test('endOf: a cancel, then a spawn failure, then a crossed cap, then the verdict', async () => {
  const opencode = await loadAdapter('opencode');
  const base = { status: 'running', cancel: null, caps: { maxCostUsd: 1, maxTokens: null, maxTurns: null } } as unknown as RunRecord;
  const failed: Verdict = { outcome: 'failed', error: 'APIError: x (HTTP 500)', reason: 'api-error' };
  const ok: Verdict = { outcome: 'succeeded', error: null, reason: null };
  const under = { adapter: opencode, state: state({ tokens: 1, cost: 0.5 }) };
  const over = { adapter: opencode, state: state({ tokens: 1, cost: 2 }) };
  assert.deepEqual(endOf(base, ok, under), { outcome: 'succeeded', error: null, reason: null });
  assert.deepEqual(endOf(base, failed, under), { outcome: 'failed', error: 'APIError: x (HTTP 500)', reason: 'api-error' });
  assert.deepEqual(endOf(base, ok, over), { outcome: 'failed', error: 'stopped at --max-cost 1: the run had cost $2', reason: 'max-cost' });
  assert.deepEqual(endOf(base, { outcome: 'failed', error: 'no start', reason: null }, null), { outcome: 'failed', error: 'no start', reason: 'spawn-failed' });
  const cancelled = { ...base, cancel: { requestedAt: 'x', signal: 'SIGINT', by: 1 } };
  assert.deepEqual(endOf(cancelled, failed, over), { outcome: 'cancelled', error: 'cancelled with SIGINT', reason: 'cancelled' }, "a caller's cancel wins");
  const stopped = { ...base, cancel: { requestedAt: 'x', signal: 'SIGTERM', by: 1, reason: 'max-tokens' as const, message: 'stopped at --max-tokens 5' } };
  assert.deepEqual(endOf(stopped, failed, under), { outcome: 'failed', error: 'stopped at --max-tokens 5', reason: 'max-tokens' });
  // A record written before caps existed is read with none (lib/registry/record.ts; test/cli/records.test.ts).
  const old = { ...base, caps: NO_CAPS };
  assert.deepEqual(endOf(old, ok, over), { outcome: 'succeeded', error: null, reason: null }, 'a record without caps has none');
  assert.equal(endOf(base, { outcome: 'failed', error: 'x' } as unknown as Verdict, under).reason, 'unknown', 'a verdict without a reason');
});

test('--max-memory: a size with K, M, G or T (powers of 1024) or bytes, at least 1M; "none" is no cap', () => {
  assert.equal(parseCap('maxMemoryBytes', '2G'), 2 * 1024 ** 3);
  assert.equal(parseCap('maxMemoryBytes', '512M'), 512 * 1024 ** 2);
  assert.equal(parseCap('maxMemoryBytes', '1.5GiB'), 1.5 * 1024 ** 3);
  assert.equal(parseCap('maxMemoryBytes', '4gb'), 4 * 1024 ** 3);
  assert.equal(parseCap('maxMemoryBytes', '1048576'), 1024 ** 2);
  assert.equal(parseCap('maxMemoryBytes', ' 1 t '), 1024 ** 4);
  assert.equal(parseCap('maxMemoryBytes', 'none'), null);
  for (const bad of ['', '0', '1K', '1048575', '-2G', '2X', 'G', '2 G B', '1e9', '99999999999T', 'Infinity']) {
    assert.equal(
      code(() => parseCap('maxMemoryBytes', bad)),
      'E_ARG_INVALID',
      bad,
    );
  }
  assert.equal(
    code(() => checkCaps({ maxMemoryBytes: 1.5 * 1024 ** 2 + 0.5 })),
    'E_ARG_INVALID',
    'bytes are whole',
  );
  assert.equal(
    code(() => checkCaps({ maxMemoryBytes: 4 * 1024 ** 3 })),
    null,
  );
});

test('sizes read back as they are shown', () => {
  assert.equal(formatSize(3_407_872), '3.3M');
  assert.equal(formatSize(2 * 1024 ** 3), '2G');
  assert.equal(formatSize(1536 * 1024 ** 2), '1.5G');
  assert.equal(formatSize(900), '900B');
  assert.equal(formatSize(300 * 1024 ** 2), '300M');
  for (const text of ['2G', '1.5G', '300M', '3.3M', '900B']) assert.equal(formatSize(parseSize(text)!), text);
});
