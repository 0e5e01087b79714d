import type { ChildAgent, Usage } from '../../registry/record.js';
import { nowIso } from '../../base/time.js';
import { fields, isObject, num, str } from '../../base/json.js';
import type { AgentRun, Exit, Message, RunOptions, SessionQuery, StoreUsage, StreamState, Verdict, VerdictReason } from '../types.js';
import { endChild, inferChildren, runningChild } from '../shared/children.js';
import { emptyState, eventOf } from '../shared/stream.js';
import { isoAfter, retryInSeconds } from '../shared/limits.js';
import { denialsError, ToolCalls, toolHeadline } from '../shared/tools.js';
import type { ChildSettler } from './children.js';
import { errorText } from './errors.js';
import { AGENT_TOOL, toolInput, toolMessage } from './tools.js';

export { errorText } from './errors.js';

/**
 * The Gemini CLI's `-o stream-json` stream (0.61; docs/agents/gemini.md): one JSON event per line,
 * `init {session_id, model}` first, `message {role, content, delta}` (the answer comes in deltas),
 * `tool_use {tool_name, tool_id, parameters}`, `tool_result {tool_id, status, output?, error?}`,
 * `error {severity, message}` (not fatal by itself), and last `result {status, error?, stats}`. Its
 * stats are this process's, sub-agents included; no cost. No event marks a model turn: `state.turns`
 * counts the answers (text or tool calls) that follow the prompt or tool results.
 */

export interface GeminiStreamState extends StreamState {
  /** The `result` event's status: `none` until it comes (a run cut off, or killed, has none). */
  result: 'none' | 'success' | 'error';
  /** The last `error` event (a warning, a loop detected, an empty answer): not fatal by itself. */
  lastError: string | null;
  /** The HTTP status of the API error that ended the run, when the CLI's message carries it. */
  apiStatus: number | null;
  /** The result's `error.type` (`FatalTurnLimitedError`, `unknown` for API errors…), when it failed. */
  errorType: string | null;
}

/** What a run reads of the CLI's own store, given by the adapter (usage.ts and children.ts read the store this file's readers read). */
export interface GeminiStore {
  /** The run's usage as its chat grows. */
  usage: (q: SessionQuery) => StoreUsage;
  /** How the run's children really ended. */
  children: ChildSettler;
}

// ------------------------------------------------------------------------------------------------
// Usage and errors.

/**
 * The result's `stats` as ours. `input_tokens` is the prompt with its cached part (`cached`; `input`
 * is the rest) and `output_tokens` the answer without thoughts, which only the total counts; ours
 * keeps input without cache and, as for Codex, output with the thoughts (`reasoningTokens`), so that
 * inputTokens + cacheReadTokens + outputTokens = totalTokens. No cost.
 */
export function usageFromStats(stats: unknown): Usage | null {
  if (!isObject(stats)) return null;
  const prompt = num(stats.input_tokens);
  const cached = num(stats.cached);
  const answer = num(stats.output_tokens);
  const input = stats.input === undefined ? Math.max(0, prompt - cached) : num(stats.input);
  const output = Math.max(answer, num(stats.total_tokens) - prompt);
  return {
    inputTokens: input,
    outputTokens: output,
    cacheReadTokens: cached,
    cacheWriteTokens: 0,
    reasoningTokens: output - answer,
    totalTokens: input + cached + output,
    costUsd: null,
  };
}

// ------------------------------------------------------------------------------------------------
// The run.

/** One Gemini run's `stream-json` stream, and its verdict. */
/** Gemini 0.61's answer to a call a rule asks to confirm (`ask_user`), headless (fixture shell-needs-confirmation). */
const NEEDS_CONFIRMATION = /requires user confirmation, which is not supported in non-interactive mode/;

export class GeminiRun implements AgentRun {
  readonly state: GeminiStreamState = { ...emptyState(), result: 'none', lastError: null, apiStatus: null, errorType: null };
  readonly storeUsage?: (q: SessionQuery) => StoreUsage;
  readonly settleChildren?: (q: SessionQuery, final: boolean) => void;
  /** Tool calls announced and not answered yet, by tool_id, in order. */
  private readonly tools = new ToolCalls<{ name: string; args: unknown }>(this.state);
  private readonly children = new Map<string, ChildAgent>();
  /** Tool calls refused for want of a confirmation (headless: nobody can give one), by tool_id: what each was. */
  private readonly refused = new Map<string, string>();
  /** The assistant text of the current turn, as its deltas arrive; a message once something else comes. */
  private text: string | null = null;
  /**
   * Inside a model turn: its answer (text, tool calls) is streaming. The prompt and tool results end one;
   * the model's next words or calls begin the next — the CLI's own turns (a request to the model each,
   * what `model.maxSessionTurns` counts). A sub-agent's turns are not in the stream.
   */
  private inTurn = false;
  private readonly onMessage: ((m: Message) => void) | undefined;

