import { parseObject, type JsonObject } from '../../base/json.js';
import type { Usage } from '../../registry/record.js';
import type { StreamState } from '../types.js';

/** The state of a stream that has said nothing yet. */
export function emptyState(): StreamState {
  return {
    sessionId: null,
    toolUses: 0,
    usage: null,
    children: [],
    turns: 0,
    fatalError: null,
    lastAssistantText: null,
    skippedLines: 0,
    lastActivityAt: null,
    resetsAt: null,
    limitWarning: null,
  };
}

/**
 * The event on one line of an `ndjson` stream: a JSON object with a string `type`. Null for a blank line,
 * and for any other line, which is counted in `state.skippedLines` (noise the CLI printed, a torn line).
 */
export function eventOf(text: string, state: StreamState): JsonObject | null {
  if (text.trim() === '') return null;
  const ev = parseObject(text);
  if (ev && typeof ev.type === 'string') return ev;
  state.skippedLines++;
  return null;
}

/** The counts of a `Usage`, each of which a session-cumulative counter grows. */
const COUNTS = ['inputTokens', 'outputTokens', 'cacheReadTokens', 'cacheWriteTokens', 'reasoningTokens', 'totalTokens'] as const;

/**
 * This run's usage from the totals a CLI reports over a whole session (Codex's thread, Qwen Code's
 * session) after it and before it (`RunOptions.threadUsageBefore`). A baseline that does not fit (a
 * count would go negative: it is not this session's past) is ignored and the session total is returned.
 * No cost: the totals have none.
 */
export function runUsage(thread: Usage, before: Usage | null | undefined): Usage {
  if (!before) return thread;
  const out = { ...thread, costUsd: null };
  for (const k of COUNTS) {
    const d = thread[k] - (before[k] ?? 0);
    if (d < 0) return thread;
    out[k] = d;
  }
  return out;
}

/** Adds usages field by field; the cost is known only when every part knows it. */
export function addUsage(a: Usage | null, b: Usage | null): Usage | null {
  if (!a) return b ? { ...b } : null;
  if (!b) return { ...a };
  return {
    inputTokens: a.inputTokens + b.inputTokens,
    outputTokens: a.outputTokens + b.outputTokens,
    cacheReadTokens: a.cacheReadTokens + b.cacheReadTokens,
    cacheWriteTokens: a.cacheWriteTokens + b.cacheWriteTokens,
    reasoningTokens: a.reasoningTokens + b.reasoningTokens,
    totalTokens: a.totalTokens + b.totalTokens,
    costUsd: a.costUsd === null || b.costUsd === null ? null : a.costUsd + b.costUsd,
  };
}
