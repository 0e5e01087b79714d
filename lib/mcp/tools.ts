import { SubagentError } from '../base/errors.js';
import { batch } from '../commands/batch.js';
import { knownFields, lineOptions } from '../commands/batch-line.js';
import { cancel } from '../commands/cancel.js';
import type { Context } from '../commands/context.js';
import { history } from '../commands/history.js';
import { START_OPTIONS, type StartOption } from '../commands/options.js';
import { result } from '../commands/result.js';
import { resume } from '../commands/resume.js';
import { cancelQueued, queueResume } from '../commands/follow-ups.js';
import { search } from '../commands/search.js';
import { parseLimit, parseMemoryFloor } from '../commands/settings.js';
import { start } from '../commands/start.js';
import { status } from '../commands/status.js';

/**
 * The verbs as MCP tools (docs/mcp.md): each tool's input schema and its call into the library, in the
 * server's process. The start and resume tools take the fields of a `--batch` line — the options table of
 * lib/commands/options.ts is their one declaration, as it is the flags' — and each tool answers with the
 * object the verb prints as its JSON line.
 */

type Args = Record<string, unknown>;
type JsonSchema = Record<string, unknown>;

export interface Tool {
  name: string;
  title: string;
  description: string;
  inputSchema: JsonSchema;
  /** The call: the arguments, the server's context, and a signal aborted when the client cancels the call. */
  call(args: Args, ctx: Context, signal: AbortSignal): Promise<unknown>;
}

/** The longest wait a status call may ask for: below the tool timeouts of the hosts (Codex: 60 s). */
export const MAX_WAIT_SEC = 50;
const DEFAULT_WAIT_SEC = 30;

/** The admission settings of the registry, which a start or resume may set (flags without a batch field). */
const ADMISSION = {
  maxConcurrent: { type: 'integer', minimum: 0, description: "sets the registry's concurrency limit (0 removes it)" },
  minFreeMemory: { type: ['string', 'integer'], description: 'sets the registry\'s free-memory floor, e.g. "4G" (0 removes it)' },
};

