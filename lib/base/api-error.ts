/**
 * The reason of a model-API error, for the adapters' verdicts (lib/agents/): from the HTTP status where
 * the CLI reports one, else from its words. Measured phrasings (test/fixtures/agents/): Claude "Failed to
 * authenticate. API Error: 401 …", "API Error: Request rejected (429) · …", "API Error: 500 …",
 * "Unable to connect to API (ConnectionRefused)"; Codex "unexpected status 401 Unauthorized: …",
 * "exceeded retry limit, last status: 429 Too Many Requests", "You’ve hit your usage limit. …", "Quota
 * exceeded. …", "We’re currently experiencing high demand, …", "stream disconnected before completion";
 * OpenCode `APIError` with `data.statusCode`.
 */
export type ApiReason = 'auth' | 'rate-limit' | 'api-error';

const AUTH = /\b(401|403)\b|unauthori[sz]ed|failed to authenticate|authentication|(invalid|missing)[ _-](x-)?api[ _-]?key|forbidden/i;
const LIMIT = /\b(402|429)\b|too many requests|rate[ _-]?limit|usage limit|quota|credit balance|billing/i;
const API =
  /\b5\d\d\b|api error|server error|overloaded|high demand|stream disconnected|(unable to|could not|cannot) connect|connection (refused|reset|error|failed)|bad request|invalid_request/i;

/** `auth`, `rate-limit` or `api-error` for an error of the model API; null when neither status nor words say it is one. */
export function apiErrorReason(status: number | null, text: string): ApiReason | null {
  if (status !== null && Number.isInteger(status) && status >= 400) {
    if (status === 401 || status === 403) return 'auth';
    if (status === 402 || status === 429) return 'rate-limit';
    return 'api-error';
  }
  if (AUTH.test(text)) return 'auth';
  if (LIMIT.test(text)) return 'rate-limit';
  if (API.test(text)) return 'api-error';
  return null;
}
