import type { ChildAgent, Usage } from '../../registry/record.js';
import { nowIso } from '../../base/time.js';
import { fields, num, parseObject, str, type JsonObject } from '../../base/json.js';
import type { AgentRun, Exit, Message, RunOptions, SessionQuery, StoreUsage, StreamState, Verdict } from '../types.js';
import { apiErrorReason } from '../../base/api-error.js';
import { endChild, inferChildren, runningChild } from '../shared/children.js';
import { emptyState, eventOf, runUsage } from '../shared/stream.js';
import { ToolCalls } from '../shared/tools.js';
import { agentState, contentText, itemOf, NOT_TOOLS, toolMessage, type Item } from './items.js';
import { isoOfEpochSeconds } from '../shared/limits.js';

/** Receives each rate-limit snapshot the rollout gains (a `token_count` event's `rate_limits`; lib/agents/codex/usage.ts reads them). */
export type LimitsSeen = (limits: JsonObject) => void;

/**
 * Codex's `--json` stream (OpenAI Codex 0.169; docs/agents/codex.md): one JSON event per line,
 * `thread.started {thread_id}` first, `item.started|completed`, then `turn.completed {usage}` or
 * `turn.failed {error}`. The usage Codex reports is cumulative over the whole thread (resumes
 * included): see `RunOptions.threadUsageBefore`.
 */

/** Codex's own usage object (`turn.completed.usage`, rollout `token_count.info.total_token_usage`). */
interface CodexUsage {
  input_tokens?: number;
  cached_input_tokens?: number;
  cache_write_input_tokens?: number;
  output_tokens?: number;
  reasoning_output_tokens?: number;
}

export interface CodexStreamState extends StreamState {
  /** What Codex reported: the whole thread's cumulative usage after this run's turn (null until then). */
  threadUsage: Usage | null;
  /** How far the run's turn got: `turn.started`, `turn.completed`, `turn.failed`. */
  turn: 'none' | 'started' | 'completed' | 'failed';
  /** The last top-level `error` event (retries, "Reconnecting… 1/5"; not fatal by itself). */
  lastError: string | null;
}

// ------------------------------------------------------------------------------------------------
// Usage.

/** Codex usage → ours. `input_tokens` includes the cached and cache-write part and `output_tokens` the
 * reasoning part (OpenAI's convention); ours keeps input without cache, so that
 * inputTokens + cacheReadTokens + cacheWriteTokens + outputTokens = totalTokens. Codex reports no cost. */
export function usageFromCodex(u: CodexUsage): Usage {
  const input = num(u.input_tokens);
  const cacheRead = num(u.cached_input_tokens);
  const cacheWrite = num(u.cache_write_input_tokens);
  const output = num(u.output_tokens);
  return {
    inputTokens: Math.max(0, input - cacheRead - cacheWrite),
    outputTokens: output,
    cacheReadTokens: cacheRead,
    cacheWriteTokens: cacheWrite,
    reasoningTokens: num(u.reasoning_output_tokens),
    totalTokens: input + output,
    costUsd: null,
  };
}

/** The final statuses of a sub-agent in `agents_states`, as ours (a Map: a status is the stream's text, never a key of Object's). */
const CHILD_FINAL: ReadonlyMap<string, ChildAgent['status']> = new Map([
  ['completed', 'done'],
  ['shutdown', 'done'],
  ['errored', 'failed'],
  ['interrupted', 'failed'],
  ['not_found', 'unknown'],
  ['notfound', 'unknown'],
]);

/** A readable error out of Codex's message, which is often the API's JSON error body. */
export function errorText(message: string): string {
  const t = message.trim();
  if (t.startsWith('{')) {
    const e = fields(parseObject(t)?.error);
    const inner = str(e.message);
    if (inner) {
      const kind = str(e.type) ?? str(e.code);
      return kind ? `${inner} (${kind})` : inner;
    }
  }
  return t;
}

// ------------------------------------------------------------------------------------------------
// Rate limits.
/** Where Codex's own terminal UI starts warning of a window (its RATE_LIMIT_WARNING_THRESHOLDS begin at 75 %). */
const WARNS_AT_PERCENT = 75;

