import type { AgentRun, StreamState } from '../agents/types.js';
import type { RunRecord } from '../registry/record.js';

/**
 * A run's usage from the CLI's own store, for an adapter whose stream has none (`AgentRun.storeUsage`:
 * Copilot, Codex, Gemini). The supervisor reads it whenever it reads the stream, every STORE_POLL_MS besides (the CLI
 * writes its store while its stream is quiet, during a long tool), and once more after the agent exited;
 * what it reads is the run's `state.usage`, so the record and the caps (lib/supervisor/caps.ts) take it
 * as they take a stream's. Once the stream reports a usage of its own (Codex's turn.completed, Gemini's result:
 * its figures are the ones the run has always recorded), the store's usage is no longer taken. A store that counts
 * the run's model turns (`StoreUsage.turns`: Codex, whose stream shows none) is what `state.turns` is.
 */

/** How often the store is read when the stream says nothing: a stat and the bytes appended, no more. */
export const STORE_POLL_MS = 1000;

/** Reads what the store gained into `state.usage`; true when the usage changed. */
export type StoreUsageRead = (state: StreamState) => boolean;

/**
 * The store reader of a run, made right before its agent starts (what the store holds then is the
 * session's earlier runs, not this one), or null when the adapter reads usage from the stream.
 */
export function storeUsageOf(run: AgentRun, record: RunRecord): StoreUsageRead | null {
  if (!run.storeUsage) return null;
  const reader = run.storeUsage({ sessionId: record.sessionId, cwd: record.cwd, storeEnv: record.storeEnv });
  let last = 'null';
  /** The usage this reader put in the state: any other there is the stream's own. */
  let written: StreamState['usage'] = null;
  return (state) => {
    const streamed = state.usage !== written;
    if (streamed && !reader.turns) return false;
    const usage = reader.read(record.sessionId ?? state.sessionId);
    let changed = false;
    const turns = reader.turns?.() ?? 0;
    if (turns > state.turns) {
      state.turns = turns;
      changed = true;
    }
    const now = JSON.stringify(usage);
    if (streamed || usage === null || now === last) return changed;
    last = now;
    state.usage = written = usage;
    return true;
  };
}
