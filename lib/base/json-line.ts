/** JSON text where U+2028/U+2029 are escaped, so line-splitting readers (and JS eval) never break it. */
export function escapeSeparators(text: string): string {
  return text.indexOf('\u2028') === -1 && text.indexOf('\u2029') === -1
    ? text
    : text.replace(/[\u2028\u2029]/g, (c) => (c === '\u2028' ? '\\u2028' : '\\u2029'));
}

/** One JSON line, U+2028/U+2029 escaped: what every verb prints, and what the registry's logs hold. */
export function jsonLine(value: unknown): string {
  return escapeSeparators(JSON.stringify(value)) + '\n';
}
