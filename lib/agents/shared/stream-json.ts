import type { ChildAgent, Usage } from '../../registry/record.js';
import type { AgentRun, CliName, Exit, Message, RunOptions, StreamState, ToolCall, Verdict, VerdictReason } from '../types.js';
import { apiErrorReason } from '../../base/api-error.js';
import { isoOf, nowIso } from '../../base/time.js';
import { capCounted, fields, obj, str, type JsonObject } from '../../base/json.js';
import { upsertChild } from './children.js';
import { childAnswerText } from './handback.js';
import { claudeRateLimit } from './limits.js';
import { emptyState, eventOf, runUsage } from './stream.js';
import { UsageTally } from './stream-json-usage.js';
import { denialsError, OUTPUT_MAX, ToolCalls, toolHeadline, toolInputSummary, VERDICT_ERROR_MAX } from './tools.js';

/**
 * The stream-json format of Claude Code (`--output-format stream-json --verbose`, measured with 2.1.197
 * and 2.1.331), which is also the format of its transcripts on disk (one event per line). Nothing here
 * is about how the CLI is launched or where it files its transcripts: each CLI that speaks stream-json
 * (Claude Code, Qwen Code) opens its runs here, naming itself and its differences in `StreamJsonOptions`.
 *
 * One JSON object per line: system/init, assistant (ONE LINE PER CONTENT BLOCK, several lines share a
 * message id), user (tool results; `tool_use_result` holds the structured result), system/task_*
 * (sub-agents), result (`is_error` is the verdict: an API error is subtype "success" with is_error true).
 * Background sub-agents (2.1.331's default) make one process print several init and result lines: the
 * answer is the last result's (`result_index`), given after the children reported (task_notification).
 */

/** How a stream-json run reads its stream: the CLI and its differences from Claude Code. */
export interface StreamJsonOptions {
  /** The CLI whose stream this is: named in its children (`ChildAgent.cli`) and in the verdict's errors. */
  cli: CliName;
  /**
   * A child sub-agent's own transcript (a file of the CLI's store): every message belongs to this child,
   * and the run's facts (usage, children, result) are not taken from it.
   */
  childId?: string | null;
  /** The CLI's sub-agent tool (default Claude's `Agent`, `Task`; Qwen Code: `agent`). */
  agentTools?: readonly string[];
  /** The CLI's shell tool, whose input is summarised by its command (default Claude's `Bash`). */
  shellTools?: readonly string[];
  /**
   * For a CLI whose sub-agent results carry no `tool_use_result` (Qwen Code): the id a sub-agent gets
   * from the call that starts it, or null. Its lines are then that child's from the first, and a call's
   * result ends a foreground child (the result's text is its answer); a background child (announced by
   * task_started) keeps running until its task_notification.
   */
  agentIdOfCall?: (toolUseId: string, input: unknown) => string | null;
  /**
   * `session`: the result lines count the whole session, earlier runs included (Qwen Code); this run's
   * usage is its result line's minus `usageBefore`. Default `run`: the result lines count this run.
   */
  usageScope?: 'run' | 'session';
  /** With `usageScope: 'session'`, what the session's earlier runs reported (`RunOptions.threadUsageBefore`). */
  usageBefore?: Usage | null;
}

/** The text of a content value: a string, or blocks with `text` (tool_result content, Agent answers). */
function contentText(v: unknown): string {
  if (typeof v === 'string') return v;
  if (!Array.isArray(v)) return '';
  const parts: string[] = [];
  for (const b of v) {
    const block = obj(b);
    if (!block) continue;
    if (typeof block.text === 'string') parts.push(block.text);
    else if (block.type === 'image') parts.push('[image]');
    else if (block.content !== undefined) parts.push(contentText(block.content));
  }
  return parts.join('\n');
}

// ---------------------------------------------------------------------------------------------------
// One run (or one child's transcript): sees one JSON object at a time.

