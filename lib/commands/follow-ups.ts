import { SubagentError } from '../base/errors.js';
import { validateName } from '../registry/names.js';
import { addFollowUp, dropFollowUps, listFollowUps, readSettledEnd, withFollowUps, type FollowUp } from '../registry/follow-ups.js';
import { isTerminal, observeLatest, requireLatest, type Observation } from '../runs/observe.js';
import { publishFollowUp, type Ended } from '../supervisor/follow-up.js';
import { inRegistryOf, placeOf, type Context } from './context.js';
import { promptBytes } from './prompt.js';
import { resume, type ResumeOptions, type ResumeResult } from './resume.js';
import { callerOf } from './context.js';
import { failedLine, readBatch, type BatchFailed } from './batch.js';
import { parseLine, textField } from './batch-line.js';
import { readPrompt } from './prompt.js';

/**
 * Follow-ups (docs/contract.md, "Follow-ups"): `resume-subagent --queue` queues a prompt for a busy name
 * instead of refusing it, `subagent-cancel --queued` drops queued ones. Each verb here is also a verb that
 * notices a run's end: it publishes the next prompt that is due when the run's supervisor could not
 * (it died), once however many verbs notice at the same time (lib/supervisor/follow-up.ts).
 */

/** What `resume-subagent --queue` resolves to when the prompt was queued (docs/schemas/start.schema.json). */
export interface QueuedResult {
  ok: true;
  registry: string;
  name: string;
  mode: 'queued';
  /** Its place in the name's queue (1: next). */
  position: number;
  queuedAt: string;
  /** The name's latest run when it was queued: the prompt is run after it (and after those ahead of it). */
  after: number;
}

/** A follow-up takes only its prompt and `afterAny`: it runs with the name's options. */
export interface QueueOptions extends Context {
  name: string | undefined;
  prompt: Buffer | string;
  /** Run it after the run before it whatever that run's outcome (default: only after a success). */
  afterAny?: boolean | undefined;
}

/**
 * resume-subagent --queue: the prompt queued when the name's latest run has not ended (or prompts are
 * queued already: they go first); otherwise the name is resumed with it at once, as a plain resume.
 */
export async function queueResume(o: QueueOptions): Promise<ResumeResult | QueuedResult> {
  const name = validateName(o.name);
  const prompt = promptBytes(o.prompt);
  const { registry } = placeOf(o, 'write');
  return inRegistryOf(registry, async () => {
    const latest = requireLatest(registry, name);
    await noticeEnd(registry, name);
    const queued = withFollowUps(registry, name, () => {
      const now = observeLatest(registry, name) ?? latest;
      const busy = !isTerminal(now.status) || now.agentAlive;
      if (!busy && listFollowUps(registry, name).length === 0) return null;
      return { entry: addFollowUp(registry, name, prompt, o.afterAny === true), run: now.record.run };
    });
    if (queued === null) return resume({ ...(o as ResumeOptions), name, prompt, registry });
    // The run may have ended while the prompt was queued: its supervisor looked before.
    await noticeEnd(registry, name);
    return { ok: true, registry, name, mode: 'queued', position: queued.entry.position, queuedAt: queued.entry.queuedAt, after: queued.run };
  });
}

/** `resume-subagent --queue --batch`: one follow-up a line, `{name, prompt | promptFile, afterAny}`. */
export interface QueueBatchOptions extends Context {
  /** A path, or "-" for stdin (ignored when `lines` is given). */
  batch: string;
  /** The batch's text itself, one JSON object a line. */
  lines?: string | undefined;
}

/** A line queued (or, for an idle name, resumed at once). */
export interface QueueBatchEntry {
  line: number;
  name: string;
  mode: 'queued' | 'resume';
  /** Its place in the name's queue; null when the name was resumed at once. */
  position: number | null;
  /** queued: the name's latest run then; resume: the run it started. */
  run: number;
}

/** Like the start batch's: every line done, or the E_BATCH_INCOMPLETE object listing those that were not. */
export type QueueBatchResult =
  | { ok: true; registry: string; queued: QueueBatchEntry[]; failed: [] }
  | {
      ok: false;
      code: 'E_BATCH_INCOMPLETE';
      error: string;
      registry: string;
      queued: QueueBatchEntry[];
      failed: BatchFailed[];
      details: { registry: string; hint: string };
    };

