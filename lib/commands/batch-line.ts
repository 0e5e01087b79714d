import { SubagentError } from '../base/errors.js';
import { parseCap, type CapKey } from './caps.js';
import { BATCH_FIELDS, START_OPTIONS, type OptionKey, type OptionValues, type StartOption } from './options.js';
import { readPrompt } from './prompt.js';
import { parseRetries } from './on-limit.js';
import { badStallSec, parseStallSec } from './settings.js';

/**
 * One line of `start-subagent --batch` as a JSON object, its fields checked against the options'
 * (lib/commands/options.ts), or against `fields` (a follow-up's line: resume-subagent --queue --batch).
 */
export function parseLine(raw: string, fields: readonly string[] = BATCH_FIELDS): Record<string, unknown> {
  let line: Record<string, unknown>;
  try {
    line = JSON.parse(raw) as Record<string, unknown>;
  } catch (err) {
    throw new SubagentError('E_ARG_INVALID', `not a JSON object: ${(err as Error).message}`, { hint: 'one JSON object per line' });
  }
  if (typeof line !== 'object' || line === null || Array.isArray(line))
    throw new SubagentError('E_ARG_INVALID', 'not a JSON object', { hint: 'one JSON object per line' });
  return knownFields(line, fields);
}

/** An object of fields (a batch line, an MCP tool's arguments) whose every field is one of `fields`; else E_ARG_UNKNOWN. */
export function knownFields(line: Record<string, unknown>, fields: readonly string[]): Record<string, unknown> {
  const unknown = Object.keys(line).filter((k) => !fields.includes(k));
  if (unknown.length)
    throw new SubagentError('E_ARG_UNKNOWN', `unknown field${unknown.length > 1 ? 's' : ''} ${unknown.map((u) => `"${u}"`).join(', ')}`, {
      fields: unknown,
      hint: `fields: ${fields.join(', ')}`,
    });
  return line;
}

/** A text field: a string, or absent (null too). */
export function textField(line: Record<string, unknown>, field: string): string | undefined {
  const v = line[field];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') throw new SubagentError('E_ARG_INVALID', `"${field}" must be a string`, { field, hint: `write "${field}": "…"` });
  return v;
}

/** The order a line's fields are read in (stable within a kind: the order of START_OPTIONS). */
const ORDER: Record<StartOption['kind'], number> = { list: 0, names: 0, files: 1, text: 2, switch: 3, stall: 4, cap: 5, limit: 5, floor: 5, count: 5 };

/**
 * What a line asks for, as start takes it: each field read as its option's kind says, the prompt read
 * (relative to `cwd`, never stdin), and what the line leaves out taken from `defaults` (the flags given
 * beside `--batch`) where its option is a default for every line.
 */
export function lineOptions(
  line: Record<string, unknown>,
  cwd: string,
  defaults: OptionValues,
): Omit<OptionValues, 'prompt' | 'promptFile'> & { prompt: Buffer } {
  const given: OptionValues = {};
  const read = (o: StartOption) => ((given as Record<string, unknown>)[o.key] = fieldValue(o, line));
  const fielded = START_OPTIONS.filter((o) => o.fields.length > 0 && o.key !== 'name').sort((a, b) => ORDER[a.kind] - ORDER[b.kind]);
  // What shapes the run is read first, then the prompt: a line without one fails on that before its settings are read.
  const early = (o: StartOption) => o.kind === 'list' || o.kind === 'files' || o.key === 'prompt' || o.key === 'promptFile';
  for (const o of fielded.filter(early)) read(o);
  const prompt = readPrompt(given.prompt, given.promptFile, cwd, { stdinAllowed: false });
  for (const o of fielded.filter((o) => !early(o))) read(o);
  const out: Record<string, unknown> = { ...given };
  for (const o of START_OPTIONS) {
    if (o.batchDefault && out[o.key] === undefined) out[o.key] = defaults[o.key];
  }
  // A line that turns stalls off has nothing for the default action to act on.
  if (given.stallAction === undefined && given.stallAfterSec === 0) out.stallAction = undefined;
  delete out.promptFile;
  return { ...(out as OptionValues), prompt };
}

/** A field's value, read as its option's kind says; undefined when the line leaves it out. */
function fieldValue(o: StartOption, line: Record<string, unknown>): OptionValues[OptionKey] {
  const field = o.fields[0]!;
  const v = line[field];
  switch (o.kind) {
    case 'switch':
      if (v !== undefined && typeof v !== 'boolean')
        throw new SubagentError('E_ARG_INVALID', `"${field}" must be true or false`, { field, hint: `"${field}": true` });
      return v as boolean | undefined;
    case 'list':
      if (v !== undefined && (!Array.isArray(v) || v.some((a) => typeof a !== 'string')))
        throw new SubagentError('E_ARG_INVALID', `"${field}" must be an array of strings`, { field, hint: `"${field}": ${o.example}` });
      return v as string[] | undefined;
    case 'names':
      if (v === undefined || v === null) return undefined;
      if (typeof v === 'string') return [v];
      if (!Array.isArray(v) || v.some((a) => typeof a !== 'string'))
        throw new SubagentError('E_ARG_INVALID', `"${field}" must be a string or an array of strings`, { field, hint: `"${field}": ${o.example}` });
      return v as string[];
    case 'files':
      return filesOf(o, line);
    case 'stall':
      return stallAfterOf(v, field);
    case 'cap':
      if (v === undefined || v === null) return v as undefined | null;
      if (typeof v === 'number' || typeof v === 'string') return parseCap(o.key as CapKey, String(v));
      throw new SubagentError('E_ARG_INVALID', `"${field}" must be a number`, { field, hint: `"${field}": 10` });
    case 'count':
      if (v === undefined) return undefined;
      if (typeof v === 'number' || typeof v === 'string') return parseRetries(String(v), `"${field}"`);
      throw new SubagentError('E_ARG_INVALID', `"${field}" must be a number`, { field, hint: `"${field}": 3` });
    default:
      return textField(line, field);
  }
}

/** `file` (one) and `files` (one or many), together. */
function filesOf(o: StartOption, line: Record<string, unknown>): string[] {
  const [one, many] = o.fields as [string, string];
  const files = [...(line[one] === undefined ? [] : [line[one]]), ...(Array.isArray(line[many]) ? line[many] : line[many] === undefined ? [] : [line[many]])];
  if (files.some((f) => typeof f !== 'string'))
    throw new SubagentError('E_ARG_INVALID', `"${one}"/"${many}" must be strings`, { field: many, hint: `"${many}": ${o.example}` });
  return files as string[];
}

/** A line's "stallAfter": seconds as a number, or a string as --stall-after takes it ("off", "90"). */
function stallAfterOf(v: unknown, field: string): number | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v === 'number') return v;
  if (typeof v === 'string') return parseStallSec(v, `"${field}"`);
  throw badStallSec(JSON.stringify(v), `"${field}"`);
}
