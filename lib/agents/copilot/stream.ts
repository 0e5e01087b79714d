import { capCounted, fields, shortLine, str, type JsonObject } from '../../base/json.js';
import { isoOf, nowIso } from '../../base/time.js';
import type { AgentRun, Exit, Message, RunOptions, SessionQuery, StoreUsage, StreamState, ToolCall, Verdict, VerdictReason } from '../types.js';
import { apiErrorReason } from '../../base/api-error.js';
import { endChild, inferChildren, runningChild } from '../shared/children.js';
import { emptyState, eventOf } from '../shared/stream.js';
import { INPUT_MAX, OUTPUT_MAX, ToolCalls, toolHeadline, toolInputSummary } from '../shared/tools.js';

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

/**
 * One Copilot run, or a sub-agent's events in its session's log (store.ts). The adapter gives a run its
 * store's usage reader (usage.ts, which reads the store this file's readers read).
 */
export class CopilotRun implements AgentRun {
  readonly state: StreamState = emptyState();
  /** How the stream says the run ended, in Copilot's own terms (what the verdict reads). */
  readonly ending: CopilotEnd = { resultExitCode: null, aborted: null, error: null, deniedTools: [] };
  private readonly tools = new ToolCalls<PendingTool>(this.state);
  /** The task tool call that spawned each direct child, and the child (agentId) of each such call. */
  private readonly childOfCall = new Map<string, string>();
  private readonly onMessage: ((m: Message) => void) | undefined;

  constructor(
    run: RunOptions = {},
    readonly storeUsage?: (q: SessionQuery) => StoreUsage,
  ) {
    this.onMessage = run.onMessage;
  }

  private emit(m: Message, agent: string | null): void {
    this.onMessage?.(agent ? { ...m, childId: agent } : m);
  }

  private emitTool(call: PendingTool, output: string | null, status: string): void {
    const tool: ToolCall = {
      name: call.name,
      input: inputSummary(call.name, call.args),
      output: output === null || output === '' ? null : capCounted(output, OUTPUT_MAX),
      status,
    };
    this.emit({ role: 'tool', text: toolHeadline(call.name, call.args), tool }, call.agent);
  }

  line(text: string): void {
    const ev = eventOf(text, this.state);
    if (!ev) return;
    const at = isoOf(Date.parse(String(ev.timestamp))) ?? nowIso();
    this.state.lastActivityAt = at;
    const d = fields(ev.data);
    const agent = str(ev.agentId);
    switch (ev.type) {
      case 'assistant.turn_start':
        // One request to the model and the tools it asks for: the run's own turns (a sub-agent's carry its agentId).
        if (!agent) this.state.turns++;
        break;
      case 'user.message': {
        // The run's own prompt is the core's; a sub-agent's is its task prompt.
        const content = str(d.content);
        if (agent && content) this.emit({ role: 'user', text: content }, agent);
        break;
      }
      case 'assistant.message':
        this.assistant(d, agent);
        break;
      case 'tool.execution_start':
        this.toolStart(d, agent);
        break;
      case 'tool.execution_complete':
        this.toolComplete(d, agent);
        break;
      case 'subagent.started':
        this.childStarted(d, agent, at);
        break;
      case 'subagent.completed':
      case 'subagent.failed': {
        // `cancelled`: torn down by an abort (its own, or the run's), not finished.
        const status = d.cancelled === true ? 'cancelled' : ev.type === 'subagent.failed' ? 'failed' : 'done';
        const id = agent ?? this.childOfCall.get(str(d.toolCallId) ?? '');
        const child = this.state.children.find((c) => c.id === id);
        if (child) endChild(child, status, at);
        break;
      }
      case 'session.error':
        if (!agent) this.sessionError(d); // a sub-agent's error reaches the run as its task's result
        break;
      case 'abort':
        if (!agent) this.ending.aborted = str(d.reason) ?? 'aborted';
        break;
      case 'result': {
        const id = str(ev.sessionId);
        if (id && !this.state.sessionId) this.state.sessionId = id;
        this.ending.resultExitCode = typeof ev.exitCode === 'number' ? ev.exitCode : null;
        break;
      }
      default:
        break; // deltas, turns, model calls, skills…: not part of the transcript
    }
  }

