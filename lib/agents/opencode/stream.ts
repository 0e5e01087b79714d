import type { ChildAgent, Usage } from '../../registry/record.js';
import { isoOf, nowIso } from '../../base/time.js';
import { fields, num, shortLine, str } from '../../base/json.js';
import type { AgentRun, Exit, Message, RunOptions, StreamState, Verdict, VerdictReason } from '../types.js';
import { apiErrorReason } from '../../base/api-error.js';
import { upsertChild } from '../shared/children.js';
import { isoAfter, retryAfterSeconds } from '../shared/limits.js';
import { emptyState, eventOf } from '../shared/stream.js';
import { taskChildId, taskResult, toolPart, type ToolPart } from './parts.js';

/**
 * OpenCode's `--format json` stream (measured with 1.18.33; see docs/agents/opencode.md): one JSON event
 * per line, `{type, timestamp, sessionID, part|error}` with types `step_start`, `text` (one per finished
 * text part), `reasoning` (only with --thinking), `tool_use` (only once the tool has finished),
 * `step_finish` (`reason`, `tokens`, `cost`) and `error`. The session id is on every line, the first one
 * included. A sub-agent is the `task` tool: its tool_use carries the child session in
 * `state.metadata.sessionId`; the child's own work is not streamed, only its final answer inside the
 * task output (store.ts reads the rest).
 */

/**
 * What the opencode stream says beyond StreamState (the verdict needs it).
 * `lastStepReason`: the `reason` of the last step_finish ("stop", "tool-calls", "length"…), null when no
 * step finished. `rejectedTools`: tool calls the CLI refused because a permission ask was auto-rejected.
 */
export interface OpencodeExtra {
  lastStepReason: string | null;
  steps: number;
  textParts: number;
  rejectedTools: string[];
  /** The message id of the last text part (texts of one message make one answer). */
  lastTextMessageId: string | null;
  /** The reason of the last `error` event (its name, its HTTP status, its words), null when none came. */
  errorReason: VerdictReason | null;
}

const REJECTED = /rejected permission/i;

/** One OpenCode run's `--format json` stream, and its verdict. */
export class OpencodeRun implements AgentRun {
  readonly state: StreamState = emptyState();
  /** What the stream said beyond `state`. */
  readonly extra: OpencodeExtra = { lastStepReason: null, steps: 0, textParts: 0, rejectedTools: [], lastTextMessageId: null, errorReason: null };
  private costSeen = false;
  private readonly onMessage: ((m: Message) => void) | undefined;

  constructor(run: RunOptions = {}) {
    this.onMessage = run.onMessage;
  }

  line(text: string): void {
    const { state, extra } = this;
    const ev = eventOf(text, state);
    if (!ev) return;
    state.lastActivityAt = isoOf(ev.timestamp) ?? nowIso();
    if (state.sessionId === null) state.sessionId = str(ev.sessionID);
    const part = fields(ev.part);
    switch (ev.type) {
      case 'text':
        this.text(part);
        break;
      case 'tool_use':
        this.toolUse(part);
        break;
      case 'step_start':
        // A step is one model request and the tools it asked for: OpenCode's turn.
        extra.steps++;
        state.turns = extra.steps;
        break;
      case 'step_finish':
        extra.lastStepReason = str(part.reason);
        this.addUsage(part);
        break;
      case 'error':
        this.error(fields(ev.error), ev.timestamp);
        break;
      default:
        // reasoning (with --thinking) and future event types: not part of the transcript.
        break;
    }
  }

  /** Nothing is pending at the end: a tool_use comes once its tool has finished. */
  end(): void {}

  private text(part: Record<string, unknown>): void {
    const t = str(part.text);
    if (t === null) return;
    const { state, extra } = this;
    extra.textParts++;
    const mid = str(part.messageID);
    // The answer is the last assistant message's text; several text parts of one message join.
    state.lastAssistantText = mid !== null && mid === extra.lastTextMessageId && state.lastAssistantText !== null ? `${state.lastAssistantText}\n\n${t}` : t;
    extra.lastTextMessageId = mid;
    this.onMessage?.({ role: 'assistant', text: t });
  }

  private toolUse(part: Record<string, unknown>): void {
    this.state.toolUses++;
    const tp = toolPart(part);
    if (tp.call.status === 'error' && REJECTED.test(tp.call.output ?? '') && this.extra.rejectedTools.length < 10) this.extra.rejectedTools.push(tp.text);
    this.onMessage?.({ role: 'tool', text: tp.text, tool: tp.call });
    if (tp.tool !== 'task') return;
    this.addChild(tp);
    const id = taskChildId(tp.state);
    const out = str(tp.state.output);
    // The child's final answer is the one word of the child the stream carries.
    if (id && out !== null && tp.call.status === 'completed') {
      const answer = taskResult(out);
      if (answer) this.onMessage?.({ role: 'assistant', text: answer, childId: id });
    }
  }

