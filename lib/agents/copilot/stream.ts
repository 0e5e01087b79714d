import type { ChildAgent } from '../../registry/record.js';
import { capCounted, fields, shortLine, str, type JsonObject } from '../../base/json.js';
import { isoOf, nowIso } from '../../base/time.js';
import type { Message, StreamParser, StreamState, ToolCall, Verdict, VerdictReason } from '../types.js';
import { apiErrorReason } from '../../base/api-error.js';
import { emptyState, endChild, eventOf, inferChildren, runningChild } from '../types.js';
import { INPUT_MAX, OUTPUT_MAX, toolHeadline, toolInputSummary } from '../claude/stream.js';

/**
 * GitHub Copilot CLI's `--output-format json` stream (measured with 1.0.102; see docs/agents/copilot.md),
 * which is also the event format of its store (`session-state/<id>/events.jsonl`, the non-ephemeral
 * events). One JSON object per line, `{type, data, id, timestamp, parentId, ephemeral?, agentId?}`:
 * `user.message`, `assistant.message {content, toolRequests}`, `tool.execution_start|complete`
 * (`toolCallId`), `subagent.started|completed|failed` (the `task` tool), `session.error`, `abort`, and
 * last `result {sessionId, exitCode, usage}` — no tokens nor cost in it or anywhere in the stream.
 * A sub-agent's own events carry its `agentId` (and its turns `data.parentToolCallId`, the task call).
 */

/** What the stream said beyond StreamState: how the run ended, in Copilot's own terms. */
export interface CopilotEnd {
  /** The `result` line's `exitCode` (null: no result line, as after a cancel or a crash). */
  resultExitCode: number | null;
  /** `abort.data.reason` of the run's own turn (`user_initiated` or `user_abort` after SIGINT/SIGTERM), else null. */
  aborted: string | null;
  /** The run's `session.error` (`errorType`: authentication, rate_limit, query, context_limit…; `statusCode` of the HTTP reply). */
  error: { type: string | null; statusCode: number | null; message: string } | null;
  /** Tool calls Copilot refused (`error.code` "denied": no permission, as headless runs without --allow-all-*). */
  deniedTools: string[];
}

const ends = new WeakMap<StreamState, CopilotEnd>();

/** The Copilot-specific end of a stream a copilot parser read (undefined for any other state). */
export function copilotEnd(state: StreamState): CopilotEnd | undefined {
  return ends.get(state);
}

const ERROR_MAX = 1000;

interface PendingTool {
  name: string;
  args: unknown;
  /** The sub-agent that made the call (its agentId), null for the run itself. */
  agent: string | null;
}

/** What a call was asked: bash its command, task its description and prompt, any other tool its arguments. */
function inputSummary(name: string, args: unknown): string | null {
  const a = fields(args);
  if (name === 'bash' && typeof a.command === 'string') return capCounted(a.command, INPUT_MAX);
  if (name === 'task' && typeof a.prompt === 'string') return capCounted(`${str(a.description) ?? str(a.name) ?? 'task'}: ${a.prompt}`, INPUT_MAX);
  return toolInputSummary(name, args);
}

/**
 * A completed call's output and status. Copilot's bash ends its output with a `<shellId: N completed with
 * exit code X>` trailer (cut) and reports a command's non-zero exit as `success:true` with
 * `shellExecution.exitCode` (an `[exit X]` prefix and status `failed`, as for Codex); a call Copilot itself
 * refused or that broke is `success:false` with `error {code, message}`.
 */
function toolResult(d: JsonObject): { output: string | null; status: string } {
  if (d.success === false) {
    const e = fields(d.error);
    return { output: str(e.message) ?? str(e.code), status: str(e.code) ?? 'failed' };
  }
  const text = str(fields(d.result).content)?.replace(/\n?<shellId: [^>]*>\s*$/, '') ?? null;
  const code = fields(d.shellExecution).exitCode;
  if (typeof code === 'number' && code !== 0) return { output: `[exit ${code}] ${text ?? ''}`.trimEnd(), status: 'failed' };
  return { output: text, status: 'completed' };
}

