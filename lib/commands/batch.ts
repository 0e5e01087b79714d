import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { SubagentError } from '../base/errors.js';
import { callerOf, inRegistryOf, placeOf, type Context } from './context.js';
import { start, type StartOptions, type StartResult } from './start.js';
import { lineOptions, parseLine, textField } from './batch-line.js';

export interface BatchOptions extends Context {
  /** A path, or "-" for stdin (ignored when `lines` is given). */
  batch: string;
  /** The batch's text itself, one JSON object a line, instead of reading `batch`. */
  lines?: string | undefined;
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
  | 'minFreeMemory'
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
  | 'maxMemoryBytes'
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

/** A started line, as the output lists it. */
function startedLine(line: number, out: StartResult): BatchStarted {
  const { name, pid, executor, jobId, status, sessionId, cli, run, startedAt } = out;
  return { line, name, pid, executor, jobId, status, sessionId, cli, run, startedAt };
}

/** A line that did not start: the error start (or the line) gave. */
function failedLine(line: number, name: string | undefined, err: unknown): BatchFailed {
  const e = err instanceof SubagentError ? err : new SubagentError('E_INTERNAL', `internal error: ${(err as Error).message}`);
  const hint = e.code === 'E_PROMPT_REQUIRED' ? 'give the line a non-empty "prompt" or "promptFile" field' : (e.details.hint ?? null);
  return { line, name: name ?? null, code: e.code, error: e.message, hint };
}

/**
 * start-subagent --batch: one JSON object per line, each started as if given as flags. One bad line
 * does not stop the others; the single output line says which started and which failed.
 */
export async function batch(o: BatchOptions): Promise<BatchResult> {
  const { cwd } = callerOf(o);
  const text = o.lines ?? readBatch(o.batch, cwd);
  const { registry } = placeOf(o, 'create');
  return inRegistryOf(registry, () => startLines(text, registry, o));
}

async function startLines(text: string, registry: string, o: BatchOptions): Promise<BatchResult> {
  const { cwd } = callerOf(o);
  const started: BatchStarted[] = [];
  const failed: BatchFailed[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i]!.trim();
    if (raw === '' || raw.startsWith('//')) continue;
    let name: string | undefined;
    try {
      const line = parseLine(raw);
      name = textField(line, 'name');
      const out = await start({
        ...lineOptions(line, cwd, o.defaults ?? {}),
        name,
        // Located again as the batch located it (not as an explicit --registry: that would adopt a
        // registry that was found by walking up, docs/security.md).
        registry: o.registry,
        cwd,
        ...(o.env ? { env: o.env } : {}),
      });
      started.push(startedLine(i + 1, out));
    } catch (err) {
      failed.push(failedLine(i + 1, name, err));
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
