import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { SubagentError } from '../base/errors.js';
import { callerOf, inRegistryOf, placeOf, type Context } from './context.js';
import { readPrompt } from './prompt.js';
import { start, type StartOptions } from './start.js';
import { parseCap, type CapKey } from './caps.js';
import { badStallSec, parseStallSec } from './settings.js';

/** Fields a batch line may hold: the flags of start-subagent, in camelCase. */
const FIELDS = [
  'name',
  'prompt',
  'promptFile',
  'cli',
  'cwd',
  'model',
  'variant',
  'agent',
  'file',
  'files',
  'args',
  'worktree',
  'base',
  'executor',
  'slurmArgs',
  'stallAfter',
  'stallAction',
  'onEnd',
  'keepChildren',
  'maxCost',
  'maxTokens',
  'maxTurns',
  'maxTime',
] as const;

/** The spend caps of a line: its field, and the option it sets. */
const CAP_FIELDS: Array<[field: string, key: CapKey]> = [
  ['maxCost', 'maxCostUsd'],
  ['maxTokens', 'maxTokens'],
  ['maxTurns', 'maxTurns'],
  ['maxTime', 'maxTimeSec'],
];

export interface BatchOptions extends Context {
  /** A path, or "-" for stdin. */
  batch: string;
  /** Defaults for every line (flags given next to --batch). */
  defaults?: BatchDefaults | undefined;
}

/** What a batch line does not set it takes from here: the options of `start` that are not per run. */
export type BatchDefaults = Pick<
  StartOptions,
  | 'cli'
  | 'cwdDir'
  | 'model'
  | 'variant'
  | 'agent'
  | 'maxConcurrent'
  | 'worktree'
  | 'base'
  | 'executor'
  | 'executorArgs'
  | 'stallAfterSec'
  | 'stallAction'
  | 'onEnd'
  | 'keepChildren'
  | 'maxCostUsd'
  | 'maxTokens'
  | 'maxTurns'
  | 'maxTimeSec'
>;

/** A started line: where it was, and the run as start published it. */
export interface BatchStarted {
  line: number;
  name: string;
  pid: number | null;
  executor: string;
  jobId: string | null;
  status: string;
  sessionId: string | null;
  cli: string;
  run: number;
  startedAt: string;
}

/** A line that did not start: its number, its name if it had a good one, and the error start gave. */
export interface BatchFailed {
  line: number;
  name: string | null;
  code: string;
  error: string;
  hint: string | null;
}

/**
 * What batch resolves to (docs/schemas/batch.schema.json): every line started, or — still resolved, as
 * the other runs were started — the E_BATCH_INCOMPLETE object that lists the lines that were not.
 */
export type BatchResult =
  | { ok: true; registry: string; started: BatchStarted[]; failed: [] }
  | {
      ok: false;
      code: 'E_BATCH_INCOMPLETE';
      error: string;
      registry: string;
      started: BatchStarted[];
      failed: BatchFailed[];
      details: { registry: string; hint: string };
    };