interface PendingTool {
  id: string;
  name: string;
  input: unknown;
  /** The parent_tool_use_id of the assistant line that made the call (null: the run itself). */
  parentToolUseId: string | null;
}

/** What the run knows beyond StreamState, for its verdict. */
interface Internal {
  results: number;
  /** A result line said is_error; the first such error is kept (the root cause). */
  resultError: string | null;
  /** That result line's reason (its subtype, its API error's status and words). */
  resultReason: VerdictReason | null;
  /** Tool calls the CLI refused for want of permission (result.permission_denials), by tool_use id: a short label each. */
  denials: Map<string, string>;
  apiRetries: number;
}

function childStatus(s: unknown): ChildAgent['status'] | null {
  switch (s) {
    case 'completed':
    case 'done':
    case 'success':
      return 'done';
    case 'failed':
    case 'error':
      return 'failed';
    case 'killed':
    case 'stopped':
    case 'cancelled':
    case 'aborted':
      return 'cancelled';
    case 'running':
    case 'pending':
    case 'async_launched':
      return 'running';
    default:
      return null;
  }
}

function resultError(r: JsonObject, cli: string): string {
  const subtype = str(r.subtype) ?? 'error';
  const errors = Array.isArray(r.errors) ? r.errors.filter((e): e is string => typeof e === 'string') : [];
  const text = str(r.result) ?? str(fields(r.error).message);
  let why: string;
  if (errors.length) why = errors.join('; ');
  else if (text?.trim()) why = text.trim();
  else why = `${cli} reported is_error (${subtype})`;
  const reason = str(r.terminal_reason);
  const label = reason && reason !== 'completed' && !why.includes(reason) ? `${subtype}, ${reason}` : subtype;
  if (subtype !== 'success' && !why.includes(subtype)) why = `${label}: ${why}`;
  const status = r.api_error_status;
  if (typeof status === 'number' && !why.includes(String(status))) why = `API error ${status}: ${why}`;
  return capCounted(why, VERDICT_ERROR_MAX);
}

/** The reason of a result line that said is_error: its subtype, or for an API error its status and words. */
function resultReason(r: JsonObject): VerdictReason {
  switch (str(r.subtype)) {
    case 'error_max_turns':
      return 'max-turns';
    case 'error_max_budget_usd':
      return 'max-cost';
    case 'error_during_execution': {
      // Claude: interrupted (a signal nobody here sent); Qwen: also an API error, in its words.
      const errors = Array.isArray(r.errors) ? r.errors.filter((e): e is string => typeof e === 'string') : [];
      const said = [str(r.result) ?? '', str(obj(r.error)?.message) ?? '', ...errors].join(' ');
      return apiErrorReason(typeof r.api_error_status === 'number' ? r.api_error_status : null, said) ?? 'crashed';
    }
    case 'success':
    case null: {
      // An API error (measured: subtype "success" with is_error): its status, else its words.
      const status = typeof r.api_error_status === 'number' ? r.api_error_status : null;
      const errors = Array.isArray(r.errors) ? r.errors.filter((e): e is string => typeof e === 'string') : [];
      return apiErrorReason(status, [str(r.result) ?? '', ...errors].join(' ')) ?? 'api-error';
    }
    default:
      return 'unknown';
  }
}

