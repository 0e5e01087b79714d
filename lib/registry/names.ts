import { SubagentError } from '../base/errors.js';

/**
 * The name rule (docs/guarantees.md, 10): segments of [A-Za-z0-9._-] joined by "/", no "." or ".."
 * segment, no segment starting with "-", at most MAX_NAME_BYTES. Names are ASCII by construction, so
 * NFC/NFD look-alikes cannot exist. On disk "/" becomes "+" (a character names cannot hold), so every
 * name is one directory entry and nothing can point outside the registry.
 */
export const MAX_NAME_BYTES = 200;
const SEGMENT = /^[A-Za-z0-9._-]+$/;
/** The whole rule in one expression (ASCII only, so its length is its byte count). */
const VALID = /^(?!-)(?!\.\.?(?:\/|$))[A-Za-z0-9._-]+(?:\/(?!-)(?!\.\.?(?:\/|$))[A-Za-z0-9._-]+)*$/;

export function validateName(name: string | undefined): string {
  // The common case at once: a listing validates every name of the registry.
  if (name !== undefined && name.length <= MAX_NAME_BYTES && VALID.test(name)) return name;
  return diagnoseName(name);
}

/** The rule step by step, to say which part of it a name breaks (returns the name if none). */
export function diagnoseName(name: string | undefined): string {
  if (name === undefined) {
    throw new SubagentError('E_NAME_REQUIRED', '--name is required', { hint: 'give the run a name: --name review/api' });
  }
  const fail = (rule: string, message: string, extra: Record<string, unknown> = {}) =>
    new SubagentError('E_NAME_INVALID', `invalid name ${JSON.stringify(name)}: ${message}`, {
      name,
      rule,
      ...extra,
      hint: 'names are segments of letters, digits, ".", "_" and "-" joined by "/" (e.g. review/api-v2), at most 200 bytes',
    });
  if (name === '') throw fail('empty', 'the name is empty');
  const bytes = Buffer.byteLength(name, 'utf8');
  if (bytes > MAX_NAME_BYTES) throw fail('too-long', `it is ${bytes} bytes long; the limit is ${MAX_NAME_BYTES}`, { bytes });
  const bad = [...name].find((c) => !/[A-Za-z0-9._/-]/.test(c));
  if (bad !== undefined) {
    const cp = 'U+' + bad.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0');
    throw fail('characters', `it contains the character ${cp}, which names cannot hold`, { character: cp });
  }
  for (const segment of name.split('/')) {
    if (segment === '') throw fail('empty-segment', 'it has an empty segment (a leading, trailing or doubled "/")');
    if (segment === '.' || segment === '..') throw fail('dot-segment', `"${segment}" cannot be a segment`);
    if (segment.startsWith('-')) throw fail('leading-dash', `the segment "${segment}" starts with "-"`);
    if (!SEGMENT.test(segment)) throw fail('characters', `the segment "${segment}" holds a character names cannot hold`);
  }
  return name;
}

export function encodeName(name: string): string {
  return name.replaceAll('/', '+');
}

export function decodeName(entry: string): string | null {
  const name = entry.replaceAll('+', '/');
  try {
    validateName(name);
    return name;
  } catch {
    return null;
  }
}

/** E_NAME_NOT_FOUND: the one way every command says a name is not in the registry. */
export function nameNotFound(name: string, registry: string): SubagentError {
  return new SubagentError('E_NAME_NOT_FOUND', `no run named "${name}" in ${registry}`, {
    name,
    registry,
    hint: 'list the names with subagent-status; check --registry / SUBAGENT_DIR if you expected another registry',
  });
}

/** E_NAME_EXISTS: a new name that is taken (a start, or a start's worktree, found it first). */
export function nameExists(name: string, registry: string): SubagentError {
  return new SubagentError('E_NAME_EXISTS', `a run named "${name}" already exists`, {
    name,
    registry,
    hint: 'choose another name, resume it with resume-subagent, or look at it with subagent-status',
  });
}