  /** An error event; `at` its time (epoch ms), from which a `Retry-After` it carries counts. */
  private error(err: Record<string, unknown>, at: unknown): void {
    const data = fields(err.data);
    // The provider's answer's headers ride along: the wait it asked for is when its limit resets.
    const time = typeof at === 'number' ? at : Date.now();
    this.state.resetsAt = isoAfter(time, retryAfterSeconds(fields(data.responseHeaders), time));
    const name = str(err.name) ?? 'Error';
    const message = str(data.message) ?? str(err.message) ?? JSON.stringify(err).slice(0, 300);
    const status = typeof data.statusCode === 'number' ? ` (HTTP ${data.statusCode})` : '';
    this.state.fatalError = shortLine(`${name}: ${message}${status}`, 500);
    this.extra.errorReason = errorReason(name, typeof data.statusCode === 'number' ? data.statusCode : null, message);
  }

  private addUsage(part: Record<string, unknown>): void {
    const { state } = this;
    const t = fields(part.tokens);
    const cache = fields(t.cache);
    const u: Usage = state.usage ?? {
      inputTokens: 0,
      outputTokens: 0,
      cacheReadTokens: 0,
      cacheWriteTokens: 0,
      reasoningTokens: 0,
      totalTokens: 0,
      costUsd: null,
    };
    const input = num(t.input);
    const output = num(t.output);
    const reasoning = num(t.reasoning);
    const read = num(cache.read);
    const write = num(cache.write);
    const total = typeof t.total === 'number' && Number.isFinite(t.total) ? t.total : input + output + reasoning + read + write;
    if (typeof part.cost === 'number' && Number.isFinite(part.cost)) this.costSeen = true;
    state.usage = {
      inputTokens: u.inputTokens + input,
      outputTokens: u.outputTokens + output,
      cacheReadTokens: u.cacheReadTokens + read,
      cacheWriteTokens: u.cacheWriteTokens + write,
      reasoningTokens: u.reasoningTokens + reasoning,
      totalTokens: u.totalTokens + total,
      costUsd: this.costSeen ? (u.costUsd ?? 0) + num(part.cost) : null,
    };
  }

  private addChild(tp: ToolPart): void {
    const id = taskChildId(tp.state);
    if (!id) return;
    const input = fields(tp.state.input);
    const time = fields(tp.state.time);
    const status = childStatus(tp.call.status);
    upsertChild(this.state, id, () => ({
      id,
      cli: 'opencode',
      description: str(input.description) ?? str(tp.state.title),
      status,
      statusSource: 'stream',
      startedAt: isoOf(time.start),
      finishedAt: status === 'running' ? null : isoOf(time.end),
    }));
  }

  verdict(exit: Exit): Verdict {
    return verdictOf(exit, this.state, this.extra);
  }
}

/** A task call's status as its child's. */
function childStatus(callStatus: string | null): ChildAgent['status'] {
  switch (callStatus) {
    case 'completed':
      return 'done';
    case 'error':
      return 'failed';
    case 'running':
    case 'pending':
      return 'running';
    default:
      return 'unknown';
  }
}

/** The reason of an `error` event: its name (`ProviderAuthError`, `APIError`, `MessageAbortedError`…), status and words. */
function errorReason(name: string, status: number | null, message: string): VerdictReason {
  if (name === 'ProviderAuthError') return 'auth';
  if (name === 'MessageAbortedError') return 'crashed';
  return apiErrorReason(status, message) ?? (name === 'APIError' ? 'api-error' : 'unknown');
}

function verdictOf(exit: Exit, state: StreamState, extra: OpencodeExtra): Verdict {
  if (state.fatalError) return { outcome: 'failed', error: state.fatalError, reason: extra?.errorReason ?? 'unknown' };
  if (exit.signal) return { outcome: 'failed', error: `opencode was killed by ${exit.signal}`, reason: 'crashed' };
  if (exit.code !== 0)
    return {
      outcome: 'failed',
      error: `opencode exited with status ${exit.code}${state.sessionId === null ? ' before opening a session' : ''}`,
      reason: 'crashed',
    };
  if (extra.steps === 0 && extra.textParts === 0 && state.toolUses === 0) {
    return { outcome: 'failed', error: 'opencode exited 0 without any event (no answer)', reason: 'crashed' };
  }
  const reason = extra.lastStepReason;
  if (reason === 'tool-calls' || reason === null) {
    const step = `its last step ${reason === null ? 'never finished' : 'ended asking for tools'}`;
    const error = extra.rejectedTools.length
      ? `opencode stopped without a final answer: a permission ask was auto-rejected (${shortLine(extra.rejectedTools.join('; '), 200)}); ${step} (allow the tool in the opencode config, or pass -- --auto)`
      : `opencode stopped without a final answer: ${step}`;
    return { outcome: 'failed', error, reason: extra.rejectedTools.length ? 'permission-denied' : 'crashed' };
  }
  if (reason === 'length' || reason === 'content-filter' || reason === 'error') {
    return { outcome: 'failed', error: `opencode's last step ended with reason "${reason}"`, reason: reason === 'error' ? 'api-error' : 'unknown' };
  }
  return { outcome: 'succeeded', error: null, reason: null };
}
