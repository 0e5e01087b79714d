import { fileSize, LineFollower } from '../../base/lines.js';
import { fields, isObject, num, parseObject, str } from '../../base/json.js';
import type { Usage } from '../../registry/record.js';
import type { SessionQuery, StoreUsage } from '../types.js';
import { codexHome, findRollout } from './store.js';
import { usageFromCodex, type LimitsSeen } from './stream.js';

/**
 * A Codex run's token usage while it goes, from its thread's rollout file (measured with 0.169.0; see
 * docs/agents/codex.md, "Usage"). The `--json` stream reports usage only in `turn.completed`, when the
 * run's one turn is over; the rollout gets a `token_usage_record` the moment each model response ends
 * (before the tools it asked for run), `payload.usage` being that response's own counts. Codex only
 * appends to a rollout, a resume to the thread's own: this run's records are those after the size the
 * rollout had when the reader was made, right before the run began — or all of a rollout the run itself
 * created (a new thread, whose id the reader learns from the stream). Each record ends one model turn —
 * a request to the model, whose tools run after it — so this run's records are its turns too: the
 * stream shows none (its `turn.started` is the whole run).
 */

/** The marks of the lines read: every other line (some are tens of KB) is passed by without parsing it. */
const USAGE_RECORD = '"token_usage_record"';
/** A `token_count` event's rate-limit windows (`primary`/`secondary`, each `used_percent`, `window_minutes`, `resets_at`), from the provider's headers. */
const RATE_LIMITS = '"rate_limits":{';

/** The sums of the records read so far, in Codex's words. */
export interface Totals {
  input_tokens: number;
  cached_input_tokens: number;
  cache_write_input_tokens: number;
  output_tokens: number;
  reasoning_output_tokens: number;
}

/** The sums `totals` (null: none yet) with one `token_usage_record`'s `payload.usage` added. */
export function addRecordUsage(totals: Totals | null, usage: unknown): Totals {
  const u = fields(usage);
  const sum = totals ?? { input_tokens: 0, cached_input_tokens: 0, cache_write_input_tokens: 0, output_tokens: 0, reasoning_output_tokens: 0 };
  for (const k of Object.keys(sum) as Array<keyof Totals>) sum[k] += num(u[k]);
  return sum;
}

/** What a reader has read: the run's usage so far (null before its first record), and its records. */
interface Reading {
  usage: Usage | null;
  turns: number;
}

/** The reader of the records appended to `file` from `offset` on, of thread `threadId`. */
function recordsReader(file: string, threadId: string, offset: number, limitsSeen?: LimitsSeen): () => Reading {
  let totals: Totals | null = null;
  let turns = 0;
  const follower = new LineFollower(
    file,
    (line) => {
      if (limitsSeen && line.includes(RATE_LIMITS)) {
        const p = fields(parseObject(line)?.payload);
        if (p.type === 'token_count' && isObject(p.rate_limits)) limitsSeen(p.rate_limits);
        return;
      }
      if (!line.includes(USAGE_RECORD)) return;
      const rec = parseObject(line);
      const p = fields(rec?.payload);
      if (rec?.type !== 'token_usage_record' || (str(p.thread_id) ?? threadId) !== threadId) return;
      turns++;
      totals = addRecordUsage(totals, p.usage);
    },
    offset,
  );
  return () => {
    try {
      follower.poll();
    } catch {
      /* unreadable for now: what was read so far stands */
    }
    return { usage: totals ? usageFromCodex(totals) : null, turns };
  };
}

/**
 * The reader of a run's usage in its thread's rollout (`AgentAdapter.storeUsage`), made before the run
 * starts. A resume's rollout is found now, and read from its present end; a new thread's is looked for
 * once the stream named the thread, and read whole. `limitsSeen` is given the run's rate-limit snapshots.
 */
export function storeUsage(q: SessionQuery, limitsSeen?: LimitsSeen): StoreUsage {
  const home = codexHome(q.storeEnv);
  let read: (() => Reading) | null = null;
  let turns = 0;
  let resumed: string | null = null;
  if (q.sessionId !== null) {
    const file = findRollout(home, q.sessionId);
    // A resume whose rollout is not found now (elsewhere, archived) is read from where it is found later:
    // never counting the earlier runs is what matters.
    if (file) read = recordsReader(file, q.sessionId, fileSize(file), limitsSeen);
    else resumed = q.sessionId;
  }
  return {
    read(sessionId) {
      if (!read) {
        const thread = resumed ?? sessionId;
        const file = thread ? findRollout(home, thread) : null;
        if (!thread || !file) return null;
        read = recordsReader(file, thread, resumed ? fileSize(file) : 0, limitsSeen);
      }
      const now = read();
      turns = now.turns;
      return now.usage;
    },
    turns: () => turns,
  };
}
