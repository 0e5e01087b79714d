import type { ChildAgent, Usage } from '../../registry/record.js';
import { isoOf, nowIso } from '../../base/time.js';
import { fields, num, shortLine, str } from '../../base/json.js';
import type { Message, StreamParser, StreamState, Verdict, VerdictReason } from '../types.js';
import { apiErrorReason } from '../../base/api-error.js';
import { emptyState, eventOf } from '../types.js';
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
 * What the opencode stream says beyond StreamState, kept per parser state (the verdict needs it).
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

const extras = new WeakMap<StreamState, OpencodeExtra>();

/** The opencode-specific facts a parser has gathered (undefined for a state no opencode parser made). */
export function opencodeExtra(state: StreamState): OpencodeExtra | undefined {
  return extras.get(state);
}

const REJECTED = /rejected permission/i;

export function parseOpencode(onMessage?: (m: Message) => void): StreamParser {
  const state = emptyState();
  const extra: OpencodeExtra = { lastStepReason: null, steps: 0, textParts: 0, rejectedTools: [], lastTextMessageId: null, errorReason: null };
  extras.set(state, extra);
  let costSeen = false;

  const addUsage = (part: Record<string, unknown>): void => {
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
    if (typeof part.cost === 'number' && Number.isFinite(part.cost)) costSeen = true;
    state.usage = {
      inputTokens: u.inputTokens + input,
      outputTokens: u.outputTokens + output,
      cacheReadTokens: u.cacheReadTokens + read,
      cacheWriteTokens: u.cacheWriteTokens + write,
      reasoningTokens: u.reasoningTokens + reasoning,
      totalTokens: u.totalTokens + total,
      costUsd: costSeen ? (u.costUsd ?? 0) + num(part.cost) : null,
    };
  };

  const addChild = (tp: ToolPart): void => {
    const id = taskChildId(tp.state);
    if (!id) return;
    const input = fields(tp.state.input);
    const time = fields(tp.state.time);
    const status: ChildAgent['status'] =
      tp.call.status === 'completed'
        ? 'done'
        : tp.call.status === 'error'
          ? 'failed'
          : tp.call.status === 'running' || tp.call.status === 'pending'
            ? 'running'
            : 'unknown';
    const child: ChildAgent = {
      id,
      cli: 'opencode',
      description: str(input.description) ?? str(tp.state.title),
      status,
      statusSource: 'stream',
      startedAt: isoOf(time.start),
      finishedAt: status === 'running' ? null : isoOf(time.end),
    };
    const at = state.children.findIndex((c) => c.id === id);
    if (at === -1) state.children = [...state.children, child];
    else state.children = state.children.map((c, i) => (i === at ? child : c));
  };

  return {
    state,
    line(text: string) {
      const ev = eventOf(text, state);
      if (!ev) return;
      state.lastActivityAt = isoOf(ev.timestamp) ?? nowIso();
      if (state.sessionId === null) state.sessionId = str(ev.sessionID);
      const part = fields(ev.part);
      switch (ev.type) {
        case 'text': {
          const t = str(part.text);
          if (t === null) break;
          extra.textParts++;
          const mid = str(part.messageID);
          // The answer is the last assistant message's text; several text parts of one message join.
          state.lastAssistantText =
            mid !== null && mid === extra.lastTextMessageId && state.lastAssistantText !== null ? `${state.lastAssistantText}\n\n${t}` : t;
          extra.lastTextMessageId = mid;
          onMessage?.({ role: 'assistant', text: t });
          break;
        }
        case 'tool_use': {
          state.toolUses++;
          const tp = toolPart(part);
          if (tp.call.status === 'error' && REJECTED.test(tp.call.output ?? '') && extra.rejectedTools.length < 10) extra.rejectedTools.push(tp.text);
          onMessage?.({ role: 'tool', text: tp.text, tool: tp.call });
          if (tp.tool === 'task') {
            addChild(tp);
            const id = taskChildId(tp.state);
            const out = str(tp.state.output);
            // The child's final answer is the one word of the child the stream carries.
            if (id && out !== null && tp.call.status === 'completed') {
              const answer = taskResult(out);
              if (answer) onMessage?.({ role: 'assistant', text: answer, childId: id });
            }
          }
          break;
        }
        case 'step_start':
          // A step is one model request and the tools it asked for: OpenCode's turn.
          extra.steps++;
          state.turns = extra.steps;
          break;
        case 'step_finish':
          extra.lastStepReason = str(part.reason);
          addUsage(part);
          break;
        case 'error': {
          const err = fields(ev.error);
          const data = fields(err.data);
          const name = str(err.name) ?? 'Error';
          const message = str(data.message) ?? str(err.message) ?? JSON.stringify(err).slice(0, 300);
          const status = typeof data.statusCode === 'number' ? ` (HTTP ${data.statusCode})` : '';
          state.fatalError = shortLine(`${name}: ${message}${status}`, 500);
          extra.errorReason = errorReason(name, typeof data.statusCode === 'number' ? data.statusCode : null, message);
          break;
        }
        default:
          // reasoning (with --thinking) and future event types: not part of the transcript.
          break;
      }
    },
  };
}

/** The reason of an `error` event: its name (`ProviderAuthError`, `APIError`, `MessageAbortedError`…), status and words. */
function errorReason(name: string, status: number | null, message: string): VerdictReason {
  if (name === 'ProviderAuthError') return 'auth';
  if (name === 'MessageAbortedError') return 'crashed';
  return apiErrorReason(status, message) ?? (name === 'APIError' ? 'api-error' : 'unknown');
}

export function opencodeVerdict(exit: { code: number | null; signal: string | null }, state: StreamState): Verdict {
  const extra = extras.get(state);
  if (state.fatalError) return { outcome: 'failed', error: state.fatalError, reason: extra?.errorReason ?? 'unknown' };
  if (exit.signal) return { outcome: 'failed', error: `opencode was killed by ${exit.signal}`, reason: 'crashed' };
  if (exit.code !== 0)
    return {
      outcome: 'failed',
      error: `opencode exited with status ${exit.code}${state.sessionId === null ? ' before opening a session' : ''}`,
      reason: 'crashed',
    };
  if (!extra) return { outcome: 'succeeded', error: null, reason: null };
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
