import { fileSize, LineFollower } from '../../base/lines.js';
import { fields, num, parseObject } from '../../base/json.js';
import type { Usage } from '../../registry/record.js';
import type { SessionQuery, StoreUsage } from '../types.js';
import { sessionLog } from './store.js';

/**
 * A Copilot run's token usage, from its session's event log in its own store (measured with 1.0.102; see
 * docs/agents/copilot.md, "Usage"): its `--output-format json` stream has no token counts, but every model
 * call — the run's own and its sub-agents' — is a `session.usage_record` there, `data.usage {inputTokens,
 * outputTokens, cacheReadTokens, cacheWriteTokens, reasoningTokens?, cost}` with the provider's counts.
 * Copilot only appends to that log, and writes it a second or two after the events (its stream comes
 * first; the first write of a new session makes the file): this run's records are those after the size
 * the log had when the reader was made, right before the run began.
 */

/** The sums of the records read so far. */
interface Totals {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  reasoning: number;
}

/** The mark of the one event read: every other line is passed by without parsing it. */
const USAGE_RECORD = '"session.usage_record"';

/**
 * Copilot's counts → ours. Its `inputTokens` includes the cached and cache-write part and `outputTokens`
 * the reasoning part (OpenAI's convention, which it keeps for every provider); ours keeps input without
 * cache, so that inputTokens + cacheReadTokens + cacheWriteTokens + outputTokens = totalTokens. With
 * bring-your-own-key there is no cost (`cost` is 0, its premium requests, not dollars).
 */
function usageOf(t: Totals): Usage {
  return {
    inputTokens: Math.max(0, t.input - t.cacheRead - t.cacheWrite),
    outputTokens: t.output,
    cacheReadTokens: t.cacheRead,
    cacheWriteTokens: t.cacheWrite,
    reasoningTokens: t.reasoning,
    totalTokens: t.input + t.output,
    costUsd: null,
  };
}

/** The sums of the `session.usage_record` lines given to `add` (every other line is passed by unparsed). */
export class UsageSum {
  private totals: Totals | null = null;

  /** Whether `line` was a usage record. */
  add(line: string): boolean {
    if (!line.includes(USAGE_RECORD)) return false;
    const ev = parseObject(line);
    if (ev?.type !== 'session.usage_record') return false;
    const u = fields(fields(ev.data).usage);
    this.totals ??= { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, reasoning: 0 };
    const t = this.totals;
    t.input += num(u.inputTokens);
    t.output += num(u.outputTokens);
    t.cacheRead += num(u.cacheReadTokens);
    t.cacheWrite += num(u.cacheWriteTokens);
    t.reasoning += num(u.reasoningTokens);
    return true;
  }

  /** Null until a record came. */
  usage(): Usage | null {
    return this.totals ? usageOf(this.totals) : null;
  }
}

/**
 * The usage of the `session.usage_record`s appended to `file` from now on (null: no file to read). Each
 * `read()` reads only what was appended since the last; null until a record came.
 */
export function usageReader(file: string | null): StoreUsage {
  if (!file) return { read: () => null };
  const sum = new UsageSum();
  const follower = new LineFollower(file, (line) => sum.add(line), fileSize(file));
  return {
    read() {
      try {
        follower.poll();
      } catch {
        /* unreadable for now: what was read so far stands */
      }
      return sum.usage();
    },
  };
}

/** The reader of a run's usage in its session's log (`AgentAdapter.storeUsage`), made before the run starts. */
export function storeUsage(q: SessionQuery): StoreUsage {
  return usageReader(sessionLog(q.storeEnv, q.sessionId));
}
