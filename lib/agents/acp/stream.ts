import { apiErrorReason } from '../../base/api-error.js';
import { capCounted, fields, isObject, num, obj, parseObject, str, type JsonObject } from '../../base/json.js';
import { rpcMessage, type RpcId } from '../../base/jsonrpc.js';
import { nowIso } from '../../base/time.js';
import type { Usage } from '../../registry/record.js';
import { addUsage, emptyState } from '../shared/stream.js';
import { denialsError, INPUT_MAX, OUTPUT_MAX, ToolCalls, toolHeadline, toolInputSummary } from '../shared/tools.js';
import type { AgentRun, Exit, Message, RunOptions, StreamState, Verdict } from '../types.js';
import { CLIENT_ERROR, CLIENT_KEY } from './log.js';

/**
 * A run of `--cli acp` read from its event log (docs/agents/acp.md): the lines the agent sent, verbatim,
 * and the client's own (the supervisor's driver, lib/agents/acp/client.ts), each wrapped as
 * `{"client": message}`. The agent's answers are told apart by the request of ours they answer; what a
 * `session/load` replays of the session's past is not this run's.
 */

/** A tool call as its updates built it up. */
interface Call {
  id: string;
  title: string;
  kind: string | null;
  status: string | null;
  /** The agent's `rawInput`, as it gave it. */
  input: unknown;
  output: string | null;
}

/** A permission request of the agent, until the client's answer. */
interface Asked {
  label: string;
  options: Map<string, string>;
}

const DONE = new Set(['completed', 'failed']);

export class AcpRun implements AgentRun {
  readonly state: StreamState = emptyState();
  /** The agent's `stopReason` of this run's prompt, once it answered; null before, or when it failed. */
  stopReason: string | null = null;
  /** Permission requests the policy refused, by request id: what each was for. */
  readonly denials = new Map<string, string>();
  /** Permission requests and how each was answered (recorded: docs/agents/acp.md). */
  permissions = 0;
  private readonly onMessage: ((m: Message) => void) | undefined;
  private readonly before: Usage | null;
  /** Our requests by id, to tell what the agent's answers answer. */
  private readonly ours = new Map<RpcId, string>();
  private readonly asked = new Map<RpcId, Asked>();
  private readonly calls: ToolCalls<Call>;
  /** While a `session/load` replays the session's past: none of it is this run's. */
  private replaying = false;
  private text = '';
  private cost: number | null = null;
  /** The HTTP status an error answer carried as its code (Gemini's), for the verdict's reason. */
  private httpStatus: number | null = null;
  /** The last chunk of the turn's words, and whether the turn reported a usage (see `saidError`). */
  private lastChunk: string | null = null;
  private turnUsage = false;

  constructor(run: RunOptions = {}) {
    this.onMessage = run.onMessage;
    this.before = run.threadUsageBefore ?? null;
    this.calls = new ToolCalls<Call>(this.state);
  }

  line(text: string): void {
    if (text.trim() === '') return;
    const o = parseObject(text);
    const own = o && obj(o[CLIENT_KEY]);
    const m = own ?? o;
    const message = m && rpcMessage(m);
    if (!message) {
      this.state.skippedLines++;
      return;
    }
    this.state.lastActivityAt = nowIso();
    if (own) this.client(message);
    else this.agent(message);
  }

  /** A message the client sent: a request of ours, or its answer to one of the agent's. */
  private client(m: NonNullable<ReturnType<typeof rpcMessage>>): void {
    if (m.kind === 'answer') {
      this.answered(m.id, m.result);
      return;
    }
    if (m.method === CLIENT_ERROR) this.state.fatalError ??= str(m.params.message) ?? 'the client failed the run';
    const sessionId = str(m.params.sessionId);
    if (m.method === 'session/load' || m.method === 'session/resume') {
      this.state.sessionId ??= sessionId;
      this.replaying = m.method === 'session/load';
    }
    if (m.kind === 'request') this.ours.set(m.id, m.method);
  }

  /** The client's answer to a permission request: refused when it selected a `reject_*` option, or cancelled it. */
  private answered(id: RpcId, result: unknown): void {
    const asked = this.asked.get(id);
    if (!asked) return;
    this.asked.delete(id);
    this.permissions++;
    const outcome = fields(fields(result).outcome);
    const kind = outcome.outcome === 'selected' ? (asked.options.get(String(outcome.optionId)) ?? '') : 'cancelled';
    if (!kind.startsWith('allow')) this.denials.set(String(id), asked.label);
  }

