import { observeRun } from '../runs/observe.js';
import { promptHead } from '../runs/transcript.js';
import { nameNotFound, validateName } from '../registry/names.js';
import { listRuns, readListedRun, runDir } from '../registry/store.js';
import { resetsAtOf, type Caps, type Outcome, type Reason, type Status, type Usage } from '../registry/record.js';
import { inRegistryOf, placeOf, type Context } from './context.js';

export interface HistoryOptions extends Context {
  name: string | undefined;
}

/** One run of a name, as `status --runs` lists it. */
export interface HistoryRun {
  run: number;
  status: Status;
  outcome: Outcome | null;
  /** Why a done run did not succeed (docs/contract.md, "Reasons"); null otherwise. */
  reason: Reason | null;
  /** With reason `rate-limit`: when the limit resets (ISO-8601); null otherwise and when the CLI did not say. */
  resetsAt: string | null;
  cli: string;
  model: string | null;
  /** The start of the run's prompt, as text. */
  promptHead: string;
  promptBytes: number;
  sessionId: string | null;
  startedAt: string;
  finishedAt: string | null;
  exitCode: number | null;
  signal: string | null;
  error: string | null;
  usage: Usage | null;
  /** The run's spend caps. */
  caps: Caps;
  skippedLines: number;
}

/** What history resolves to (docs/schemas/status-runs.schema.json). */
export interface HistoryResult {
  ok: true;
  registry: string;
  name: string;
  /** Oldest first. */
  runs: HistoryRun[];
}

/** subagent-status --runs: every run of one name, oldest first. */
export async function history(o: HistoryOptions): Promise<HistoryResult> {
  const name = validateName(o.name);
  const { registry } = placeOf(o);
  return inRegistryOf(registry, () => {
    const runs = listRuns(registry, name);
    // A name without runs is one a prune is taking out whole.
    if (!runs?.length) throw nameNotFound(name, registry);
    return {
      ok: true,
      registry,
      name,
      runs: runs.flatMap((k): HistoryRun[] => {
        const dir = runDir(registry, name, k);
        const ob = readListedRun(dir, observeRun);
        if (ob === null) return [];
        const r = ob.record;
        const run: HistoryRun = {
          run: k,
          status: ob.status,
          outcome: r.outcome,
          reason: ob.status === 'done' ? r.reason : null,
          resetsAt: resetsAtOf(r),
          cli: r.cli,
          model: r.model,
          promptHead: promptHead(dir),
          promptBytes: r.promptBytes,
          sessionId: r.sessionId,
          startedAt: r.startedAt,
          finishedAt: r.finishedAt,
          exitCode: r.exitCode,
          signal: r.signal,
          error: r.error,
          usage: r.usage,
          caps: r.caps,
          skippedLines: r.skippedLines,
        };
        return [run];
      }),
    };
  });
}
