import { isoOf } from '../../base/time.js';
import { fields, str, type JsonObject } from '../../base/json.js';
import type { StreamState } from '../types.js';

/**
 * What the CLIs say of a provider's usage, rate and spend limits, as the stream state's `resetsAt` (a
 * limit reached: when it resets) and `limitWarning` (a limit near). Each reads only what its CLI really
 * prints (docs/agents/<cli>.md, "Usage limits"); what a CLI does not say stays null — never a guess.
 */

/** ISO-8601 of a time in epoch seconds (what the providers' headers and the CLIs carry), null when it is none. */
export function isoOfEpochSeconds(v: unknown): string | null {
  return typeof v === 'number' && v > 0 ? isoOf(v * 1000) : null;
}

/** ISO-8601 of `seconds` after `at` (epoch ms, or an ISO time), null when either is none or the wait is not positive. */
export function isoAfter(at: unknown, seconds: number | null): string | null {
  const from = typeof at === 'number' ? at : typeof at === 'string' ? Date.parse(at) : Number.NaN;
  if (seconds === null || !(seconds > 0) || Number.isNaN(from)) return null;
  return isoOf(from + Math.round(seconds * 1000));
}

/**
 * The wait an HTTP answer's headers ask for, in seconds: `retry-after-ms`, and `retry-after` as seconds or
 * an HTTP date (against `now`, epoch ms) — the longer when both say one; null when neither says a positive wait.
 */
export function retryAfterSeconds(headers: JsonObject, now: number): number | null {
  const waits: number[] = [];
  const ms = Number(str(headers['retry-after-ms']) ?? Number.NaN);
  if (ms > 0) waits.push(ms / 1000);
  const after = str(headers['retry-after'])?.trim() ?? '';
  const seconds = /^\d+(\.\d+)?$/.test(after) ? Number(after) : after ? (Date.parse(after) - now) / 1000 : Number.NaN;
  if (seconds > 0) waits.push(seconds);
  return waits.length > 0 ? Math.max(...waits) : null;
}

/**
 * The wait a quota error's words give, in seconds: Gemini CLI's "Suggested retry after 7s." (the
 * `retryDelay` of Google's RetryInfo, a protobuf duration), else Google's own "Please retry in 7.5s.";
 * null when they give none.
 */
export function retryInSeconds(text: string): number | null {
  const m = /Suggested retry after (\d+(?:\.\d+)?)s\b/.exec(text) ?? /Please retry in (\d+(?:\.\d+)?)s\b/.exec(text);
  return m ? Number(m[1]) : null;
}

/**
 * Claude Code's `rate_limit_event` (from the `anthropic-ratelimit-unified-*` headers; a subscriber's
 * sign-in only): `rejected` — a limit reached, `resetsAt` in epoch seconds; `allowed_warning` — near
 * (`utilization` 0–1, `rateLimitType` the window); `allowed` — clear.
 */
export function claudeRateLimit(state: StreamState, event: JsonObject): void {
  const info = fields(event.rate_limit_info);
  switch (str(info.status)) {
    case 'rejected':
      state.resetsAt = isoOfEpochSeconds(info.resetsAt);
      state.limitWarning = null;
      break;
    case 'allowed_warning':
      state.limitWarning = {
        window: str(info.rateLimitType),
        utilization: typeof info.utilization === 'number' ? info.utilization : null,
        resetsAt: isoOfEpochSeconds(info.resetsAt),
      };
      break;
    case 'allowed':
      state.limitWarning = null;
      break;
    default:
      break;
  }
}
