import { fields, str, type JsonObject } from '../../base/json.js';
import { nowIso } from '../../base/time.js';
import type { ChildAgent } from '../../registry/record.js';
import type { SessionQuery } from '../types.js';
import { callOutput, findChild } from './store.js';
import { errorText } from './errors.js';

/**
 * How the Gemini CLI's sub-agents really ended. Its stream calls every `invoke_agent` that returned a
 * `success`, a child that failed included (docs/agents/gemini.md, "Children"); the session's chat file
 * records the call with what it returned, so the supervisor settles the stream's `done` children from
 * there (`ChildSettler`).
 */

/** How a child's call ended: `ok`, or failed with the CLI's words when it has some. */
export interface ChildEnd {
  ok: boolean;
  error: string | null;
}

/** A sub-agent that threw (its API error, a bad config): `Subagent 'generalist' failed. Error: <message>`. */
const FAILED = /^Subagent '[^']*' failed\. Error: ([\s\S]*)$/;
/** A sub-agent that returned: `Subagent '…' finished.\nTermination Reason: GOAL|MAX_TURNS|TIMEOUT|…\nResult:\n…`. */
const FINISHED = /^Subagent '[^']*' finished\.\nTermination Reason: (\w+)\nResult:\n?([\s\S]*)$/;

/**
 * The end of a child by the session's record of its `invoke_agent` call: the call's display state
 * (`error`, or `completed` with its `terminateReason`), else the text the call returned. Only `GOAL`
 * (it called `complete_task`) is a success; `MAX_TURNS`, `TIMEOUT`, `ERROR_NO_COMPLETE_TASK_CALL`… after
 * the CLI's one recovery turn failed are failures. Null when the record says neither.
 */
export function childEnd(call: JsonObject): ChildEnd | null {
  const display = fields(call.resultDisplay);
  const output = callOutput({ result: call.result });
  const failed = output === null ? null : FAILED.exec(output);
  if (failed) return { ok: false, error: errorText(failed[1] ?? '').text || output };
  if (display.state === 'error' || call.status === 'error') return { ok: false, error: output };
  const finished = output === null ? null : FINISHED.exec(output);
  const reason = str(display.terminateReason) ?? finished?.[1] ?? null;
  if (reason === 'GOAL') return { ok: true, error: null };
  if (reason) {
    const said = (str(display.result) ?? finished?.[2] ?? '').trim();
    return { ok: false, error: said ? `${said} (${reason})` : `the sub-agent ended with ${reason}` };
  }
  return display.state === 'completed' ? { ok: true, error: null } : null;
}

/**
 * How one run's children really ended (`AgentRun.settleChildren`): each child the stream called `done` is
 * looked up in the session's chat; one whose call failed becomes `failed` (`statusSource: "transcript"`,
 * its `error`). The CLI writes the call's record right after the stream's `tool_result`: until then the
 * child is held `running`, and `final` (the agent exited) gives a child the store never recorded back the
 * stream's `done`.
 *
 * A held child is one the stream did end: when it is let go it gets the stream's end back whatever was
 * guessed meanwhile — the run's `result` can come (and `inferChildren` can take the held child for one the
 * stream never ended) before the store records the call (seen under load: test/fixtures/agents/gemini/
 * subagent-race.ndjson). A child whose end was only inferred takes the store's record of its call when
 * there is one (`statusSource: "transcript"`).
 */
export class ChildSettler {
  /** Children whose end the store has settled (a run's children are the same objects for its whole life). */
  private readonly settled = new Set<ChildAgent>();
  /** Children the stream ended that are held `running` until the store records the call: the stream's end. */
  private readonly held = new Map<ChildAgent, { status: ChildAgent['status']; finishedAt: string | null }>();

  settle(q: SessionQuery, children: ChildAgent[], final: boolean): void {
    for (const c of children) {
      const streamEnd = this.held.get(c);
      const guessed = !streamEnd && c.statusSource === 'inferred';
      if (this.settled.has(c) || !(streamEnd || guessed || (c.status === 'done' && c.statusSource === 'stream'))) continue;
      const call = findChild({ ...q, childId: c.id })?.call ?? null;
      if (!call && guessed) continue;
      if (!call && !final) {
        if (!streamEnd) this.held.set(c, { status: c.status, finishedAt: c.finishedAt });
        c.status = 'running';
        c.statusSource = 'stream';
        c.finishedAt = null;
        continue;
      }
      if (streamEnd) {
        c.status = streamEnd.status;
        c.statusSource = 'stream';
        c.finishedAt = streamEnd.finishedAt ?? nowIso();
        this.held.delete(c);
      }
      this.settled.add(c);
      const end = call ? childEnd(call) : null;
      if (end) settleFrom(c, end, guessed);
    }
  }
}

/** A child's end as the store recorded it: a failure always; a success only over a guess. */
function settleFrom(c: ChildAgent, end: ChildEnd, guessed: boolean): void {
  if (end.ok) {
    if (!guessed) return;
    c.status = 'done';
    c.statusSource = 'transcript';
    return;
  }
  c.status = 'failed';
  c.statusSource = 'transcript';
  if (end.error) c.error = end.error;
}
