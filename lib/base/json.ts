/**
 * Reading JSON whose shape nobody promised: the agent CLIs' event lines, their transcripts and exports.
 * Each helper narrows one value and never throws, so a parser reads a field as `str(o.id)` and goes on
 * when a CLI version drops or retypes it. The summaries a transcript keeps (`cap`, `capCounted`,
 * `shortLine`) live here too: every adapter cuts tool inputs and outputs the same ways.
 */

/** A JSON object, its fields not yet checked. */
export type JsonObject = Record<string, unknown>;

/** Whether `v` is a JSON object (not null, not an array). */
export function isObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** `v` when it is a JSON object, else null. */
export function obj(v: unknown): JsonObject | null {
  return isObject(v) ? v : null;
}

/** The fields of `v`: `v` itself when it is a JSON object, else an empty object (so `fields(x).y` reads safely). */
export function fields(v: unknown): JsonObject {
  return isObject(v) ? v : {};
}

/** `v` when it is a string, else null. */
export function str(v: unknown): string | null {
  return typeof v === 'string' ? v : null;
}

/** `v` when it is a finite number, else 0 (token counts: a missing count adds nothing). */
export function num(v: unknown): number {
  return typeof v === 'number' && Number.isFinite(v) ? v : 0;
}

/** The JSON object on one line of text, or null when the line is not JSON or not an object. */
export function parseObject(text: string): JsonObject | null {
  try {
    return obj(JSON.parse(text));
  } catch {
    return null;
  }
}

/** The first `n` UTF-16 units of `text`, one fewer when the last would be half of a surrogate pair. */
function head(text: string, n: number): string {
  const cut = text.slice(0, n);
  const last = cut.charCodeAt(cut.length - 1);
  return last >= 0xd800 && last <= 0xdbff ? cut.slice(0, -1) : cut;
}

/** `text` cut to `max` characters at most, the cut marked by a final "…" (counted in `max`). */
export function cap(text: string, max: number): string {
  if (text.length <= max) return text;
  return `${head(text, max - 1)}…`;
}

/** `text` cut after `max` characters, saying how many were cut: `abc… (12 more chars)`. */
export function capCounted(text: string, max: number): string {
  if (text.length <= max) return text;
  const kept = head(text, max);
  return `${kept}… (${text.length - kept.length} more chars)`;
}

/** `text` on one line (runs of white space folded to one space, trimmed), then `cap`ped. */
export function shortLine(text: string, max: number): string {
  return cap(text.replace(/\s+/g, ' ').trim(), max);
}
