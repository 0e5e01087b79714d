import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { SubagentError } from '../base/errors.js';
import { callerOf, inRegistryOf, placeOf, type Context } from './context.js';
import { start, type StartOptions, type StartResult } from './start.js';
import { lineOptions, parseLine, textField } from './batch-line.js';
import { afterNames } from './after.js';

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
  | 'afterAny'
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

export function readBatch(source: string, cwd: string): string {
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
export function failedLine(line: number, name: string | undefined, err: unknown): BatchFailed {
  const e = err instanceof SubagentError ? err : new SubagentError('E_INTERNAL', `internal error: ${(err as Error).message}`);
  const hint = e.code === 'E_PROMPT_REQUIRED' ? 'give the line a non-empty "prompt" or "promptFile" field' : (e.details.hint ?? null);
  return { line, name: name ?? null, code: e.code, error: e.message, hint };
}

/** A batch line as read: its number, its fields and name, the names it follows (`after`), or why it cannot start. */
interface BatchLine {
  number: number;
  fields: Record<string, unknown>;
  name: string | undefined;
  after: string[];
  error: unknown;
}

function readLine(number: number, raw: string): BatchLine {
  const l: BatchLine = { number, fields: {}, name: undefined, after: [], error: null };
  try {
    l.fields = parseLine(raw);
    l.name = textField(l.fields, 'name');
    const after = l.fields.after;
    // Only to order the lines: a bad "after" is refused when the line is started.
    if (typeof after === 'string' || (Array.isArray(after) && after.every((a) => typeof a === 'string'))) l.after = afterNames([after].flat());
  } catch (err) {
    l.error = l.error ?? err;
  }
  return l;
}

/**
 * The order lines start in: each after the lines whose names it follows (a DAG in one file), otherwise
 * in file order; lines that wait on each other in a cycle do not start.
 */
function startOrder(lines: BatchLine[]): { order: BatchLine[]; cycle: BatchLine[] } {
  const byName = new Map<string, BatchLine>();
  for (const l of lines) if (l.name !== undefined && !byName.has(l.name)) byName.set(l.name, l);
  const deps = (l: BatchLine) => l.after.map((n) => byName.get(n)).filter((d): d is BatchLine => d !== undefined && d !== l);
  const order: BatchLine[] = [];
  const placed = new Set<BatchLine>();
  for (let progress = true; progress; ) {
    progress = false;
    for (const l of lines) {
      if (placed.has(l) || !deps(l).every((d) => placed.has(d))) continue;
      order.push(l);
      placed.add(l);
      progress = true;
      break;
    }
  }
  const left = lines.filter((l) => !placed.has(l));
  const reaches = (from: BatchLine, to: BatchLine, seen = new Set<BatchLine>()): boolean =>
    deps(from).some((d) => d === to || (!seen.has(d) && seen.add(d) && reaches(d, to, seen)));
  const cycle = left.filter((l) => reaches(l, l));
  // What waits on a cycle without being in it is started last, and refused as its dependency is not there.
  return { order: [...order, ...left.filter((l) => !cycle.includes(l))], cycle };
}

/** The refusal of a line that waits, through other lines, for itself. */
function cycleOf(l: BatchLine, cycle: BatchLine[]): SubagentError {
  const names = cycle.map((c) => c.name ?? `line ${c.number}`);
  return new SubagentError('E_ARG_INVALID', `"after" makes a cycle among the lines ${cycle.map((c) => c.number).join(', ')} (${names.join(', ')})`, {
    name: l.name ?? null,
    after: l.after,
    cycle: names,
    hint: 'a run cannot wait, directly or through others, for itself: drop the name that closes the cycle',
  });
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
  const lines: BatchLine[] = [];
  text.split('\n').forEach((raw, i) => {
    if (raw.trim() !== '' && !raw.trim().startsWith('//')) lines.push(readLine(i + 1, raw.trim()));
  });
  const { order, cycle } = startOrder(lines);
  for (const l of cycle) failed.push(failedLine(l.number, l.name, cycleOf(l, cycle)));
  for (const l of order) {
    try {
      if (l.error !== null) throw l.error;
      const out = await start({
        ...lineOptions(l.fields, cwd, o.defaults ?? {}),
        name: l.name,
        // Located again as the batch located it (not as an explicit --registry: that would adopt a
        // registry that was found by walking up, docs/security.md).
        registry: o.registry,
        cwd,
        ...(o.env ? { env: o.env } : {}),
      });
      started.push(startedLine(l.number, out));
    } catch (err) {
      failed.push(failedLine(l.number, l.name, err));
    }
  }
  started.sort((a, b) => a.line - b.line);
  failed.sort((a, b) => a.line - b.line);
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
