import type { Usage } from '../../registry/record.js';
import { fields, num, obj, type JsonObject } from '../../base/json.js';

/**
 * A stream-json run's usage, from its result lines; before the first one, an estimate from its
 * assistant lines. Claude Code has reported it three ways, and a run takes the most exact one it saw:
 *
 * - `model_usage_since_last_result` (2.1.331; per model, camelCase): what the process used since its
 *   previous result line. Summed over the run's result lines it is the run's own usage and cost, also
 *   on a resume, where `modelUsage` and `total_cost_usd` count the whole session.
 * - `modelUsage` + `total_cost_usd` (2.1.197): the process's running total (sub-agents included), and a
 *   resume starts again at 0, so the last result line's figures are the run's.
 * - `usage` of each result line: its turn's top-level requests only (no sub-agents); the fall-back when
 *   neither per-model figure says anything (an API error).
 */

interface Tokens {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
}

const ZERO: Tokens = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 };

function add(a: Tokens, b: Tokens): Tokens {
  return { input: a.input + b.input, output: a.output + b.output, cacheRead: a.cacheRead + b.cacheRead, cacheWrite: a.cacheWrite + b.cacheWrite };
}

/** An Anthropic `usage` object (snake_case): a message's or a result line's. */
function apiTokens(u: unknown): Tokens {
  const o = fields(u);
  return {
    input: num(o.input_tokens),
    output: num(o.output_tokens),
    cacheRead: num(o.cache_read_input_tokens),
    cacheWrite: num(o.cache_creation_input_tokens),
  };
}

/** A per-model map (`modelUsage`, `model_usage_since_last_result`), summed over models; null when it names none. */
function perModel(v: unknown): { tokens: Tokens; costUsd: number } | null {
  const o = obj(v);
  if (!o) return null;
  let tokens = ZERO;
  let costUsd = 0;
  let models = 0;
  for (const m of Object.values(o)) {
    const f = obj(m);
    if (!f) continue;
    models++;
    tokens = add(tokens, {
      input: num(f.inputTokens),
      output: num(f.outputTokens),
      cacheRead: num(f.cacheReadInputTokens),
      cacheWrite: num(f.cacheCreationInputTokens),
    });
    costUsd += num(f.costUSD);
  }
  return models ? { tokens, costUsd } : null;
}

function toUsage(t: Tokens, costUsd: number | null): Usage {
  return {
    inputTokens: t.input,
    outputTokens: t.output,
    cacheReadTokens: t.cacheRead,
    cacheWriteTokens: t.cacheWrite,
    reasoningTokens: 0,
    totalTokens: t.input + t.output + t.cacheRead + t.cacheWrite,
    costUsd,
  };
}

export class UsageTally {
  /** Assistant lines' usage by message id (several lines share one message). */
  private readonly live = new Map<string, Tokens>();
  private results = 0;
  private resultTokens: Tokens = ZERO;
  /** The last `modelUsage`, and the largest `total_cost_usd`: the process's totals. */
  private processTokens: Tokens | null = null;
  private processCost: number | null = null;
  /** Sums of `model_usage_since_last_result`, once any result line had the field. */
  private since: { tokens: Tokens; costUsd: number; models: boolean } | null = null;

  /** An assistant line's message usage (counts only until the first result line). */
  message(id: string, usage: unknown): void {
    this.live.set(id, apiTokens(usage));
  }

  /** A result line. */
  result(r: JsonObject): void {
    this.results++;
    this.resultTokens = add(this.resultTokens, apiTokens(r.usage));
    const mu = perModel(r.modelUsage);
    if (mu) this.processTokens = mu.tokens;
    if (typeof r.total_cost_usd === 'number' && Number.isFinite(r.total_cost_usd)) this.processCost = Math.max(this.processCost ?? 0, r.total_cost_usd);
    if (obj(r.model_usage_since_last_result)) {
      const s = perModel(r.model_usage_since_last_result);
      const before = this.since ?? { tokens: ZERO, costUsd: 0, models: false };
      this.since = s ? { tokens: add(before.tokens, s.tokens), costUsd: before.costUsd + s.costUsd, models: true } : before;
    }
  }

  /** The run's usage so far: null before anything reported it. */
  usage(): Usage | null {
    if (this.results > 0) {
      // A sum of dollar amounts: without float noise (0.1 + 0.2).
      if (this.since) return toUsage(this.since.models ? this.since.tokens : this.resultTokens, Math.round(this.since.costUsd * 1e9) / 1e9);
      return toUsage(this.processTokens ?? this.resultTokens, this.processCost);
    }
    // Before any result line: their output_tokens are the count at the start of each message, so
    // outputs are under-counted; no cost.
    let t = ZERO;
    for (const u of this.live.values()) t = add(t, u);
    return toUsage(t, null);
  }
}
