import { fields, parseObject, num, str } from '../../base/json.js';

/**
 * A readable error out of the CLI's message, and the HTTP status it names. API errors come as
 * `[API Error: {"error":{"code":500,"message":…,"status":"INTERNAL"}}]` (or `got status: … {…}` for
 * one inside a stream): unwrapped to `API Error: <message> (HTTP 500 INTERNAL)`, any advice after it kept.
 */
export function errorText(message: string): { text: string; status: number | null } {
  const t = message.trim();
  const at = t.indexOf('{');
  const end = t.lastIndexOf('}');
  if (at !== -1 && end > at) {
    const e = fields(parseObject(t.slice(at, end + 1))?.error);
    const inner = str(e.message);
    if (inner) {
      const code = num(e.code) || null;
      const word = str(e.status);
      const rest = t.slice(end + 1).replace(/^\]/, '');
      return { text: `API Error: ${inner}${code ? ` (HTTP ${code}${word ? ` ${word}` : ''})` : ''}${rest}`, status: code };
    }
  }
  return { text: t.replace(/^\[API Error: ([^\n]*)\]/, 'API Error: $1'), status: null };
}