function fieldSchema(o: StartOption, field: string): JsonSchema {
  const description = o.doc.replace(/`/g, '');
  switch (o.kind) {
    case 'switch':
      return { type: 'boolean', description };
    case 'list':
      return { type: 'array', items: { type: 'string' }, description };
    case 'names':
      return { type: ['string', 'array'], items: { type: 'string' }, description };
    case 'files':
      return field === 'file' ? { type: 'string', description } : { type: ['string', 'array'], items: { type: 'string' }, description };
    case 'stall':
      return { type: ['number', 'string'], description };
    case 'cap':
      return { type: ['number', 'string', 'null'], description };
    default:
      return { type: 'string', description };
  }
}

/** The fields of `options`, as an object schema's properties. */
function fieldsOf(options: readonly StartOption[]): Record<string, JsonSchema> {
  return Object.fromEntries(options.flatMap((o) => o.fields.map((f) => [f, fieldSchema(o, f)])));
}

/** The options a resume takes as fields: those resume-subagent has a flag for, and `args` (its `-- ARGS`). */
const RESUME_OPTIONS = START_OPTIONS.filter((o) => o.fields.length > 0 && (o.resumeHelp !== null || o.key === 'extraArgs'));
const START_FIELDS = fieldsOf(START_OPTIONS);
const RESUME_FIELDS = fieldsOf(RESUME_OPTIONS);

/** A start's or resume's arguments read as a batch line is read (the same errors), and the admission settings. */
function runOptions(args: Args, fields: readonly string[], ctx: Context) {
  const { maxConcurrent, minFreeMemory, ...line } = knownFields(args, [...fields, 'maxConcurrent', 'minFreeMemory']);
  const given = lineOptions(line, ctx.cwd ?? process.cwd(), {});
  return { ...given, ...admissionOf({ maxConcurrent, minFreeMemory }), name: text(args, 'name') };
}

/** The registry's admission settings a call sets: its concurrency limit, its free-memory floor. */
function admissionOf(a: { maxConcurrent: unknown; minFreeMemory: unknown }): { maxConcurrent?: number; minFreeMemory?: number } {
  return {
    ...(a.maxConcurrent !== undefined ? { maxConcurrent: parseLimit(String(a.maxConcurrent), '"maxConcurrent"') } : {}),
    ...(a.minFreeMemory !== undefined ? { minFreeMemory: parseMemoryFloor(String(a.minFreeMemory), '"minFreeMemory"') } : {}),
  };
}

function text(args: Args, key: string): string | undefined {
  const v = args[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') throw badArg(key, 'a string');
  return v;
}

function strings(args: Args, key: string): string[] | undefined {
  const v = args[key];
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v) || v.some((n) => typeof n !== 'string')) throw badArg(key, 'an array of strings');
  return v as string[];
}

function flag(args: Args, key: string): boolean | undefined {
  const v = args[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'boolean') throw badArg(key, 'true or false');
  return v;
}

function wholeNumber(args: Args, key: string, min: number): number | undefined {
  const v = args[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min) throw badArg(key, `a whole number of at least ${min}`);
  return v;
}

function badArg(key: string, what: string): SubagentError {
  return new SubagentError('E_ARG_INVALID', `"${key}" must be ${what}`, {
    field: key,
    hint: "the tool's input schema (tools/list) says what each argument takes",
  });
}

/** A status call's wait bound: the one asked for, at most MAX_WAIT_SEC; DEFAULT_WAIT_SEC when none was. */
function waitSec(args: Args): number {
  const v = args.timeoutSec;
  if (v === undefined || v === null) return DEFAULT_WAIT_SEC;
  if (typeof v !== 'number' || !(v > 0)) throw badArg('timeoutSec', `a number of seconds above 0 (at most ${MAX_WAIT_SEC})`);
  return Math.min(v, MAX_WAIT_SEC);
}

const NAME = { type: 'string', description: 'the run\'s name: segments of [A-Za-z0-9._-] joined by "/"' };
const object = (properties: Record<string, JsonSchema>, required: string[] = []): JsonSchema => ({
  type: 'object',
  properties,
  ...(required.length ? { required } : {}),
  additionalProperties: false,
});

export const TOOLS: Tool[] = [
  {
    name: 'start',
    title: 'Start a subagent',
    description:
      'Start a named agent run (a coding-agent CLI, or a shell script with cli "shell") in the background and return at once. ' +
      'The arguments are the fields of a start-subagent --batch line (docs/contract.md). Returns the start line: name, run, pid, status "scheduled". ' +
      'Then call status with waitTerminal to wait for it, and result for its answer.',
    inputSchema: object({ ...START_FIELDS, ...ADMISSION }, ['name']),
    call: async (args, ctx) => {
      const { prompt, ...o } = runOptions(args, Object.keys(START_FIELDS), ctx);
      return start({ ...o, prompt, ...ctx });
    },
  },
  {
    name: 'batch',
    title: 'Start many subagents',
    description:
      'Start one run per item of "lines", each an object with the fields of the start tool, as start-subagent --batch does: a bad line does not stop the others. ' +
      'Returns {started:[…], failed:[…]}; a batch with failed lines is a tool error E_BATCH_INCOMPLETE that still lists what started.',
    inputSchema: object(
      { lines: { type: 'array', items: { type: 'object' }, minItems: 1, description: 'one object per run, with the fields of the start tool' }, ...ADMISSION },
      ['lines'],
    ),
    call: async (args, ctx) => {
      const { lines, maxConcurrent, minFreeMemory } = knownFields(args, ['lines', 'maxConcurrent', 'minFreeMemory']);
      if (!Array.isArray(lines) || lines.length === 0) throw badArg('lines', 'a non-empty array of objects');
      const out = await batch({
        batch: '-',
        lines: lines.map((l) => JSON.stringify(l)).join('\n'),
        defaults: admissionOf({ maxConcurrent, minFreeMemory }),
        ...ctx,
      });
      if (!out.ok) throw new SubagentError(out.code, out.error, { ...out.details, started: out.started as never, failed: out.failed as never });
      return out;
    },
  },
  {
    name: 'resume',
    title: 'Resume a subagent',
    description:
      "Send a new prompt to a finished run's session: starts its next run in the background and returns at once. Options not given are the run's own (model, caps, stall and hook settings).",
    inputSchema: object(
      {
        ...RESUME_FIELDS,
        ...ADMISSION,
        queue: {
          type: 'boolean',
          description:
            "a follow-up: while the run is busy, queue the prompt for the name's next run (answered with its position) instead of refusing; takes only name, the prompt and afterAny",
        },
      },
      ['name'],
    ),
    call: async (args, ctx) => {
      const { queue, ...rest } = args;
      if (queue !== undefined && typeof queue !== 'boolean') throw badArg('queue', 'true or false');
      if (queue === true) {
        const { prompt, afterAny, name } = runOptions(
          knownFields(rest, ['name', 'prompt', 'promptFile', 'afterAny']),
          ['name', 'prompt', 'promptFile', 'afterAny'],
          ctx,
        );
        return queueResume({ name, prompt: prompt ?? '', afterAny, ...ctx });
      }
      const { prompt, ...o } = runOptions(rest, Object.keys(RESUME_FIELDS), ctx);
      return resume({ ...o, name: o.name, prompt: prompt ?? '', ...ctx });
    },
  },
  {
    name: 'status',
    title: 'Subagent status',
    description:
      `The latest run of each name: status (scheduled, running, done, unknown), outcome, reason, answer size, usage. With waitTerminal (or wait) it waits — at most timeoutSec, ${MAX_WAIT_SEC} s at the most, ` +
      `${DEFAULT_WAIT_SEC} s by default — until every selected run is done (or one changed); a wait that times out is the tool error E_WAIT_TIMEOUT with the listing: call again to wait longer.`,
    inputSchema: object({
      names: { type: 'array', items: NAME, description: 'only these names' },
      prefix: { type: 'string', description: 'every name under prefix/' },
      all: { type: 'boolean', description: 'every name (the default)' },
      wait: { type: 'boolean', description: 'answer at the first change of a selected run' },
      waitTerminal: { type: 'boolean', description: 'answer when every selected run is done or unknown' },
      timeoutSec: {
        type: 'number',
        exclusiveMinimum: 0,
        maximum: MAX_WAIT_SEC,
        description: `how long to wait (default ${DEFAULT_WAIT_SEC}, at most ${MAX_WAIT_SEC})`,
      },
      requireSuccess: { type: 'boolean', description: 'a tool error E_RUN_FAILED when a selected run did not succeed' },
      brief: {
        type: 'boolean',
        description:
          'each run with only the fields an orchestrator acts on (name, status, outcome, reason, run, exitCode, finishedAt, stalled, resetsAt): about a sixth of the bytes',
      },
      fields: { type: 'array', items: { type: 'string' }, description: 'each run with only these fields, in this order' },
    }),
    call: async (args, ctx, signal) => {
      knownFields(args, ['names', 'prefix', 'all', 'wait', 'waitTerminal', 'timeoutSec', 'requireSuccess', 'brief', 'fields']);
      const names = strings(args, 'names');
      const fields = strings(args, 'fields');
      const waiting = flag(args, 'wait') || flag(args, 'waitTerminal');
      return status({
        names,
        prefix: text(args, 'prefix'),
        all: flag(args, 'all'),
        wait: flag(args, 'wait'),
        waitTerminal: flag(args, 'waitTerminal'),
        timeoutSec: waiting ? waitSec(args) : undefined,
        requireSuccess: flag(args, 'requireSuccess'),
        brief: flag(args, 'brief'),
        fields,
        signal,
        ...ctx,
      });
    },
  },
  {
    name: 'result',
    title: 'Subagent answer',
    description:
      "A run's answer (its last assistant text), status, outcome, reason and usage; run picks an earlier run, since gives every run after that one, child a sub-agent's answer.",
    inputSchema: object(
      {
        name: NAME,
        run: { type: 'integer', minimum: 1, description: 'that run of the name (default the latest)' },
        since: { type: 'integer', minimum: 0, description: 'every run after this one (0: all)' },
        child: { type: 'string', description: "a child's id (status lists a run's children)" },
      },
      ['name'],
    ),
    call: async (args, ctx) => {
      knownFields(args, ['name', 'run', 'since', 'child']);
      return result({ name: text(args, 'name'), run: wholeNumber(args, 'run', 1), since: wholeNumber(args, 'since', 0), child: text(args, 'child'), ...ctx });
    },
  },
  {
    name: 'search',
    title: 'Search a transcript',
    description: "Search a run's transcript (every run of the name) for a regular expression; each match with its run, message index, role and a snippet.",
    inputSchema: object(
      {
        name: NAME,
        pattern: { type: 'string', description: 'a JavaScript regular expression' },
        role: { type: 'string', description: 'only messages of this role: user, assistant, tool' },
        child: { type: 'string', description: "search a child's transcript instead" },
      },
      ['name', 'pattern'],
    ),
    call: async (args, ctx) => {
      knownFields(args, ['name', 'pattern', 'role', 'child']);
      return search({ name: text(args, 'name'), pattern: text(args, 'pattern'), role: text(args, 'role'), child: text(args, 'child'), ...ctx });
    },
  },
  {
    name: 'cancel',
    title: 'Cancel a subagent',
    description:
      "Stop a run and every process it started (its agent's graceful signal, then TERM and KILL); the run ends cancelled. recursive also cancels the runs it started.",
    inputSchema: object(
      {
        name: NAME,
        signal: { type: 'string', description: "the first signal: TERM, INT or KILL (default the CLI's graceful one)" },
        recursive: { type: 'boolean', description: 'also cancel the runs this one started' },
        queued: { type: 'boolean', description: "drop the name's queued follow-ups instead (all, or the one at position); no run is touched" },
        position: { type: 'integer', minimum: 1, description: 'with queued: the queued prompt at this position (1: the next)' },
      },
      ['name'],
    ),
    call: async (args, ctx) => {
      knownFields(args, ['name', 'signal', 'recursive', 'queued', 'position']);
      if (flag(args, 'queued')) {
        const position = wholeNumber(args, 'position', 1);
        return cancelQueued({ name: text(args, 'name'), positions: position === undefined ? undefined : [position], ...ctx });
      }
      return cancel({ name: text(args, 'name'), signal: text(args, 'signal'), recursive: flag(args, 'recursive'), ...ctx });
    },
  },
  {
    name: 'history',
    title: 'Runs of a name',
    description: 'Every run of one name, oldest first: its status, outcome, reason, prompt head, usage (status --runs).',
    inputSchema: object({ name: NAME }, ['name']),
    call: async (args, ctx) => {
      knownFields(args, ['name']);
      return history({ name: text(args, 'name'), ...ctx });
    },
  },
];