/** Codex's windows by their length, in the words Claude's stream uses for the same windows. */
function windowName(minutes: unknown, slot: string): string {
  return minutes === 300 ? 'five_hour' : minutes === 10080 ? 'seven_day' : slot;
}

/**
 * A rate-limit snapshot of the rollout into the run's state: a window used up (100 %) is a limit reached,
 * `resetsAt` the latest of such windows' `resets_at` (epoch seconds); else the fullest window past
 * WARNS_AT_PERCENT is a warning. A later snapshot stands for the earlier ones.
 */
function rateLimitsInto(state: StreamState, limits: JsonObject): void {
  const windows = (['primary', 'secondary'] as const)
    .map((slot) => ({ slot, w: fields(limits[slot]) }))
    .filter(({ w }) => typeof w.used_percent === 'number')
    .map(({ slot, w }) => ({ window: windowName(w.window_minutes, slot), used: w.used_percent as number, resetsAt: isoOfEpochSeconds(w.resets_at) }));
  const reached = windows.filter((w) => w.used >= 100).sort((a, b) => String(b.resetsAt).localeCompare(String(a.resetsAt)));
  state.resetsAt = reached[0]?.resetsAt ?? null;
  const near = reached.length > 0 ? undefined : windows.filter((w) => w.used >= WARNS_AT_PERCENT).sort((a, b) => b.used - a.used)[0];
  state.limitWarning = near ? { window: near.window, utilization: near.used / 100, resetsAt: near.resetsAt } : null;
}

// ------------------------------------------------------------------------------------------------
// The run.

/**
 * One Codex run's `--json` stream, and its verdict. The adapter gives a run its rollout's usage reader
 * (usage.ts, which reads the store this file's readers read).
 */
export class CodexRun implements AgentRun {
  readonly state: CodexStreamState = { ...emptyState(), threadUsage: null, turn: 'none', lastError: null };
  /** Tool items started and not completed yet, in order. */
  private readonly tools = new ToolCalls<Item>(this.state);
  private readonly children = new Map<string, ChildAgent>();
  private readonly childAnswers = new Set<string>();
  private readonly onMessage: ((m: Message) => void) | undefined;
  private readonly threadUsageBefore: Usage | null | undefined;

  readonly storeUsage?: (q: SessionQuery) => StoreUsage;

  /** `reader`: the rollout's usage reader (usage.ts), which also hands this run the rate-limit snapshots it reads. */
  constructor(run: RunOptions = {}, reader?: (q: SessionQuery, limitsSeen: LimitsSeen) => StoreUsage) {
    this.onMessage = run.onMessage;
    this.threadUsageBefore = run.threadUsageBefore;
    // Codex's rate limits are in its rollout only (its --json stream has none): read with the usage.
    if (reader) this.storeUsage = (q) => reader(q, (limits) => rateLimitsInto(this.state, limits));
  }

  line(text: string): void {
    const { state } = this;
    const ev = eventOf(text, state);
    if (!ev) return;
    state.lastActivityAt = nowIso();
    switch (ev.type) {
      case 'thread.started': {
        const id = str(ev.thread_id);
        if (id && !state.sessionId) state.sessionId = id;
        break;
      }
      case 'turn.started':
        state.turn = 'started';
        break;
      case 'turn.completed': {
        if (ev.usage && typeof ev.usage === 'object') {
          state.threadUsage = usageFromCodex(ev.usage as CodexUsage);
          state.usage = runUsage(state.threadUsage, this.threadUsageBefore);
        }
        this.turnEnded('completed');
        break;
      }
      case 'turn.failed': {
        const message = str(fields(ev.error).message) ?? str(ev.message) ?? 'the turn failed';
        state.fatalError = errorText(message);
        this.turnEnded('failed');
        break;
      }
      case 'error': {
        const message = str(ev.message);
        if (message) state.lastError = errorText(message);
        break;
      }
      case 'item.started':
      case 'item.updated':
      case 'item.completed': {
        const item = itemOf(ev.item);
        if (!item) {
          state.skippedLines++;
          break;
        }
        this.onItem(item, ev.type === 'item.started' ? 'started' : ev.type === 'item.updated' ? 'updated' : 'completed');
        break;
      }
      default:
        break; // an event kind this version does not know: not noise, just not ours
    }
  }

