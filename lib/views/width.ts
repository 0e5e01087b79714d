/**
 * Display width of text in a terminal: East Asian wide and fullwidth characters and emoji take two
 * columns, combining marks and zero-width characters none, control characters are shown as "?".
 */
// biome-ignore lint/suspicious/noMisleadingCharacterClass: a class of combining marks, each matched alone (one code point at a time) on purpose
const ZERO = /[\u0300-\u036F\u0483-\u0489\u0591-\u05BD\u0610-\u061A\u064B-\u065F\u0E31\u0E34-\u0E3A\u200B-\u200F\u20D0-\u20FF\uFE00-\uFE0F\uFE20-\uFE2F]/u;
const WIDE =
  /[\u1100-\u115F\u2E80-\u303E\u3041-\u33FF\u3400-\u4DBF\u4E00-\u9FFF\uA000-\uA4CF\uAC00-\uD7A3\uF900-\uFAFF\uFE30-\uFE4F\uFF00-\uFF60\uFFE0-\uFFE6\u{1F300}-\u{1F64F}\u{1F900}-\u{1F9FF}\u{20000}-\u{3FFFD}]/u;

const EMOJI = /\p{Emoji_Presentation}/u;
const ASCII = /^[\x20-\x7e]*$/;

export function charWidth(ch: string): number {
  if (ZERO.test(ch)) return 0;
  return WIDE.test(ch) || EMOJI.test(ch) ? 2 : 1;
}

/** Control characters (and escapes a record might carry) never reach the terminal. */
export function printable(text: string): string {
  return text.replace(/[\u0000-\u001F\u007F-\u009F]/g, '?');
}

export function displayWidth(text: string): number {
  // Printable ASCII, most of what a table holds: a column each.
  if (ASCII.test(text)) return text.length;
  let w = 0;
  for (const ch of text) w += charWidth(ch);
  return w;
}

/** Cuts to at most `width` columns, marking the cut with "…". */
export function fit(text: string, width: number): string {
  if (displayWidth(text) <= width) return text;
  if (width <= 0) return '';
  let out = '';
  let w = 0;
  for (const ch of text) {
    const cw = charWidth(ch);
    if (w + cw > width - 1) break;
    out += ch;
    w += cw;
  }
  return out + '…';
}

export function pad(text: string, width: number): string {
  return text + ' '.repeat(Math.max(0, width - displayWidth(text)));
}

/** A line of text broken into rows of at most `width` columns (at spaces where it can); never empty. */
export function wrap(text: string, width: number): string[] {
  const rows: string[] = [];
  let row = '';
  let w = 0;
  let lastSpace = -1;
  for (const ch of text) {
    const cw = charWidth(ch);
    if (w + cw > width && row !== '') {
      // Break at the row's last space when there is one, carrying the word over.
      if (lastSpace > 0) {
        rows.push(row.slice(0, lastSpace));
        row = row.slice(lastSpace + 1);
        w = displayWidth(row);
      } else {
        rows.push(row);
        row = '';
        w = 0;
      }
      lastSpace = -1;
    }
    if (ch === ' ') lastSpace = row.length;
    row += ch;
    w += cw;
  }
  rows.push(row);
  return rows;
}
