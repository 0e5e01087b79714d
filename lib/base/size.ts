/**
 * Sizes of memory as the verbs take them (`--max-memory 2G`, `--min-free-memory 512M`) and show them: a
 * number with an optional unit, K, M, G or T — powers of 1024, whatever the spelling (`G`, `GB`, `GiB`,
 * any case) — or plain bytes (`B` or none). Decimals are taken (`1.5G`); the bytes are rounded down.
 */
export const MIB = 1024 * 1024;

/** How a size is written, for hints. */
export const SIZE_FORM = 'a number with K, M, G or T (powers of 1024), or bytes';

const UNITS: Record<string, number> = { '': 1, b: 1, k: 1024, m: MIB, g: 1024 * MIB, t: 1024 * 1024 * MIB };

/** The bytes a size's text says, or null when it is not a size (or more than 2^53 − 1 bytes). */
export function parseSize(text: string): number | null {
  const m = /^([0-9]{1,15}(?:\.[0-9]{1,6})?)\s*(?:([kmgt])(?:i?b)?|(b))?$/i.exec(text.trim());
  if (!m) return null;
  const bytes = Math.floor(Number(m[1]) * UNITS[(m[2] ?? m[3] ?? '').toLowerCase()]!);
  return Number.isSafeInteger(bytes) ? bytes : null;
}

/** Bytes as a person reads them: `1.5G`, `512M`, `900K`, `12B` (the units of parseSize, one decimal at most). */
export function formatSize(bytes: number): string {
  for (const [unit, size] of [
    ['T', 1024 * 1024 * MIB],
    ['G', 1024 * MIB],
    ['M', MIB],
    ['K', 1024],
  ] as const) {
    if (bytes >= size) {
      const n = bytes / size;
      return `${n >= 100 ? Math.round(n) : Number(n.toFixed(1))}${unit}`;
    }
  }
  return `${bytes}B`;
}