  constructor(run: RunOptions = {}, store?: GeminiStore) {
    this.onMessage = run.onMessage;
    if (!store) return;
    this.storeUsage = store.usage;
    this.settleChildren = (q, final) => store.children.settle(q, this.state.children, final);
  }

  line(line: string): void {
    const ev = eventOf(line, this.state);
    if (!ev) return;
    this.state.lastActivityAt = nowIso();
    switch (ev.type) {
      case 'init': {
        const id = str(ev.session_id);
        if (id && !this.state.sessionId) this.state.sessionId = id;
        break;
      }
      case 'message':
        this.message(ev);
        break;
      case 'tool_use':
        this.flush();
        this.modelSaid();
        this.toolUse(ev);
        break;
      case 'tool_result':
        this.flush();
        this.inTurn = false;
        this.toolResult(ev);
        break;
      case 'error':
        this.flush();
        this.state.lastError = str(ev.message) ?? this.state.lastError;
        break;
      case 'result':
        this.flush();
        this.result(ev);
        break;
      default:
        break; // an event this version does not know: not noise, just not ours
    }
  }

  /** End of the log: the pending answer text, and tool calls that never got a result (status `incomplete`). */
  end(): void {
    this.flush();
    for (const call of this.tools.drain()) this.emit(toolMessage(call.name, call.args, null, 'incomplete'));
  }

  private emit(m: Message): void {
    this.onMessage?.(m);
  }

  private modelSaid(): void {
    if (this.inTurn) return;
    this.inTurn = true;
    this.state.turns++;
  }

  private flush(): void {
    if (this.text === null) return;
    this.emit({ role: 'assistant', text: this.text });
    this.text = null;
  }

  private message(ev: Record<string, unknown>): void {
    if (ev.role !== 'assistant') {
      this.flush(); // the user's prompt, echoed: the core adds it
      this.inTurn = false;
      return;
    }
    this.modelSaid();
    const content = str(ev.content) ?? '';
    if (ev.delta === true) {
      this.text = (this.text ?? '') + content;
      this.state.lastAssistantText = this.text;
    } else {
      this.flush();
      this.emit({ role: 'assistant', text: content });
      this.state.lastAssistantText = content;
    }
  }

  private toolUse(ev: Record<string, unknown>): void {
    const id = this.tools.count(str(ev.tool_id));
    if (id === null) return;
    const name = str(ev.tool_name) ?? 'tool';
    this.tools.open(id, { name, args: ev.parameters });
    if (name !== AGENT_TOOL || this.children.has(id)) return;
    // A sub-agent runs inside this process; the stream shows only its call and its end. Its id is the
    // call's: its own session id is only in the CLI's chat files (store.ts maps one to the other).
    const child = runningChild(id, 'gemini', toolInput(name, ev.parameters));
    this.children.set(id, child);
    this.state.children.push(child);
  }

  private toolResult(ev: Record<string, unknown>): void {
    const id = str(ev.tool_id) ?? '';
    const call = this.tools.close(id) ?? { name: 'tool', args: undefined };
    const status = str(ev.status);
    const said = str(ev.output) ?? str(fields(ev.error).message);
    this.emit(toolMessage(call.name, call.args, said, status));
    if (status !== 'success' && said !== null && NEEDS_CONFIRMATION.test(said)) this.refused.set(id, toolHeadline(call.name, call.args));
    const child = this.children.get(id);
    if (child) endChild(child, status === 'success' ? 'done' : 'failed');
  }

  private result(ev: Record<string, unknown>): void {
    const { state } = this;
    state.result = ev.status === 'success' ? 'success' : 'error';
    state.usage = usageFromStats(ev.stats) ?? state.usage;
    if (state.result === 'error') {
      const e = fields(ev.error);
      state.errorType = str(e.type);
      const said = str(e.message);
      const err = said ? errorText(said) : null;
      state.apiStatus = err?.status ?? state.apiStatus;
      state.fatalError ??= err?.text ?? state.lastError ?? 'gemini reported an error (result status "error")';
      // A quota error's wait (Google's RetryInfo, which Gemini CLI passes on in its words), from the result's time.
      if (said) state.resetsAt = isoAfter(ev.timestamp ?? Date.now(), retryInSeconds(said));
    }
    inferChildren(state, state.result === 'success' ? 'done' : 'failed');
  }

