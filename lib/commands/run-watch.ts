import { SubagentError } from '../base/errors.js';
import type { RunRecord } from '../registry/record.js';
import { badStallSec, cancelGraceMs, defaultStallSec, hookTimeoutSec } from './settings.js';

/** The options of start and resume that say how a run is watched: stalls (docs/stalls.md), the end hook (docs/hooks.md), and what of it may outlive it. */
export interface WatchOptions {
  /** Seconds without a sign of work after which the run counts as stalled; 0 turns it off. Default: SUBAGENT_STALL_SEC, else 600 (resume: the run's). */
  stallAfterSec?: number | undefined;
  /** `none` (default; resume: the run's): only the flag. `cancel`: the supervisor cancels a stalled run. */
  stallAction?: 'none' | 'cancel' | undefined;
  /** A command for /bin/sh -c, run once when the run ends (docs/hooks.md); "" for none. Resume: the run's unless given. */
  onEnd?: string | undefined;
  /** Keep the processes the agent leaves behind when it exits (default: stopped after a grace). Resume: the run's unless given. */
  keepChildren?: boolean | undefined;
}

/** What a new record holds of them. */
export type WatchFields = Pick<RunRecord, 'stallAfterSec' | 'stallAction' | 'onEnd' | 'hookTimeoutSec' | 'cancelGraceMs' | 'keepChildren'>;

const ACTIONS = ['none', 'cancel'] as const;

/**
 * The watch settings of a new run: the options checked, else — on a resume — the previous run's, else
 * the environment's defaults. Nothing is written: a bad value is E_ARG_INVALID before the run exists.
 */
export function watchFields(o: WatchOptions, env: NodeJS.ProcessEnv, last?: RunRecord): WatchFields {
  if (o.stallAfterSec !== undefined && !(Number.isFinite(o.stallAfterSec) && o.stallAfterSec >= 0)) throw badStallSec(String(o.stallAfterSec), '--stall-after');
  if (o.stallAction !== undefined && !(ACTIONS as readonly string[]).includes(o.stallAction)) {
    throw new SubagentError('E_ARG_INVALID', `--stall-action "${o.stallAction}" is not an action`, {
      value: o.stallAction,
      hint: 'give --stall-action none (only report the stall) or cancel (cancel a stalled run)',
    });
  }
  const sec = o.stallAfterSec ?? (last ? (last.stallAfterSec ?? 0) : defaultStallSec(env));
  if (o.stallAction === 'cancel' && sec === 0) {
    throw new SubagentError('E_ARG_INVALID', '--stall-action cancel needs a stall time, and stalls are not watched (--stall-after 0 or SUBAGENT_STALL_SEC=0)', {
      hint: 'give --stall-after SEC with --stall-action cancel',
    });
  }
  return {
    stallAfterSec: sec === 0 ? null : sec,
    // A run whose stalls are not watched has nothing to act on: a later --stall-after starts again from none.
    stallAction: sec === 0 ? 'none' : (o.stallAction ?? last?.stallAction ?? 'none'),
    onEnd: o.onEnd !== undefined ? o.onEnd || null : (last?.onEnd ?? null),
    hookTimeoutSec: hookTimeoutSec(env),
    cancelGraceMs: cancelGraceMs(env),
    keepChildren: o.keepChildren ?? last?.keepChildren ?? false,
  };
}