/** A run of a CLI that speaks stream-json: a run's stdout, or (with `childId`) a child's transcript file. */
export class StreamJsonRun implements AgentRun {
  readonly state: StreamState = emptyState();
  private readonly internal: Internal = { results: 0, resultError: null, resultReason: null, denials: new Map(), apiRetries: 0 };
  /** The run's own model turns: its assistant messages (ids) outside any sub-agent. */
  private readonly turnIds = new Set<string>();
  private readonly tools = new ToolCalls<PendingTool>(this.state);
  /** Agent/Task tool_use id → the parent_tool_use_id of its call (null: called by the run itself). */
  private readonly agentCalls = new Map<string, string | null>();
  /** Agent/Task tool_use id → the sub-agent's agentId (from task_started or tool_use_result). */
  private readonly agentOfTool = new Map<string, string>();
  /** The last text each child said in the stream (to avoid repeating its answer from tool_use_result). */
  private readonly childLastText = new Map<string, string>();
  private readonly usage = new UsageTally();
  /** The highest `result_index` seen (Claude 2.1.331 numbers a process's result lines): an earlier one never gives the answer. */
  private resultIndex = -1;
  /** Children announced by task_started (they run in the background). */
  private readonly announced = new Set<string>();
  /** Agent tool_use id → when its child first said something in the stream (it started then). */
  private readonly callsWithLines = new Map<string, string>();
  private readonly cli: CliName;
  /** Child transcript mode: every message belongs to this child. */
  private readonly fixedChildId: string | null;
  private readonly agentTools: ReadonlySet<string>;
  private readonly shellTools: ReadonlySet<string>;

  private readonly onMessage: ((m: Message) => void) | undefined;

  constructor(
    run: RunOptions,
    private readonly options: StreamJsonOptions,
  ) {
    this.onMessage = run.onMessage;
    this.cli = options.cli;
    this.fixedChildId = options.childId ?? null;
    this.agentTools = new Set(options.agentTools ?? ['Agent', 'Task']);
    this.shellTools = new Set(options.shellTools ?? ['Bash']);
  }

  private isAgentTool(name: string): boolean {
    return this.agentTools.has(name);
  }

  /** The run's usage so far; with `usageScope: 'session'`, a result's session figure less the earlier runs'. */
  private refreshUsage(): void {
    const usage = this.usage.usage();
    this.state.usage = usage && this.internal.results > 0 && this.options.usageScope === 'session' ? runUsage(usage, this.options.usageBefore) : usage;
  }

  private emit(m: Message): void {
    this.onMessage?.(m);
  }

  private childIdOf(parentToolUseId: unknown): string | undefined {
    if (this.fixedChildId) return this.fixedChildId;
    if (typeof parentToolUseId !== 'string' || !parentToolUseId) return undefined;
    if (!this.callsWithLines.has(parentToolUseId)) this.callsWithLines.set(parentToolUseId, nowIso());
    return this.agentOfTool.get(parentToolUseId) ?? parentToolUseId;
  }

  line(text: string): void {
    const o = eventOf(text, this.state);
    if (!o) return;
    this.state.lastActivityAt = nowIso();
    this.handle(o);
  }

  private handle(o: JsonObject): void {
    const sid = str(o.session_id) ?? str(o.sessionId);
    if (sid && !this.state.sessionId) this.state.sessionId = sid;
    switch (o.type) {
      case 'assistant':
        this.assistant(o);
        break;
      case 'user':
        this.user(o);
        break;
      case 'system':
        this.system(o);
        break;
      case 'result':
        this.result(o);
        break;
      case 'rate_limit_event':
        claudeRateLimit(this.state, o);
        break;
      default:
        // stream_event (--include-partial-messages), queue-operation, attachment, summary…
        break;
    }
  }

  private assistant(o: JsonObject): void {
    const message = obj(o.message);
    if (!message) return;
    const parent = str(o.parent_tool_use_id);
    const childId = this.childIdOf(parent);
    const id = str(message.id);
    if (id && message.usage !== undefined && !this.fixedChildId) {
      this.usage.message(id, message.usage);
      this.refreshUsage();
    }
    if (id && parent === null && !this.fixedChildId && !this.turnIds.has(id)) {
      this.turnIds.add(id);
      this.state.turns = this.turnIds.size;
    }
    const content = Array.isArray(message.content) ? message.content : typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : [];
    for (const b of content) {
      const block = obj(b);
      if (!block) continue;
      if (block.type === 'text' && typeof block.text === 'string') {
        if (!block.text.trim()) continue;
        this.emit(childId ? { role: 'assistant', text: block.text, childId } : { role: 'assistant', text: block.text });
        if (childId) this.childLastText.set(childId, block.text);
        else this.state.lastAssistantText = block.text;
      } else if (block.type === 'tool_use' || block.type === 'server_tool_use') {
        const toolId = this.tools.count(str(block.id));
        if (toolId === null) continue;
        const name = str(block.name) ?? 'tool';
        this.tools.open(toolId, { id: toolId, name, input: block.input, parentToolUseId: this.fixedChildId ? null : parent });
        if (this.isAgentTool(name) && !this.fixedChildId) {
          this.agentCalls.set(toolId, parent);
          const predicted = this.options.agentIdOfCall?.(toolId, block.input);
          if (predicted) this.agentOfTool.set(toolId, predicted);
        }
      }
    }
  }