  verdict(exit: Exit): Verdict {
    const v = verdictOf(exit, this.state, this.refused);
    inferChildren(this.state, v.outcome === 'succeeded' ? 'done' : 'failed');
    return v;
  }
}

// ------------------------------------------------------------------------------------------------
// The verdict.

/** What the CLI's own exit statuses mean (its FatalError classes). An API error exits with its HTTP
 * status mod 256 (500 → 244, 429 → 173), after a result that says so. */
const EXIT_MEANINGS: Record<number, string> = {
  41: 'authentication failed',
  42: 'bad input: an unknown --resume id, an empty prompt or an unreadable @file',
  44: 'sandbox error',
  52: 'configuration error',
  53: 'the session turn limit was reached',
  54: 'a tool failed fatally',
  55: 'the workspace is not trusted',
  130: 'cancelled',
};

/**
 * How a run ended. A run whose tool calls were refused because they needed a confirmation nobody can give
 * headless failed (`permission-denied`, as Claude's and Qwen's refusals), whatever the model answered.
 */
function verdictOf(exit: Exit, s: GeminiStreamState, refused: Map<string, string>): Verdict {
  const where = s.sessionId === null ? ' before it started the session' : s.result === 'none' ? ' before it reported a result' : '';
  if (s.fatalError) return { outcome: 'failed', error: s.fatalError, reason: reasonOf(exit, s) };
  if (exit.signal) return { outcome: 'failed', error: `gemini was killed by ${exit.signal}${where}`, reason: reasonOf(exit, s) };
  if (exit.code === 0 && s.result === 'success' && refused.size > 0)
    return { outcome: 'failed', error: denialsError('gemini', refused), reason: 'permission-denied' };
  if (exit.code === 0 && s.result === 'success') return { outcome: 'succeeded', error: null, reason: null };
  if (exit.code === 0) return { outcome: 'failed', error: `gemini exited with status 0${where || ' without a result'}`, reason: reasonOf(exit, s) };
  const meaning = exit.code === null ? undefined : EXIT_MEANINGS[exit.code];
  return {
    outcome: 'failed',
    error: `gemini exited with status ${exit.code ?? 'unknown'}${meaning ? ` (${meaning})` : ''}${where}`,
    reason: reasonOf(exit, s),
  };
}

/**
 * A failed run's reason (docs/contract.md, "Reasons"): its failure kind in the contract's words. `input`
 * is an API's refusal of the request (a result said error: HTTP 4xx) or the CLI's own bad input (an
 * unknown --resume id, a configuration error: `unknown`, its message saying what).
 */
function reasonOf(exit: Exit, state: GeminiStreamState): VerdictReason {
  switch (failureKind(exit, state)) {
    case 'auth':
      return 'auth';
    case 'rate-limit':
      return 'rate-limit';
    case 'server':
      return 'api-error';
    case 'turn-limit':
      return 'max-turns';
    case 'permission':
      return 'permission-denied';
    case 'input':
      return state.result === 'error' ? 'api-error' : 'unknown';
    default:
      return 'crashed';
  }
}

/** Why a run failed, in the words of issue 16's reasons. */
export type FailureKind = 'auth' | 'rate-limit' | 'server' | 'turn-limit' | 'permission' | 'input' | 'crash';

/**
 * The kind of a failed run's failure, from what the CLI said: the HTTP status of an API error (in the
 * result's message, or the exit status + 256), the CLI's own exit statuses, the result's error type.
 */
export function failureKind(exit: Exit, s: GeminiStreamState): FailureKind {
  const code = exit.code;
  const http = s.apiStatus ?? (s.result === 'error' && code !== null && code >= 144 && !EXIT_MEANINGS[code] ? code + 256 : null);
  if (http === 401 || http === 403 || code === 41) return 'auth';
  if (http === 429) return 'rate-limit';
  if ((http !== null && http >= 500) || (s.result === 'error' && code === 0)) return 'server';
  if (code === 53 || s.errorType === 'FatalTurnLimitedError') return 'turn-limit';
  if (code === 55) return 'permission';
  if (http !== null || code === 42 || code === 52) return 'input';
  return 'crash';
}