function readBatch(source: string, cwd: string): string {
  try {
    return source === '-' ? readFileSync(0, 'utf8') : readFileSync(resolve(cwd, source), 'utf8');
  } catch (err) {
    throw new SubagentError(
      'E_ARG_INVALID',
      `cannot read the batch ${source === '-' ? 'from stdin' : resolve(cwd, source)}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
      {
        hint: 'give a file of JSON lines, or "-" and the lines on stdin',
      },
    );
  }
}

const optionalString = (line: Record<string, unknown>, key: string): string | undefined => {
  const v = line[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') throw new SubagentError('E_ARG_INVALID', `"${key}" must be a string`, { field: key, hint: `write "${key}": "…"` });
  return v;
};

/** A line's caps: a number (or the flag's text, `"none"` too) or null (no cap); a field left out takes the default. */
function lineCaps(line: Record<string, unknown>, defaults: BatchDefaults): Pick<StartOptions, CapKey> {
  const out: Pick<StartOptions, CapKey> = {};
  for (const [field, key] of CAP_FIELDS) {
    const v = line[field];
    if (v === undefined) out[key] = defaults[key];
    else if (v === null) out[key] = null;
    else if (typeof v === 'number' || typeof v === 'string') out[key] = parseCap(key, String(v));
    else throw new SubagentError('E_ARG_INVALID', `"${field}" must be a number`, { field, hint: `"${field}": 10` });
  }
  return out;
}

/** A line's "stallAfter": seconds as a number, or a string as --stall-after takes it ("off", "90"). */
function stallAfterOf(line: Record<string, unknown>): number | undefined {
  const v = line.stallAfter;
  if (v === undefined || v === null) return undefined;
  if (typeof v === 'number') return v;
  if (typeof v === 'string') return parseStallSec(v, '"stallAfter"');
  throw badStallSec(JSON.stringify(v), '"stallAfter"');
}

/**
 * start-subagent --batch: one JSON object per line, each started as if given as flags. One bad line
 * does not stop the others; the single output line says which started and which failed.
 */
export async function batch(o: BatchOptions): Promise<BatchResult> {
  const { cwd } = callerOf(o);
  const text = readBatch(o.batch, cwd);
  const { registry } = placeOf(o, 'create');
  return inRegistryOf(registry, () => startLines(text, registry, o));
}

async function startLines(text: string, registry: string, o: BatchOptions): Promise<BatchResult> {
  const { cwd } = callerOf(o);
  const defaults = o.defaults ?? {};
  const started: BatchStarted[] = [];
  const failed: BatchFailed[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i]!.trim();
    if (raw === '' || raw.startsWith('//')) continue;
    let name: string | undefined;
    try {
      let line: Record<string, unknown>;
      try {
        line = JSON.parse(raw) as Record<string, unknown>;
      } catch (err) {
        throw new SubagentError('E_ARG_INVALID', `not a JSON object: ${(err as Error).message}`, { hint: 'one JSON object per line' });
      }
      if (typeof line !== 'object' || line === null || Array.isArray(line))
        throw new SubagentError('E_ARG_INVALID', 'not a JSON object', { hint: 'one JSON object per line' });
      const unknown = Object.keys(line).filter((k) => !(FIELDS as readonly string[]).includes(k));
      if (unknown.length)
        throw new SubagentError('E_ARG_UNKNOWN', `unknown field${unknown.length > 1 ? 's' : ''} ${unknown.map((u) => `"${u}"`).join(', ')}`, {
          fields: unknown,
          hint: `fields: ${FIELDS.join(', ')}`,
        });
      name = optionalString(line, 'name');
      const files = [
        ...(line.file === undefined ? [] : [line.file]),
        ...(Array.isArray(line.files) ? line.files : line.files === undefined ? [] : [line.files]),
      ];
      const args = line.args === undefined ? [] : line.args;
      if (!Array.isArray(args) || args.some((a) => typeof a !== 'string'))
        throw new SubagentError('E_ARG_INVALID', '"args" must be an array of strings', { field: 'args', hint: '"args": ["--permission-mode", "acceptEdits"]' });
      const slurmArgs = line.slurmArgs;
      if (slurmArgs !== undefined && (!Array.isArray(slurmArgs) || slurmArgs.some((a) => typeof a !== 'string')))
        throw new SubagentError('E_ARG_INVALID', '"slurmArgs" must be an array of strings', {
          field: 'slurmArgs',
          hint: '"slurmArgs": ["--partition=gpu", "--time=30"]',
        });
      if (files.some((f) => typeof f !== 'string'))
        throw new SubagentError('E_ARG_INVALID', '"file"/"files" must be strings', { field: 'files', hint: '"files": ["a.ts", "b.ts"]' });
      const promptText = optionalString(line, 'prompt');
      const prompt = readPrompt(promptText === '-' ? `-` : promptText, optionalString(line, 'promptFile'), cwd, { stdinAllowed: false });
      if (line.worktree !== undefined && typeof line.worktree !== 'boolean')
        throw new SubagentError('E_ARG_INVALID', '"worktree" must be true or false', { field: 'worktree', hint: '"worktree": true' });
      if (line.keepChildren !== undefined && typeof line.keepChildren !== 'boolean')
        throw new SubagentError('E_ARG_INVALID', '"keepChildren" must be true or false', { field: 'keepChildren', hint: '"keepChildren": true' });
      const stallAfter = stallAfterOf(line);
      const out = await start({
        name,
        prompt,
        cli: optionalString(line, 'cli') ?? defaults.cli,
        cwdDir: optionalString(line, 'cwd') ?? defaults.cwdDir,
        model: optionalString(line, 'model') ?? defaults.model,
        variant: optionalString(line, 'variant') ?? defaults.variant,
        agent: optionalString(line, 'agent') ?? defaults.agent,
        files: files as string[],
        extraArgs: args as string[],
        maxConcurrent: defaults.maxConcurrent,
        worktree: (line.worktree as boolean | undefined) ?? defaults.worktree ?? false,
        base: optionalString(line, 'base') ?? defaults.base,
        executor: optionalString(line, 'executor') ?? defaults.executor,
        executorArgs: (slurmArgs as string[] | undefined) ?? defaults.executorArgs,
        stallAfterSec: stallAfter ?? defaults.stallAfterSec,
        // A line that turns stalls off has nothing for the default action to act on.
        stallAction: (optionalString(line, 'stallAction') as StartOptions['stallAction']) ?? (stallAfter === 0 ? undefined : defaults.stallAction),
        onEnd: optionalString(line, 'onEnd') ?? defaults.onEnd,
        keepChildren: (line.keepChildren as boolean | undefined) ?? defaults.keepChildren,
        ...lineCaps(line, defaults),
        // Located again as the batch located it (not as an explicit --registry: that would adopt a
        // registry that was found by walking up, docs/security.md).
        registry: o.registry,
        cwd,
        ...(o.env ? { env: o.env } : {}),
      });
      started.push({
        line: i + 1,
        name: out.name,
        pid: out.pid,
        executor: out.executor,
        jobId: out.jobId,
        status: out.status,
        sessionId: out.sessionId,
        cli: out.cli,
        run: out.run,
        startedAt: out.startedAt,
      });
    } catch (err) {
      const e = err instanceof SubagentError ? err : new SubagentError('E_INTERNAL', `internal error: ${(err as Error).message}`);
      const hint = e.code === 'E_PROMPT_REQUIRED' ? 'give the line a non-empty "prompt" or "promptFile" field' : (e.details.hint ?? null);
      failed.push({ line: i + 1, name: name ?? null, code: e.code, error: e.message, hint });
    }
  }
  if (failed.length === 0) return { ok: true, registry, started, failed: [] };
  return {
    ok: false,
    code: 'E_BATCH_INCOMPLETE',
    error: `${failed.length} of ${started.length + failed.length} batch line${started.length + failed.length === 1 ? '' : 's'} did not start`,
    registry,
    started,
    failed,
    details: { registry, hint: 'each entry of "failed" names its line, code and error; the others were started' },
  };
}
