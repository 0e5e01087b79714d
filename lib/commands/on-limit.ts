import { SubagentError } from '../base/errors.js';
import { DEFAULT_LIMIT_RETRIES, type LimitPolicy, type RunRecord } from '../registry/record.js';
import { envSetting } from './settings.js';

/** What a run does when it ends on a usage limit (docs/contract.md, "Waiting out a limit"). */
export interface LimitOptions {
  /** `fail` (default: SUBAGENT_ON_LIMIT, else fail; resume: the run's): the run ends as any other. `wait`: parked until the limit resets, then resumed. */
  onLimit?: 'fail' | 'wait' | undefined;
  /** The prompt of an attempt after a limit; default DEFAULT_LIMIT_PROMPT (resume: the run's). */
  limitPrompt?: string | undefined;
  /** How many attempts after a limit in a row; default 3 (resume: the run's). */
  limitRetries?: number | undefined;
}

const ACTIONS = ['fail', 'wait'] as const;

/** The limit policy a new run records: the options checked, else the earlier run's (a resume), else the environment's. */
export function limitPolicy(o: LimitOptions, env: NodeJS.ProcessEnv, last?: RunRecord): LimitPolicy | null {
  if (o.onLimit !== undefined) parseOnLimit(o.onLimit, '--on-limit');
  if (o.limitRetries !== undefined && !(Number.isInteger(o.limitRetries) && o.limitRetries >= 0 && o.limitRetries <= 1000)) {
    throw badRetries(String(o.limitRetries), '--limit-retries');
  }
  if (o.limitPrompt !== undefined && o.limitPrompt === '') {
    throw new SubagentError('E_ARG_INVALID', '--limit-prompt is empty', {
      hint: 'give the words an attempt after a limit begins with, or leave it out for the default',
    });
  }
  const action = o.onLimit ?? (last ? (last.onLimit ? 'wait' : 'fail') : (envSetting(env, 'onLimit', parseOnLimit) ?? 'fail'));
  if (action === 'fail') return null;
  return {
    action,
    prompt: o.limitPrompt ?? last?.onLimit?.prompt ?? null,
    retries: o.limitRetries ?? last?.onLimit?.retries ?? DEFAULT_LIMIT_RETRIES,
    retry: 0,
  };
}

function parseOnLimit(raw: string, source: string): 'fail' | 'wait' {
  if ((ACTIONS as readonly string[]).includes(raw)) return raw as 'fail' | 'wait';
  throw new SubagentError('E_ARG_INVALID', `${source} "${raw}" is not fail or wait`, {
    value: raw,
    hint: 'give fail (a limit ends the run, the default) or wait (the run waits for the reset and goes on)',
  });
}

/** --limit-retries as text: a whole number from 0 to 1000. */
export function parseRetries(raw: string, source: string): number {
  if (!/^[0-9]{1,4}$/.test(raw) || Number(raw) > 1000) throw badRetries(raw, source);
  return Number(raw);
}

function badRetries(raw: string, source: string): SubagentError {
  return new SubagentError('E_ARG_INVALID', `${source} "${raw}" is not a number of retries`, {
    value: raw,
    hint: `give ${source} a whole number from 0 to 1000`,
  });
}