const QUEUE_FIELDS = ['name', 'prompt', 'promptFile', 'afterAny'];

/** resume-subagent --queue --batch: each line queued as `--queue` would, in file order (a name's lines keep their order). */
export async function queueBatch(o: QueueBatchOptions): Promise<QueueBatchResult> {
  const { cwd } = callerOf(o);
  const text = o.lines ?? readBatch(o.batch, cwd);
  const { registry } = placeOf(o, 'write');
  const queued: QueueBatchEntry[] = [];
  const failed: BatchFailed[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i]!.trim();
    if (raw === '' || raw.startsWith('//')) continue;
    let name: string | undefined;
    try {
      const fields = parseLine(raw, QUEUE_FIELDS);
      name = textField(fields, 'name');
      if (fields.afterAny !== undefined && typeof fields.afterAny !== 'boolean')
        throw new SubagentError('E_ARG_INVALID', '"afterAny" must be true or false', { field: 'afterAny', hint: '"afterAny": true' });
      const prompt = readPrompt(textField(fields, 'prompt'), textField(fields, 'promptFile'), cwd, { stdinAllowed: false });
      const out = await queueResume({ name, prompt, afterAny: fields.afterAny === true, registry: o.registry, cwd, ...(o.env ? { env: o.env } : {}) });
      queued.push(
        out.mode === 'queued'
          ? { line: i + 1, name: out.name, mode: 'queued', position: out.position, run: out.after }
          : { line: i + 1, name: out.name, mode: 'resume', position: null, run: out.run },
      );
    } catch (err) {
      failed.push(failedLine(i + 1, name, err));
    }
  }
  if (failed.length === 0) return { ok: true, registry, queued, failed: [] };
  const all = queued.length + failed.length;
  return {
    ok: false,
    code: 'E_BATCH_INCOMPLETE',
    error: `${failed.length} of ${all} batch line${all === 1 ? '' : 's'} were not queued`,
    registry,
    queued,
    failed,
    details: { registry, hint: 'each entry of "failed" names its line, code and error; the others were queued' },
  };
}

export interface CancelQueuedOptions extends Context {
  name: string | undefined;
  /** The positions to drop (1: the next); undefined: all. */
  positions?: number[] | undefined;
}

/** What `subagent-cancel --queued` resolves to (docs/schemas/cancel.schema.json). */
export interface CancelQueuedResult {
  ok: true;
  registry: string;
  name: string;
  /** The prompts dropped, as they were queued. */
  dropped: FollowUp[];
  /** What stays queued, in order. */
  queuedPrompts: FollowUp[];
}

/** subagent-cancel --queued: drops queued prompts of a name (all, or these positions); its runs are not touched. */
export async function cancelQueued(o: CancelQueuedOptions): Promise<CancelQueuedResult> {
  const name = validateName(o.name);
  for (const p of o.positions ?? []) {
    if (!Number.isSafeInteger(p) || p < 1)
      throw new SubagentError('E_ARG_INVALID', `--position ${p} is not a position in the queue`, { hint: 'positions count from 1 (the next prompt)' });
  }
  const { registry } = placeOf(o, 'write');
  return inRegistryOf(registry, async () => {
    requireLatest(registry, name);
    await noticeEnd(registry, name);
    return withFollowUps(registry, name, () => {
      const dropped = dropFollowUps(registry, name, o.positions ?? null);
      return { ok: true as const, registry, name, dropped, queuedPrompts: listFollowUps(registry, name) };
    });
  });
}

/** A verb noticing a name's end: the next prompt published when it is due and nobody did. */
async function noticeEnd(registry: string, name: string): Promise<void> {
  const o = observeLatest(registry, name);
  const ended = o ? noticedEnd(o) : null;
  if (ended) await publishFollowUp(registry, ended, () => undefined);
}

/**
 * How an end a verb notices counts for the name's queue: a done run by its outcome; an `unknown` one —
 * its supervisor died — by the end that supervisor settled before it looked at the queue, if it got that
 * far (lib/registry/follow-ups.ts, SettledEnd), else as not succeeded. null: the run has not ended.
 */
export function noticedEnd(o: Observation): Ended | null {
  if (!isTerminal(o.status) || o.agentAlive) return null;
  const outcome = o.status === 'done' ? o.record.outcome : readSettledEnd(o.dir)?.outcome;
  return { record: o.record, succeeded: outcome === 'succeeded' };
}