  private agent(m: NonNullable<ReturnType<typeof rpcMessage>>): void {
    if (m.kind === 'answer') {
      const method = this.ours.get(m.id);
      this.ours.delete(m.id);
      if (method) this.answer(method, m.result, m.error);
      return;
    }
    if (m.method === 'session/update') {
      this.update(fields(m.params.update));
      return;
    }
    if (m.kind === 'request' && m.method === 'session/request_permission') {
      const call = fields(m.params.toolCall);
      const options = new Map<string, string>();
      for (const o of Array.isArray(m.params.options) ? m.params.options : []) {
        const f = fields(o);
        if (typeof f.optionId === 'string') options.set(f.optionId, str(f.kind) ?? '');
      }
      const known = this.calls.get(String(call.toolCallId));
      this.asked.set(m.id, { label: capCounted(str(call.title) ?? known?.title ?? str(call.toolCallId) ?? 'a tool call', INPUT_MAX), options });
    }
  }

  /** The agent's answer to a request of ours. */
  private answer(method: string, result: unknown, error: { code: number; message: string; data?: unknown } | null): void {
    if (error) {
      if (method === 'session/load' || method === 'session/resume') this.replaying = false;
      if (this.state.fatalError === null) this.state.fatalError = capCounted(`${method}: ${errorWords(error)}`, 1000);
      // JSON-RPC's own codes are negative: a code from 400 to 599 is the model API's HTTP status.
      if (error.code >= 400 && error.code < 600) this.httpStatus ??= error.code;
      return;
    }
    const r = fields(result);
    if (method === 'session/new') this.state.sessionId ??= str(r.sessionId);
    if (method === 'session/load' || method === 'session/resume') this.replaying = false;
    if (method === 'session/prompt') {
      this.flush();
      this.stopReason = str(r.stopReason);
      const usage = usageOf(r);
      if (usage) this.state.usage = { ...usage, costUsd: this.cost };
      this.turnUsage ||= usage !== null;
    }
  }

  private update(u: JsonObject): void {
    if (this.replaying) return;
    const kind = str(u.sessionUpdate);
    if (kind === 'agent_message_chunk') {
      const content = fields(u.content);
      if (content.type === 'text' && typeof content.text === 'string') {
        this.text += content.text;
        if (content.text !== '') this.lastChunk = content.text;
      }
      // Qwen Code's: each model response's usage on a chunk of its own, as the run goes.
      const usage = obj(fields(u._meta).usage);
      if (usage) this.state.usage = { ...addUsage(this.state.usage, acpUsage(usage))!, costUsd: this.cost };
      this.turnUsage ||= usage !== null;
      return;
    }
    if (kind === 'tool_call' || kind === 'tool_call_update') {
      this.tool(u, kind === 'tool_call');
      return;
    }
    if (kind === 'usage_update') {
      const cost = fields(u.cost);
      // The session's cost so far (OpenCode's); this run's is what it grew by since the session's earlier runs.
      if (typeof cost.amount === 'number' && (cost.currency === undefined || cost.currency === 'USD')) {
        this.cost = Math.max(0, cost.amount - (this.before?.costUsd ?? 0));
        this.state.usage = { ...(this.state.usage ?? zeroUsage()), costUsd: this.cost };
      }
    }
  }

  private tool(u: JsonObject, first: boolean): void {
    const id = str(u.toolCallId);
    if (!id) return;
    this.flush();
    let call = this.calls.get(id);
    if (!call) {
      if (!first && this.calls.count(id) === null) return; // an update of a call already ended
      if (first) this.calls.count(id);
      call = { id, title: '', kind: null, status: null, input: null, output: null };
      this.calls.open(id, call);
    }
    if (typeof u.title === 'string') call.title = u.title;
    if (typeof u.kind === 'string') call.kind = u.kind;
    if (typeof u.status === 'string') call.status = u.status;
    // An empty input (Qwen's first `tool_call`, before its arguments are known) says nothing yet.
    if (u.rawInput !== undefined && u.rawInput !== null && !(isObject(u.rawInput) && Object.keys(u.rawInput).length === 0)) call.input = u.rawInput;
    const out = outputOf(u);
    if (out !== null) call.output = capCounted(out, OUTPUT_MAX);
    if (call.status && DONE.has(call.status)) this.emitTool(this.calls.close(id)!);
  }

  /** A call in the transcript, named by its ACP kind: headed by what its input says (a command, a path…) where the agent gives it, else by its title. */
  private emitTool(call: Call): void {
    const name = call.kind ?? 'tool';
    const byInput = call.input === null ? name : toolHeadline(name, call.input);
    const headline = byInput !== name ? byInput : call.title ? toolHeadline(name, { description: call.title }) : name;
    const input = call.input === null ? call.title || null : toolInputSummary(name, call.input, name === 'execute' ? 'shell' : null);
    this.onMessage?.({ role: 'tool', text: headline, tool: { name, input, output: call.output, status: call.status } });
  }

