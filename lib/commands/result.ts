import { loadAdapter } from '../agents/index.js';
import { SubagentError } from '../base/errors.js';
import { observeRun, requireLatest } from '../runs/observe.js';
import { listRuns, readListedRun, runDir } from '../registry/store.js';
import { resetsAtOf, type ChildAgent, type Outcome, type Reason, type Status } from '../registry/record.js';
import { lastAnswer } from '../runs/transcript.js';
import { validateName } from '../registry/names.js';
import { childTranscript } from '../runs/children.js';
import { inRegistryOf, placeOf, type Context } from './context.js';
import { checkRunNumber } from './settings.js';

export interface ResultOptions extends Context {
  name: string | undefined;
  /** Run K of the name instead of the latest. */
  run?: number | undefined;
  /** The answer of one child sub-agent of the latest run (ids are in status `children`). */
  child?: string | undefined;
  /** The answers of every run after this one (0: all), oldest first. */
  since?: number | undefined;
  /**
   * Also give each answer as bytes (`lastAssistantBytes`): for shell its output exactly as written,
   * invalid UTF-8 kept (`lastAssistantText` is decoded, with U+FFFD for what is not UTF-8). What the
   * plain-text verb prints; a JSON line cannot carry it.
   */
  raw?: boolean;
}

/** The last answer of one run (docs/schemas/result.schema.json). */
export interface RunAnswer {
  ok: true;
  registry: string;
  name: string;
  run: number;
  sessionId: string | null;
  status: Status;
  outcome: Outcome | null;
  /** Why a done run did not succeed (docs/contract.md, "Reasons"); null otherwise. */
  reason: Reason | null;
  /** With reason `rate-limit`: when the limit resets (ISO-8601); null otherwise and when the CLI did not say. */
  resetsAt: string | null;
  exitCode: number | null;
  /** What the agent last said; null when it has said nothing (yet): still running, or failed before answering. */
  lastAssistantText: string | null;
  /** Past 1 MiB only the tail is kept. */
  truncated: boolean;
  /** The whole answer's size. */
  bytes: number;
  skippedLines: number;
  /** With `raw`: the answer as bytes (see ResultOptions.raw). */
  lastAssistantBytes?: Buffer | null;
}

/** `since`: the answers of the runs after it. */
export interface RunsAnswer {
  ok: true;
  registry: string;
  name: string;
  since: number;
  latestRun: number;
  runs: Array<
    Pick<
      RunAnswer,
      | 'run'
      | 'status'
      | 'outcome'
      | 'reason'
      | 'resetsAt'
      | 'exitCode'
      | 'sessionId'
      | 'lastAssistantText'
      | 'truncated'
      | 'bytes'
      | 'skippedLines'
      | 'lastAssistantBytes'
    >
  >;
}

/** `child`: the answer of a child sub-agent, from the stream or the CLI's own transcript store (`source`). */
export interface ChildAnswer {
  ok: true;
  registry: string;
  name: string;
  run: number;
  child: string;
  childStatus: ChildAgent['status'];
  status: ChildAgent['status'];
  source: 'transcript' | 'stream';
  lastAssistantText: string | null;
  truncated: false;
  bytes: number;
}

/** What result resolves to: one run's answer, the answers since a run, or a child's answer. */
export type ResultResult = RunAnswer | RunsAnswer | ChildAnswer;

/** result of the options: `since` gives RunsAnswer, `child` ChildAnswer, else RunAnswer. */
export function result(o: ResultOptions & { since: number }): Promise<RunsAnswer>;
export function result(o: ResultOptions & { child: string }): Promise<ChildAnswer>;
export function result(o: ResultOptions & { since?: undefined; child?: undefined }): Promise<RunAnswer>;
export function result(o: ResultOptions): Promise<ResultResult>;
/** subagent-result: the last answer of a run (the latest, or --run K), at once, whatever its status. */
export async function result(o: ResultOptions): Promise<ResultResult> {
  // Options before the lookup, as every verb checks them: a bad run number is E_ARG_INVALID even for an unknown name.
  const name = validateName(o.name);
  const wanted = o.run === undefined ? undefined : checkRunNumber(o.run, '--run');
  const since = o.since === undefined ? undefined : checkRunNumber(o.since, '--since', true);
  const { registry } = placeOf(o);
  return inRegistryOf(registry, async (): Promise<ResultResult> => {
    const latest = requireLatest(registry, name);
    if (o.child !== undefined) return childAnswer(registry, latest.record.name, o.child);
    if (since !== undefined) return answersSince(registry, latest.record.name, since, latest, o.raw === true);
    let ob = latest;
    if (wanted !== undefined) {
      if (!(listRuns(registry, name) ?? []).includes(wanted)) {
        throw new SubagentError('E_RUN_NOT_FOUND', `"${name}" has no run ${wanted} (its latest is ${latest.record.run})`, {
          name,
          run: wanted,
          hint: 'subagent-status --name ' + name + ' shows the latest run number',
        });
      }
      ob = observeRun(runDir(registry, name, wanted));
    }
    const answer = lastAnswer(ob.dir, await loadAdapter(ob.record.cli), ob.record);
    return {
      ok: true,
      registry,
      name: latest.record.name,
      run: ob.record.run,
      sessionId: ob.record.sessionId,
      status: ob.status,
      outcome: ob.status === 'done' ? ob.record.outcome : null,
      reason: ob.status === 'done' ? ob.record.reason : null,
      resetsAt: resetsAtOf(ob.record),
      exitCode: ob.record.exitCode,
      lastAssistantText: answer.text,
      truncated: answer.truncated,
      bytes: answer.bytes,
      skippedLines: answer.skippedLines,
      ...(o.raw ? { lastAssistantBytes: answer.raw } : {}),
    };
  });
}

async function childAnswer(registry: string, name: string, childId: string): Promise<ChildAnswer> {
  const c = await childTranscript(registry, name, childId);
  const answer = [...c.messages].reverse().find((m) => m.role === 'assistant');
  return {
    ok: true,
    registry,
    name,
    run: c.run,
    child: c.child.id,
    childStatus: c.child.status,
    status: c.child.status,
    source: c.source,
    lastAssistantText: answer?.text ?? null,
    truncated: false,
    bytes: answer ? Buffer.byteLength(answer.text) : 0,
  };
}

async function answersSince(registry: string, name: string, since: number, latest: ReturnType<typeof requireLatest>, raw: boolean): Promise<RunsAnswer> {
  const runs: RunsAnswer['runs'] = [];
  for (const n of (listRuns(registry, name) ?? []).filter((k) => k > since)) {
    const r = n === latest.record.run ? latest : readListedRun(runDir(registry, name, n), observeRun);
    if (r === null) continue;
    const a = lastAnswer(r.dir, await loadAdapter(r.record.cli), r.record);
    runs.push({
      run: n,
      status: r.status,
      outcome: r.status === 'done' ? r.record.outcome : null,
      reason: r.status === 'done' ? r.record.reason : null,
      resetsAt: resetsAtOf(r.record),
      exitCode: r.record.exitCode,
      sessionId: r.record.sessionId,
      lastAssistantText: a.text,
      truncated: a.truncated,
      bytes: a.bytes,
      skippedLines: a.skippedLines,
      ...(raw ? { lastAssistantBytes: a.raw } : {}),
    });
  }
  return { ok: true, registry, name, since, latestRun: latest.record.run, runs };
}
