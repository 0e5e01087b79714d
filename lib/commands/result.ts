import { loadAdapter } from '../agents/index.js';
import { SubagentError } from '../base/errors.js';
import { observeRun } from '../runs/observe.js';
import { listRuns, runDir } from '../registry/store.js';
import { lastAnswer } from '../runs/transcript.js';
import { validateName } from '../registry/names.js';
import { childTranscript } from '../runs/children.js';
import { requireLatest, resolveRegistry, type Context } from './common.js';

export interface ResultOptions extends Context {
  name: string | undefined;
  run?: string | undefined;
  child?: string | undefined;
  /** Every run after this one. */
  since?: string | undefined;
}

export function parseRunNumber(value: string, flag: string): number {
  if (!/^[1-9][0-9]{0,8}$/.test(value)) {
    throw new SubagentError('E_ARG_INVALID', `${flag} "${value}" is not a run number`, { flag, value, hint: 'runs are numbered 1, 2, 3…; subagent-status lists the latest' });
  }
  return Number(value);
}

/** subagent-result: the last answer of a run (the latest, or --run K), at once, whatever its status. */
export async function result(o: ResultOptions): Promise<Record<string, unknown>> {
  // Flags before the lookup, as every verb checks them: a bad --run/--since is E_ARG_INVALID even for an unknown name.
  validateName(o.name);
  const wanted = o.run === undefined ? undefined : parseRunNumber(o.run, '--run');
  const since = o.since === undefined ? undefined : o.since === '0' ? 0 : parseRunNumber(o.since, '--since');
  const registry = resolveRegistry(o);
  const latest = requireLatest(registry, o.name!);
  const name = latest.record.name;
  if (o.child !== undefined) {
    const c = await childTranscript(registry, name, o.child);
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
      lastAssistantText: answer?.text ?? '',
      truncated: false,
      bytes: Buffer.byteLength(answer?.text ?? ''),
    };
  }
  if (since !== undefined) {
    const runs = (listRuns(registry, name) ?? []).filter((n) => n > since);
    const out = [];
    for (const n of runs) {
      const r = n === latest.record.run ? latest : observeRun(runDir(registry, name, n));
      const a = lastAnswer(r.dir, await loadAdapter(r.record.cli));
      out.push({ run: n, status: r.status, outcome: r.status === 'done' ? r.record.outcome : null, exitCode: r.record.exitCode, sessionId: r.record.sessionId, lastAssistantText: a.text, truncated: a.truncated, bytes: a.bytes, skippedLines: a.skippedLines });
    }
    return { ok: true, registry, name, since, latestRun: latest.record.run, runs: out };
  }
  let ob = latest;
  if (wanted !== undefined) {
    if (!(listRuns(registry, name) ?? []).includes(wanted)) {
      throw new SubagentError('E_RUN_NOT_FOUND', `"${name}" has no run ${wanted} (its latest is ${latest.record.run})`, { name, run: wanted, hint: 'subagent-status --name ' + name + ' shows the latest run number' });
    }
    ob = observeRun(runDir(registry, name, wanted));
  }
  const adapter = await loadAdapter(ob.record.cli);
  const answer = lastAnswer(ob.dir, adapter);
  return {
    ok: true,
    registry,
    name,
    run: ob.record.run,
    sessionId: ob.record.sessionId,
    status: ob.status,
    outcome: ob.status === 'done' ? ob.record.outcome : null,
    exitCode: ob.record.exitCode,
    lastAssistantText: answer.text,
    truncated: answer.truncated,
    bytes: answer.bytes,
    skippedLines: answer.skippedLines,
  };
}