  /**
   * An agent that ends a failed turn as a normal one, saying the failure as its last message (Copilot CLI
   * 1.0.102: "Error: Failed to get response from the AI model; … Last error: 500 …", then `end_turn`): a
   * last chunk of words that starts with `Error:` in a turn that reported no usage (the model never answered).
   * Null otherwise.
   */
  private saidError(): string | null {
    if (this.turnUsage || this.lastChunk === null || !/^Error: /.test(this.lastChunk)) return null;
    return capCounted(this.lastChunk, 1000);
  }

  /** The assistant's words so far, as one message. */
  private flush(): void {
    if (this.text === '') return;
    this.state.lastAssistantText = this.text;
    this.onMessage?.({ role: 'assistant', text: this.text });
    this.text = '';
  }

  end(): void {
    this.flush();
    for (const call of this.calls.drain()) this.emitTool({ ...call, status: call.status && DONE.has(call.status) ? call.status : 'incomplete' });
  }

  verdict(exit: Exit): Verdict {
    if (this.denials.size > 0) return { outcome: 'failed', error: denialsError('acp', this.denials), reason: 'permission-denied' };
    const stop = this.stopReason;
    const said = this.saidError();
    if (stop === 'end_turn' && said) return { outcome: 'failed', error: said, reason: apiErrorReason(null, said) ?? 'unknown' };
    if (stop === 'end_turn') return { outcome: 'succeeded', error: null, reason: null };
    if (stop === 'max_turn_requests')
      return { outcome: 'failed', error: 'the agent reached its limit of model requests in one turn (max_turn_requests)', reason: 'max-turns' };
    if (stop !== null) return { outcome: 'failed', error: `the agent ended its turn with stopReason "${stop}"`, reason: 'unknown' };
    if (this.state.fatalError)
      return { outcome: 'failed', error: this.state.fatalError, reason: apiErrorReason(this.httpStatus, this.state.fatalError) ?? 'unknown' };
    const how = exit.signal ? `was killed by ${exit.signal}` : `exited with status ${exit.code}`;
    return { outcome: 'failed', error: `the agent ${how} before its turn ended`, reason: 'crashed' };
  }
}

/** An error answer in words: its message, and what its data says (an HTTP status, details). */
function errorWords(error: { code: number; message: string; data?: unknown }): string {
  // Gemini's: the API's error body as the message.
  const api = obj(parseObject(error.message)?.error);
  if (api && typeof api.message === 'string')
    return `${api.message} (HTTP ${num(api.code) || error.code}${typeof api.status === 'string' ? ` ${api.status}` : ''})`;
  const data = error.data;
  const extra = typeof data === 'string' ? data : isObject(data) ? (str(data.details) ?? str(data.message) ?? JSON.stringify(data)) : null;
  return extra && extra !== error.message ? `${error.message} (${extra})` : error.message;
}

/** What a tool call's update says it gave back: its text content, else its raw output. */
function outputOf(u: JsonObject): string | null {
  const texts: string[] = [];
  for (const c of Array.isArray(u.content) ? u.content : []) {
    const inner = fields(fields(c).content);
    if (inner.type === 'text' && typeof inner.text === 'string') texts.push(inner.text);
  }
  if (texts.length > 0) return texts.join('\n');
  if (u.rawOutput === undefined || u.rawOutput === null) return null;
  return typeof u.rawOutput === 'string' ? u.rawOutput : JSON.stringify(u.rawOutput);
}

/** ACP's usage object (inputTokens, outputTokens, thoughtTokens, cachedReadTokens, cachedWriteTokens, totalTokens) as ours. */
function acpUsage(u: JsonObject): Usage {
  const usage = {
    inputTokens: num(u.inputTokens),
    outputTokens: num(u.outputTokens),
    cacheReadTokens: num(u.cachedReadTokens),
    cacheWriteTokens: num(u.cachedWriteTokens),
    reasoningTokens: num(u.thoughtTokens),
    totalTokens: 0,
    costUsd: null,
  };
  usage.totalTokens = num(u.totalTokens) || usage.inputTokens + usage.outputTokens + usage.cacheReadTokens + usage.cacheWriteTokens + usage.reasoningTokens;
  return usage;
}

function zeroUsage(): Usage {
  return { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0, totalTokens: 0, costUsd: null };
}

/**
 * The turn's usage in a prompt's answer: ACP's `usage` (its session-usage proposal: inputTokens,
 * outputTokens, thoughtTokens, cachedReadTokens, cachedWriteTokens, totalTokens), else the Gemini CLI's
 * `_meta.quota.token_count`; null when it gives neither.
 */
export function usageOf(result: JsonObject): Usage | null {
  const u = obj(result.usage);
  if (u) return acpUsage(u);
  const t = obj(fields(fields(result._meta).quota).token_count);
  if (t) {
    const input = num(t.input_tokens);
    const output = num(t.output_tokens);
    return { ...zeroUsage(), inputTokens: input, outputTokens: output, totalTokens: input + output };
  }
  return null;
}
