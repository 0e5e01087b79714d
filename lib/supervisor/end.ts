import type { AgentAdapter, StreamState, Verdict } from '../agents/types.js';
import type { Outcome, Reason, RunRecord } from '../registry/record.js';
import { cancelledEnd } from '../runs/reason.js';
import { crossedCap } from './caps.js';

/** How a run's end is recorded: its outcome, its error in words, and its reason (docs/contract.md, "Reasons"). */
export interface EndFields {
  outcome: Outcome;
  error: string | null;
  reason: Reason | null;
}

/**
 * The outcome, error and reason of a run's end, from its record as it is now, the adapter's verdict and,
 * when the agent ran, its final stream state. In order: a cancel (a caller's: `cancelled`; the
 * supervisor's at a cap: `failed` with the cap), an agent that could not be started (`spawn-failed`), a
 * cap the supervisor holds that the final figures exceed (even when the run got to its end before the
 * stop: over its cap is over its cap), then the CLI's verdict.
 */
export function endOf(r: RunRecord, verdict: Verdict, ran: { adapter: AgentAdapter; state: StreamState } | null): EndFields {
  if (r.cancel) return cancelledEnd(r.cancel);
  if (!ran) return { outcome: 'failed', error: verdict.error, reason: 'spawn-failed' };
  const crossed = crossedCap(r.caps, ran.adapter, ran.state);
  if (crossed) return { outcome: 'failed', error: crossed.message, reason: crossed.reason };
  if (verdict.outcome === 'succeeded') return { outcome: 'succeeded', error: verdict.error, reason: null };
  return { outcome: 'failed', error: verdict.error, reason: verdict.reason ?? 'unknown' };
}

/**
 * When the limit that ended a run resets, as its CLI said (`StreamState.resetsAt`): only for an end whose
 * reason is `rate-limit`; null for every other end and when the CLI did not say.
 */
export function limitReset(end: EndFields, state: StreamState | null): string | null {
  return end.reason === 'rate-limit' && state ? state.resetsAt : null;
}