export function parser(onMessage?: (m: Message) => void): StreamParser & { end(): void } {
  const state = emptyState();
  const end: CopilotEnd = { resultExitCode: null, aborted: null, error: null, deniedTools: [] };
  ends.set(state, end);
  const pending = new Map<string, PendingTool>();
  const counted = new Set<string>();
  /** The task tool call that spawned each direct child, and the child (agentId) of each such call. */
  const childOfCall = new Map<string, string>();

  const emit = (m: Message, agent: string | null): void => onMessage?.(agent ? { ...m, childId: agent } : m);

  const emitTool = (call: PendingTool, output: string | null, status: string): void => {
    const tool: ToolCall = {
      name: call.name,
      input: inputSummary(call.name, call.args),
      output: output === null || output === '' ? null : capCounted(output, OUTPUT_MAX),
      status,
    };
    emit({ role: 'tool', text: toolHeadline(call.name, call.args), tool }, call.agent);
  };

  const settleChild = (id: string | undefined, status: ChildAgent['status'], at: string): void => {
    const child = state.children.find((c) => c.id === id);
    if (child) endChild(child, status, at);
  };

  return {
    state,
    line(text: string) {
      const ev = eventOf(text, state);
      if (!ev) return;
      const at = isoOf(Date.parse(String(ev.timestamp))) ?? nowIso();
      state.lastActivityAt = at;
      const d = fields(ev.data);
      const agent = str(ev.agentId);
      switch (ev.type) {
        case 'assistant.turn_start':
          // One request to the model and the tools it asks for: the run's own turns (a sub-agent's carry its agentId).
          if (!agent) state.turns++;
          break;
        case 'user.message': {
          // The run's own prompt is the core's; a sub-agent's is its task prompt.
          const content = str(d.content);
          if (agent && content) emit({ role: 'user', text: content }, agent);
          break;
        }
        case 'assistant.message': {
          const content = str(d.content);
          if (!content?.trim()) break; // a turn that only calls tools
          emit({ role: 'assistant', text: content }, agent);
          if (!agent) state.lastAssistantText = content;
          break;
        }
        case 'tool.execution_start': {
          const id = str(d.toolCallId);
          if (!id || pending.has(id)) break;
          pending.set(id, { name: str(d.toolName) ?? 'tool', args: d.arguments, agent });
          if (!counted.has(id)) {
            counted.add(id);
            state.toolUses++;
          }
          break;
        }
        case 'tool.execution_complete': {
          const id = str(d.toolCallId) ?? '';
          const call = pending.get(id) ?? { name: 'tool', args: undefined, agent };
          pending.delete(id);
          const { output, status } = toolResult(d);
          if (status === 'denied') end.deniedTools.push(toolHeadline(call.name, call.args));
          emitTool(call, output, status);
          break;
        }
        case 'subagent.started': {
          const call = str(d.toolCallId);
          const id = agent ?? call;
          // Only the run's own children: a child's child was spawned by a call its parent made.
          if (!id || (call !== null && pending.get(call)?.agent) || state.children.some((c) => c.id === id)) break;
          if (call) childOfCall.set(call, id);
          const description = str(d.agentDescription) ?? str(d.agentDisplayName) ?? str(d.agentName);
          state.children = [...state.children, runningChild(id, 'copilot', description, at)];
          break;
        }
        case 'subagent.completed':
        case 'subagent.failed': {
          // `cancelled`: torn down by an abort (its own, or the run's), not finished.
          const status = d.cancelled === true ? 'cancelled' : ev.type === 'subagent.failed' ? 'failed' : 'done';
          settleChild(agent ?? childOfCall.get(str(d.toolCallId) ?? ''), status, at);
          break;
        }
        case 'session.error': {
          if (agent) break; // a sub-agent's error reaches the run as its task's result
          const message = str(d.message) ?? str(d.errorType) ?? 'copilot reported an error';
          end.error = { type: str(d.errorType), statusCode: typeof d.statusCode === 'number' ? d.statusCode : null, message };
          state.fatalError = capCounted(message.replace(/\s*\n\s*/g, ' ').trim(), ERROR_MAX);
          break;
        }
        case 'abort':
          if (!agent) end.aborted = str(d.reason) ?? 'aborted';
          break;
        case 'result': {
          const id = str(ev.sessionId);
          if (id && !state.sessionId) state.sessionId = id;
          end.resultExitCode = typeof ev.exitCode === 'number' ? ev.exitCode : null;
          break;
        }
        default:
          break; // deltas, turns, model calls, skills…: not part of the transcript
      }
    },
    end() {
      // Calls that never completed: the run was stopped during them.
      for (const call of pending.values()) emitTool(call, null, 'incomplete');
      pending.clear();
    },
  };
}

/** The reason of a `session.error`: its `errorType`, else its HTTP status and words. */
function errorReason(e: CopilotEnd['error']): VerdictReason {
  const type = e?.type ?? null;
  if (type === 'authentication' || type === 'authorization') return 'auth';
  if (type === 'rate_limit' || type === 'quota') return 'rate-limit';
  // `query`, `context_limit`: the request to the model failed or was refused (a 5xx after its retries, a
  // prompt over its budget…).
  const fallback = type === 'query' || type === 'context_limit' ? 'api-error' : 'unknown';
  return apiErrorReason(e?.statusCode ?? null, e?.message ?? '') ?? fallback;
}

/**
 * How a Copilot run ended: its `session.error` first, then an aborted turn, then the exit status, then
 * the `result` line (a run that printed none did not finish), then the tools it refused for want of
 * permission (headless, nobody can grant them: `permission-denied`, as for Claude). Children still
 * running take the run's end.
 */
export function verdict(exit: { code: number | null; signal: string | null }, state: StreamState): Verdict {
  const e = ends.get(state);
  let v: Verdict;
  if (state.fatalError) v = { outcome: 'failed', error: state.fatalError, reason: errorReason(e?.error ?? null) };
  else if (e?.aborted) v = { outcome: 'failed', error: `copilot aborted the turn (${e.aborted})`, reason: 'crashed' };
  else if (exit.signal) v = { outcome: 'failed', error: `copilot was killed by ${exit.signal}`, reason: 'crashed' };
  else if (exit.code !== 0) v = { outcome: 'failed', error: `copilot exited with status ${exit.code ?? 'unknown'}`, reason: 'crashed' };
  else if (e?.resultExitCode === null || e === undefined)
    v = { outcome: 'failed', error: 'copilot exited with status 0 without its result line', reason: 'crashed' };
  else if (e.resultExitCode !== 0) v = { outcome: 'failed', error: `copilot reported exitCode ${e.resultExitCode}`, reason: 'unknown' };
  else if (e.deniedTools.length)
    v = {
      outcome: 'failed',
      error: `copilot was refused permission for ${e.deniedTools.length === 1 ? '1 tool call' : `${e.deniedTools.length} tool calls`}: ${shortLine(e.deniedTools.join('; '), 300)} (grant what the task needs: docs/agents/copilot.md)`,
      reason: 'permission-denied',
    };
  else v = { outcome: 'succeeded', error: null, reason: null };
  inferChildren(state, v.outcome === 'succeeded' ? 'done' : 'failed');
  return v;
}