  private user(o: JsonObject): void {
    const message = obj(o.message);
    if (!message) return;
    const parent = str(o.parent_tool_use_id);
    const childId = this.childIdOf(parent);
    const structured = o.tool_use_result ?? o.toolUseResult;
    if (typeof message.content === 'string') {
      // Transcripts store a typed prompt as a plain string; the stream never echoes the run's prompt.
      if (childId && message.content.trim() && o.isMeta !== true) this.emit({ role: 'user', text: message.content, childId });
      return;
    }
    if (!Array.isArray(message.content)) return;
    for (const b of message.content) {
      const block = obj(b);
      if (!block) continue;
      if (block.type === 'tool_result') {
        this.toolResult(block, structured);
      } else if (block.type === 'text' && typeof block.text === 'string') {
        // A child's prompt (lines with parent_tool_use_id). Top-level user text in the stream is Claude's
        // own note ("[Request interrupted by user for tool use]"), not something the user wrote: skipped.
        if (childId && block.text.trim() && o.isMeta !== true) this.emit({ role: 'user', text: block.text, childId });
      }
    }
  }

  private toolResult(block: JsonObject, structured: unknown): void {
    const toolId = str(block.tool_use_id) ?? '';
    const call = this.tools.close(toolId);
    const name = call?.name ?? 'tool';
    const agentCall = this.isAgentTool(name);
    // An Agent call's output is the child's answer, in Claude's hand-back frame in 2.1.331.
    const output = agentCall ? childAnswerText(contentText(block.content)) : contentText(block.content);
    const s = obj(structured);
    let status = block.is_error === true ? 'error' : s?.interrupted === true ? 'interrupted' : 'completed';
    if (call && agentCall && !s && this.options.agentIdOfCall && !this.fixedChildId) {
      this.agentResult(toolId, call, block.is_error === true, output);
    } else if (call && agentCall && !this.fixedChildId) {
      const agentId = str(s?.agentId);
      const direct = (this.agentCalls.get(toolId) ?? null) === null;
      if (s && typeof s.status === 'string' && block.is_error !== true) status = s.status;
      if (agentId) {
        this.agentOfTool.set(toolId, agentId);
        const cs = block.is_error === true ? 'failed' : (childStatus(s?.status) ?? 'done');
        if (direct) {
          const description = str(s?.description) ?? str(obj(call.input)?.description);
          this.upsertChild(agentId, { description, status: cs, ...(cs !== 'running' ? { finishedAt: nowIso() } : {}) });
        }
        // A foreground sub-agent's final answer reaches the stream only here.
        if (s?.status === 'completed')
          this.childAnswer(agentId, str(obj(s.handbackReport)?.text) ?? (Array.isArray(s.content) ? contentText(s.content) : null));
      } else if (block.is_error === true) {
        const known = this.agentOfTool.get(toolId);
        if (known && direct) this.upsertChild(known, { status: 'failed', finishedAt: nowIso() });
      }
    }
    this.emitTool(call ?? { id: toolId, name, input: undefined, parentToolUseId: null }, output, status);
  }

  /** A child's final answer from the parent's side (tool result, notification), unless the child's own lines said it already. */
  private childAnswer(childId: string, text: string | null): void {
    const answer = text === null ? '' : childAnswerText(text);
    if (!answer || this.childLastText.get(childId) === answer) return;
    this.childLastText.set(childId, answer);
    this.emit({ role: 'assistant', text: answer, childId });
  }

