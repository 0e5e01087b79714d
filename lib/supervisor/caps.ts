import type { AgentAdapter, StreamState } from '../agents/types.js';
import { monotonicMs, nowIso } from '../base/time.js';
import type { ProcessIdentity } from '../proc/identity.js';
import { stopRun } from '../proc/stop.js';
import { snapshotRun } from '../proc/tree.js';
import { NO_CAPS, type Caps, type Reason, type RunRecord } from '../registry/record.js';
import { updateRecord } from '../registry/store.js';
import { DEFAULT_CANCEL_GRACE_MS } from './stall.js';

/**
 * The spend caps the supervisor holds a run to: those its adapter leaves to the stream (`CapMode`
 * `stream`; the `native` ones are the CLI's own). When the figures the stream reports cross one, the run
 * is stopped the way subagent-cancel stops it (and a stall with --stall-action cancel: lib/supervisor/stall.ts)
 * — the intent recorded first, then the CLI's graceful signal, the run's cancel grace, TERM, KILL — and its
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

/** What the guard of one run needs: its record as started, the agent, and where to log. */
export interface CapGuardInput {
  dir: string;
  record: RunRecord;
  adapter: AgentAdapter;
  state: StreamState;
  agent: ProcessIdentity | null;
  log: (message: string) => void;
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
 * records the intent (unless a cancel was asked for already) and stops the run; after that it does nothing.
 */
export function capGuard(g: CapGuardInput): CapGuard {
  const caps = { ...NO_CAPS, ...g.record.caps };
  let done = false;
  let timer: NodeJS.Timeout | null = null;
  const stop = (crossed: Crossed): void => {
    if (done) return;
    done = true;
    let marked = false;
    try {
      updateRecord(g.dir, (r) => {
        if (r.status === 'done' || r.cancel) return null;
        marked = true;
        return { ...r, cancel: { requestedAt: nowIso(), signal: g.adapter.gracefulSignal, by: process.pid, ...crossed } };
      });
    } catch (err) {
      g.log(`could not record the ${crossed.reason} stop (stopping anyway): ${(err as Error).message}`);
      marked = true;
    }
    if (!marked) return;
    g.log(`${crossed.message}; stopping the agent`);
    void stopCapped(g).catch((err: unknown) => g.log(`stopping the agent failed: ${(err as Error).message}`));
  };
  const limit = caps.maxTimeSec ?? null;
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

async function stopCapped(g: CapGuardInput): Promise<void> {
  const roots = g.agent ? [g.agent] : [];
  const snapshot = () => snapshotRun(roots, `SUBAGENT_RUN_ID=${g.record.runId}`, new Set([process.pid]));
  const seen = snapshot();
  if (seen.length === 0) return;
  const signal = g.adapter.gracefulSignal;
  // The grace cancel would give (SUBAGENT_CANCEL_GRACE_MS at the run's start, in its record).
  const graceMs = g.record.cancelGraceMs ?? DEFAULT_CANCEL_GRACE_MS;
  await stopRun(seen, snapshot, { signal, wholeTree: signal === 'SIGTERM', agent: g.agent, graceMs });
}