  private assistant(d: JsonObject, agent: string | null): void {
    const content = str(d.content);
    if (!content?.trim()) return; // a turn that only calls tools
    this.emit({ role: 'assistant', text: content }, agent);
    if (!agent) this.state.lastAssistantText = content;
  }

  private toolStart(d: JsonObject, agent: string | null): void {
    const id = str(d.toolCallId);
    if (!id || this.tools.isOpen(id)) return;
    this.tools.open(id, { name: str(d.toolName) ?? 'tool', args: d.arguments, agent });
    this.tools.count(id);
  }

  private toolComplete(d: JsonObject, agent: string | null): void {
    const id = str(d.toolCallId) ?? '';
    const call = this.tools.close(id) ?? { name: 'tool', args: undefined, agent };
    const { output, status } = toolResult(d);
    if (status === 'denied') this.ending.deniedTools.push(toolHeadline(call.name, call.args));
    this.emitTool(call, output, status);
  }

  private childStarted(d: JsonObject, agent: string | null, at: string): void {
    const call = str(d.toolCallId);
    const id = agent ?? call;
    // Only the run's own children: a child's child was spawned by a call its parent made.
    if (!id || (call !== null && this.tools.get(call)?.agent) || this.state.children.some((c) => c.id === id)) return;
    if (call) this.childOfCall.set(call, id);
    const description = str(d.agentDescription) ?? str(d.agentDisplayName) ?? str(d.agentName);
    this.state.children = [...this.state.children, runningChild(id, 'copilot', description, at)];
  }

  private sessionError(d: JsonObject): void {
    const message = str(d.message) ?? str(d.errorType) ?? 'copilot reported an error';
    this.ending.error = { type: str(d.errorType), statusCode: typeof d.statusCode === 'number' ? d.statusCode : null, message };
    this.state.fatalError = capCounted(message.replace(/\s*\n\s*/g, ' ').trim(), ERROR_MAX);
  }

  end(): void {
    // Calls that never completed: the run was stopped during them.
    for (const call of this.tools.drain()) this.emitTool(call, null, 'incomplete');
  }

  /**
   * How a Copilot run ended: its `session.error` first, then an aborted turn, then the exit status, then
   * the `result` line (a run that printed none did not finish), then the tools it refused for want of
   * permission (headless, nobody can grant them: `permission-denied`, as for Claude). Children still
   * running take the run's end.
   */
  verdict(exit: Exit): Verdict {
    const v = verdictOf(exit, this.state, this.ending);
    inferChildren(this.state, v.outcome === 'succeeded' ? 'done' : 'failed');
    return v;
  }

  /**
   * Copilot 1.0.102 signed in to nothing (no token, no provider key): "Error: No authentication information
   * found." on stderr, exit 1, nothing on stdout (test/fixtures/agents/copilot/no-auth.stderr). Its other
   * words about the model API are read as the stream's are.
   */
  stderrReason(said: string): VerdictReason | null {
    return apiErrorReason(null, said);
  }
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

function verdictOf(exit: Exit, state: StreamState, e: CopilotEnd): Verdict {
  if (state.fatalError) return { outcome: 'failed', error: state.fatalError, reason: errorReason(e.error) };
  if (e.aborted) return { outcome: 'failed', error: `copilot aborted the turn (${e.aborted})`, reason: 'crashed' };
  if (exit.signal) return { outcome: 'failed', error: `copilot was killed by ${exit.signal}`, reason: 'crashed' };
  if (exit.code !== 0) return { outcome: 'failed', error: `copilot exited with status ${exit.code ?? 'unknown'}`, reason: 'crashed' };
  if (e.resultExitCode === null) return { outcome: 'failed', error: 'copilot exited with status 0 without its result line', reason: 'crashed' };
  if (e.resultExitCode !== 0) return { outcome: 'failed', error: `copilot reported exitCode ${e.resultExitCode}`, reason: 'unknown' };
  if (e.deniedTools.length)
    return {
      outcome: 'failed',
      error: `copilot was refused permission for ${e.deniedTools.length === 1 ? '1 tool call' : `${e.deniedTools.length} tool calls`}: ${shortLine(e.deniedTools.join('; '), 300)} (grant what the task needs: docs/agents/copilot.md)`,
      reason: 'permission-denied',
    };
  return { outcome: 'succeeded', error: null, reason: null };
}