  /** End of the log: the tool calls that started and never completed (a cancel during a tool), `in_progress`. */
  end(): void {
    for (const item of this.tools.drain()) this.emit(toolMessage(item, 'in_progress'));
  }

  private emit(m: Message): void {
    this.onMessage?.(m);
  }

  private onItem(item: Item, phase: 'started' | 'updated' | 'completed'): void {
    if (item.type === 'agent_message') {
      if (phase !== 'completed') return;
      const text = str(item.raw.text) ?? contentText(item.raw.content);
      this.state.lastAssistantText = text;
      this.emit({ role: 'assistant', text });
      return;
    }
    if (NOT_TOOLS.has(item.type)) return; // reasoning, warnings ("Model metadata … not found")
    this.tools.count(item.id);
    if (phase === 'completed') {
      if (item.id !== null) this.tools.close(item.id);
      this.emit(toolMessage(item));
    } else if (item.id !== null) {
      this.tools.open(item.id, item);
    }
    if (item.type === 'collab_tool_call') this.collab(item, phase === 'completed');
  }

  private collab(item: Item, completed: boolean): void {
    const r = item.raw;
    const states = fields(r.agents_states);
    if (completed && str(r.tool) === 'spawn_agent' && Array.isArray(r.receiver_thread_ids)) {
      for (const id of r.receiver_thread_ids.map(String)) {
        if (this.children.has(id)) continue;
        const child = runningChild(id, 'codex', str(r.prompt));
        this.children.set(id, child);
        this.state.children.push(child);
      }
    }
    for (const [id, v] of Object.entries(states)) this.childUpdate(id, v);
  }

  private childUpdate(id: string, v: unknown): void {
    const child = this.children.get(id);
    if (!child) return;
    const s = agentState(v);
    const final = CHILD_FINAL.get(s.status.replace(/_/g, '')) ?? CHILD_FINAL.get(s.status);
    if (final) {
      endChild(child, final);
    } else if (s.status === 'pending_init' || s.status === 'running') {
      if (child.finishedAt === null) child.status = 'running';
    }
    if (s.message !== null && s.status === 'completed' && !this.childAnswers.has(`${id}\0${s.message}`)) {
      // The child's final answer, as the parent's stream carries it (its other words are only in its
      // own rollout: childMessages reads those).
      this.childAnswers.add(`${id}\0${s.message}`);
      this.emit({ role: 'assistant', text: s.message, childId: id });
    }
  }

  private turnEnded(outcome: 'completed' | 'failed'): void {
    this.state.turn = outcome;
    inferChildren(this.state, outcome === 'completed' ? 'done' : 'failed');
  }

  verdict(exit: Exit): Verdict {
    const v = verdictOf(exit, this.state);
    // The run is over: so is every sub-agent (they live in the codex process).
    inferChildren(this.state, v.outcome === 'succeeded' ? 'done' : 'failed');
    return v;
  }
}

// ------------------------------------------------------------------------------------------------
// The verdict.

function verdictOf(exit: Exit, s: CodexStreamState): Verdict {
  // turn.failed carries the API's error: its reason is in its words (Codex reports no status field).
  if (s.fatalError) return { outcome: 'failed', error: s.fatalError, reason: apiErrorReason(null, s.fatalError) ?? 'unknown' };
  if (exit.signal)
    return { outcome: 'failed', error: `codex was stopped by ${exit.signal}${s.turn === 'completed' ? '' : ' before its turn ended'}`, reason: 'crashed' };
  if (exit.code === 0 && s.turn === 'completed') return { outcome: 'succeeded', error: null, reason: null };
  if (exit.code === 0) return { outcome: 'failed', error: 'codex exited with status 0 without finishing its turn (no turn.completed)', reason: 'crashed' };
  const why = s.lastError ? `: ${s.lastError}` : s.sessionId === null ? ' before it opened a thread' : '';
  const reason = (s.lastError ? apiErrorReason(null, s.lastError) : null) ?? 'crashed';
  return { outcome: 'failed', error: `codex exited with status ${exit.code ?? 'unknown'}${why}`, reason };
}