  /**
   * The result of an agent call without `tool_use_result` (`agentIdOfCall`): a foreground child ends
   * with it, and its text is the child's answer; a background child (announced) ends with its
   * task_notification. A call refused before its child said anything lists no child.
   */
  private agentResult(toolId: string, call: PendingTool, isError: boolean, output: string): void {
    const id = this.agentOfTool.get(toolId);
    if (!id || this.announced.has(id) || (this.agentCalls.get(toolId) ?? null) !== null) return;
    if (isError && !this.callsWithLines.has(toolId)) return;
    const startedAt = this.callsWithLines.get(toolId) ?? nowIso();
    this.upsertChild(id, { description: str(obj(call.input)?.description), status: isError ? 'failed' : 'done', startedAt, finishedAt: nowIso() });
    if (!isError) this.childAnswer(id, output);
  }

  private emitTool(call: PendingTool, output: string | null, status: string): void {
    const childId = this.fixedChildId ?? (call.parentToolUseId ? this.childIdOf(call.parentToolUseId) : undefined);
    const tool: ToolCall = {
      name: call.name,
      input: toolInputSummary(call.name, call.input, this.shellTools.has(call.name) ? 'shell' : this.isAgentTool(call.name) ? 'agent' : null),
      output: output === null ? null : capCounted(output, OUTPUT_MAX),
      status,
    };
    const m: Message = { role: 'tool', text: toolHeadline(call.name, call.input), tool };
    if (childId) m.childId = childId;
    this.emit(m);
  }

  private system(event: JsonObject): void {
    // Qwen Code nests a task event's fields in `data`.
    const o = event.task_id === undefined && obj(event.data) ? { ...event, ...obj(event.data) } : event;
    const sub = o.subtype;
    if (sub === 'api_retry') {
      this.internal.apiRetries++;
      return;
    }
    if (this.fixedChildId) return;
    const taskId = str(o.task_id);
    if (!taskId) return;
    if (sub === 'task_started') {
      const toolId = str(o.tool_use_id);
      const isAgent = (toolId !== null && this.agentCalls.has(toolId)) || o.task_type === 'local_agent' || typeof o.subagent_type === 'string';
      if (!isAgent) return;
      if (toolId) this.agentOfTool.set(toolId, taskId);
      this.announced.add(taskId);
      const direct = toolId === null || (this.agentCalls.get(toolId) ?? null) === null;
      if (!direct) return;
      const description = str(o.description) ?? (toolId ? str(obj(this.tools.get(toolId)?.input)?.description) : null);
      this.upsertChild(taskId, { description, status: 'running', startedAt: nowIso() });
    } else if (sub === 'task_updated' || sub === 'task_notification') {
      if (!this.state.children.some((c) => c.id === taskId)) return;
      // A background child's report (2.1.331): `handback_report`, else `summary` when it says it is the
      // report (otherwise it can be a description or an interim text). A later one replaces it.
      if (sub === 'task_notification') this.childAnswer(taskId, str(obj(o.handback_report)?.text) ?? (o.summary_is_report === true ? str(o.summary) : null));
      const status = childStatus(sub === 'task_updated' ? obj(o.patch)?.status : o.status);
      if (!status) return;
      const end = sub === 'task_updated' ? isoOf(obj(o.patch)?.end_time) : null;
      this.upsertChild(taskId, { status, ...(status !== 'running' ? { finishedAt: end ?? nowIso() } : {}) });
    }
  }

