import type { AgentAdapter, StreamState } from '../agents/types.js';
import { monotonicMs } from '../base/time.js';
import type { Caps, Reason, RunRecord } from '../registry/record.js';

/**
 * The spend caps the supervisor holds a run to: those its adapter leaves to the stream (`CapMode`
 * `stream`; the `native` ones are the CLI's own). When the figures the stream reports cross one, the run
 * is stopped by the supervisor's one stop path (lib/supervisor/run.ts, as a stall with --stall-action cancel
 * is) — the intent recorded, then the CLI's graceful signal, the run's cancel grace, TERM, KILL — and its
 * end is recorded `failed` with the cap as its reason (lib/runs/reason.ts).
 */

/** A cap the stream's figures have crossed: its reason, and the run's error in words. */
export interface Crossed {
  reason: Reason;
  message: string;
}

/** The first cap held by the supervisor that the figures exceed (a cap of N allows N), or null. */
export function crossedCap(caps: Caps, adapter: AgentAdapter, s: StreamState): Crossed | null {
  const how = adapter.caps;
  const cost = s.usage?.costUsd ?? null;
  if (how.cost === 'stream' && caps.maxCostUsd !== null && cost !== null && cost > caps.maxCostUsd)
    return { reason: 'max-cost', message: `stopped at --max-cost ${caps.maxCostUsd}: the run had cost $${Number(cost.toFixed(6))}` };
  const tokens = s.usage?.totalTokens ?? null;
  if (how.tokens === 'stream' && caps.maxTokens !== null && tokens !== null && tokens > caps.maxTokens)
    return { reason: 'max-tokens', message: `stopped at --max-tokens ${caps.maxTokens}: the run had used ${tokens} tokens` };
  if (how.turns === 'stream' && caps.maxTurns !== null && s.turns > caps.maxTurns)
    return { reason: 'max-turns', message: `stopped at --max-turns ${caps.maxTurns}: the run began turn ${s.turns}` };
  return null;
}

/** What the guard of one run needs: its record as started, the stream's state, and what stops the run. */
export interface CapGuardInput {
  record: RunRecord;
  adapter: AgentAdapter;
  state: StreamState;
  /** The supervisor's one stop path (lib/supervisor/run.ts), called once, with the cap crossed. */
  stop: (crossed: Crossed) => void;
}

/** setTimeout's longest delay (about 24.8 days); a longer time cap is waited for in steps. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** A run's guard: `check` whenever the stream said more; `close` once the agent has exited. */
export interface CapGuard {
  check(): void;
  close(): void;
}

/**
 * The guard of one run: the first time a cap is crossed — a spend cap by the stream's figures (at each
 * `check`), the time cap by the clock (from the guard's making, right after the agent started) — it
 * asks the supervisor to stop the run; after that it does nothing.
 */
export function capGuard(g: CapGuardInput): CapGuard {
  const caps = g.record.caps;
  let done = false;
  let timer: NodeJS.Timeout | null = null;
  const stop = (crossed: Crossed): void => {
    if (done) return;
    done = true;
    g.stop(crossed);
  };
  const limit = caps.maxTimeSec;
  if (limit !== null) {
    const deadline = monotonicMs() + limit * 1000;
    const arm = (): void => {
      const left = deadline - monotonicMs();
      if (left <= 0) {
        stop({ reason: 'max-time', message: `stopped at --max-time ${limit}: the agent had run ${limit} s` });
        return;
      }
      timer = setTimeout(arm, Math.min(left, MAX_TIMER_MS));
      timer.unref();
    };
    arm();
  }
  const spend = caps.maxCostUsd !== null || caps.maxTokens !== null || caps.maxTurns !== null;
  return {
    check: () => {
      if (done || !spend) return;
      const crossed = crossedCap(caps, g.adapter, g.state);
      if (crossed) stop(crossed);
    },
    close: () => {
      if (timer) clearTimeout(timer);
      timer = null;
    },
  };
}