  private upsertChild(id: string, patch: Partial<ChildAgent>): void {
    upsertChild(this.state, id, (known) => {
      const before: ChildAgent = known ?? {
        id,
        cli: this.cli,
        description: null,
        status: 'running',
        statusSource: 'stream',
        startedAt: nowIso(),
        finishedAt: null,
      };
      const next: ChildAgent = { ...before, statusSource: 'stream' };
      if (patch.description && !next.description) next.description = patch.description;
      if (patch.status) next.status = patch.status;
      if (patch.startedAt && !known) next.startedAt = patch.startedAt;
      // An earlier end (task_updated's end_time) is more exact than a later sighting.
      if (patch.finishedAt && (next.finishedAt === null || next.status === 'running')) next.finishedAt = patch.finishedAt;
      if (next.status === 'running') next.finishedAt = null;
      return next;
    });
  }

  private result(o: JsonObject): void {
    if (this.fixedChildId) return;
    this.internal.results++;
    if (o.is_error === true && this.internal.resultError === null) {
      this.internal.resultError = resultError(o, this.cli);
      this.internal.resultReason = resultReason(o);
    }
    this.state.fatalError = this.internal.resultError;
    for (const d of Array.isArray(o.permission_denials) ? o.permission_denials : []) {
      const denial = obj(d);
      if (!denial) continue;
      const name = str(denial.tool_name) ?? 'tool';
      const key = str(denial.tool_use_id) ?? `#${this.internal.denials.size}`;
      if (!this.internal.denials.has(key)) this.internal.denials.set(key, toolHeadline(name, denial.tool_input));
    }
    const index = typeof o.result_index === 'number' ? o.result_index : null;
    if (index === null || index >= this.resultIndex) {
      // The last turn's answer: with background sub-agents, the turn after they reported.
      const text = str(o.result);
      if (text !== null && o.is_error !== true) this.state.lastAssistantText = text;
      else if (text?.trim() && this.state.lastAssistantText === null) this.state.lastAssistantText = text;
    }
    if (index !== null) this.resultIndex = Math.max(this.resultIndex, index);
    this.usage.result(o);
    this.refreshUsage();
    // The turn is over: a call of the run itself that got no result never will.
    for (const call of this.tools.drain((c) => c.parentToolUseId === null)) this.emitTool(call, null, 'incomplete');
  }

  /** End of the stream: tool calls that never got a result are still part of the transcript. */
  end(): void {
    for (const call of this.tools.drain()) this.emitTool(call, null, 'incomplete');
  }

  /**
   * How the run ended: the CLI's own verdict (`result.is_error`) first, then the exit status; a run that
   * never reported a result failed (`crashed`), and so did one whose tool calls the CLI refused for want
   * of permission (`permission-denied`: headless, nobody can grant them, so the task is not done whatever
   * the model answered). Children still running take the run's end.
   */
  verdict(exit: Exit): Verdict {
    const { state, internal, cli } = this;
    const sawResult = internal.results > 0;
    const failed = exit.signal !== null || exit.code !== 0 || state.fatalError !== null || !sawResult;
    // Children that never reported an end take the run's end.
    const now = nowIso();
    if (state.children.some((c) => c.status === 'running')) {
      state.children = state.children.map((c) =>
        c.status === 'running' ? { ...c, status: failed ? 'failed' : 'done', statusSource: 'inferred', finishedAt: now } : c,
      );
    }
    // (The core appends the last line of stderr to a failure that has no fatalError: "--agent 'x' not found"…)
    if (state.fatalError) return { outcome: 'failed', error: state.fatalError, reason: internal.resultReason ?? 'unknown' };
    const why = sawResult ? '' : ' before reporting a result';
    if (exit.signal) return { outcome: 'failed', error: `${cli} was killed by ${exit.signal}${why}`, reason: 'crashed' };
    if (exit.code !== 0) return { outcome: 'failed', error: `${cli} exited with status ${exit.code}${why}`, reason: 'crashed' };
    if (!sawResult)
      return { outcome: 'failed', error: `${cli} exited with status 0 without reporting a result (interrupted, or not a stream-json run)`, reason: 'crashed' };
    if (internal.denials.size > 0) return { outcome: 'failed', error: denialsError(cli, internal.denials), reason: 'permission-denied' };
    return { outcome: 'succeeded', error: null, reason: null };
  }
}
