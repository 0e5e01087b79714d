import { createReadStream, readdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { SubagentError } from '../base/errors.js';
import type { ChildAgent, Usage } from '../registry/record.js';
import { nowIso } from '../base/time.js';
import type { AgentAdapter, ChildQuery, LaunchInput, Launch, Message, StreamParser, StreamState, ToolCall, Verdict } from './types.js';
import { emptyState } from './types.js';

/**
 * The `codex` CLI (OpenAI Codex 0.169): `codex exec --json`, the prompt on stdin (`-`).
 *
 *   new run  codex exec [extra…] --json --skip-git-repo-check -C <cwd> [-m M] [-c model_reasoning_effort="V"] -
 *   resume   codex exec [extra…] --json --skip-git-repo-check -C <cwd> [-m M] [-c …] resume <thread_id> -
 *
 * Every exec-level option goes *before* `resume` (`-s`, `-C`, `-p`, `--add-dir` are refused after it).
 * Stdout is one JSON event per line: `thread.started {thread_id}` first, `item.started|completed`,
 * then `turn.completed {usage}` or `turn.failed {error}`. The usage Codex reports is cumulative over
 * the whole thread (resumes included): see `CodexParserOptions.threadUsageBefore`.
 * Docs: docs/agents/codex.md.
 */

/** Codex's own usage object (`turn.completed.usage`, rollout `token_count.info.total_token_usage`). */
interface CodexUsage {
  input_tokens?: number;
  cached_input_tokens?: number;
  cache_write_input_tokens?: number;
  output_tokens?: number;
  reasoning_output_tokens?: number;
}

export interface CodexParserOptions {
  /**
   * The thread's usage before this run: the sum of the `usage` of the earlier runs of the same session
   * (equivalently, the previous run's `state.threadUsage`). Codex reports thread totals, so this run's
   * own usage is `threadUsage - threadUsageBefore`. Absent/null on a new thread (run 1), where the
   * thread total is the run's usage.
   */
  threadUsageBefore?: Usage | null;
}

export interface CodexStreamState extends StreamState {
  /** What Codex reported: the whole thread's cumulative usage after this run's turn (null until then). */
  threadUsage: Usage | null;
  /** How far the run's turn got: `turn.started`, `turn.completed`, `turn.failed`. */
  turn: 'none' | 'started' | 'completed' | 'failed';
  /** The last top-level `error` event (retries, "Reconnecting… 1/5"; not fatal by itself). */
  lastError: string | null;
}

export interface CodexStreamParser extends StreamParser {
  readonly state: CodexStreamState;
  /**
   * End of the log: emits the tool calls that started and never completed (a cancel during a tool),
   * with status `in_progress`. Optional for the core; without it those calls are left out.
   */
  end(): void;
}

const INPUT_MAX = 300;
const OUTPUT_MAX = 500;
const DESCRIPTION_MAX = 200;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

// ------------------------------------------------------------------------------------------------
// Small helpers for untyped JSON.

type Json = Record<string, unknown>;

function rec(v: unknown): Json {
  return v && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : {};
}

function str(v: unknown): string | null {
  return typeof v === 'string' ? v : null;
}

function num(v: unknown): number {
  return typeof v === 'number' && Number.isFinite(v) ? v : 0;
}

/** Cuts a summary to `max` characters (never splitting a surrogate pair), marking the cut with "…". */
export function cap(text: string, max: number): string {
  if (text.length <= max) return text;
  let cut = text.slice(0, max - 1);
  const last = cut.charCodeAt(cut.length - 1);
  if (last >= 0xd800 && last <= 0xdbff) cut = cut.slice(0, -1);
  return cut + '…';
}

/** Text of a content array (`[{type:"text"|"Text"|"output_text"|"input_text", text}]`) or a string. */
function contentText(v: unknown): string {
  if (typeof v === 'string') return v;
  if (!Array.isArray(v)) return '';
  return v
    .map((b) => str(rec(b).text) ?? '')
    .filter((s) => s !== '')
    .join('\n');
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

const COUNTS = ['inputTokens', 'outputTokens', 'cacheReadTokens', 'cacheWriteTokens', 'reasoningTokens', 'totalTokens'] as const;

/**
 * This run's usage from the thread totals after it and before it. A baseline that does not fit (a
 * count would go negative: it is not this thread's past) is ignored and the thread total is returned.
 */
export function runUsage(thread: Usage, before: Usage | null | undefined): Usage {
  if (!before) return thread;
  const out = { ...thread, costUsd: null };
  for (const k of COUNTS) {
    const d = thread[k] - (before[k] ?? 0);
    if (d < 0) return thread;
    out[k] = d;
  }
  return out;
}

// ------------------------------------------------------------------------------------------------
// Items: the stream's `item` (snake_case types) and the rollout's `event_msg/item_completed` items
// (PascalCase types, content arrays, argv arrays) normalised to one shape.

interface Item {
  id: string | null;
  type: string;
  raw: Json;
}

const ROLLOUT_TYPES: Record<string, string> = {
  UserMessage: 'user_message',
  AgentMessage: 'agent_message',
  Reasoning: 'reasoning',
  CommandExecution: 'command_execution',
  FileChange: 'file_change',
  McpToolCall: 'mcp_tool_call',
  WebSearch: 'web_search',
  CollabAgentToolCall: 'collab_tool_call',
  CollabToolCall: 'collab_tool_call',
  TodoList: 'todo_list',
  Plan: 'todo_list',
  Error: 'error',
};

function normaliseType(t: string): string {
  if (ROLLOUT_TYPES[t]) return ROLLOUT_TYPES[t]!;
  // Any other PascalCase name: SomeThing → some_thing.
  return t.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase();
}

function itemOf(v: unknown): Item | null {
  const raw = rec(v);
  const type = str(raw.type);
  if (!type) return null;
  return { id: str(raw.id), type: normaliseType(type), raw };
}

/** Items that are not tool calls. */
const NOT_TOOLS = new Set(['agent_message', 'user_message', 'reasoning', 'error']);

/** Parses one shell word list (single/double quotes, backslashes); null when it is not plain. */
function shellWords(s: string): string[] | null {
  const words: string[] = [];
  let cur = '';
  let inWord = false;
  let i = 0;
  while (i < s.length) {
    const c = s[i]!;
    if (c === ' ' || c === '\t') {
      if (inWord) words.push(cur);
      cur = '';
      inWord = false;
      i++;
    } else if (c === "'") {
      const end = s.indexOf("'", i + 1);
      if (end === -1) return null;
      cur += s.slice(i + 1, end);
      inWord = true;
      i = end + 1;
    } else if (c === '"') {
      i++;
      for (;;) {
        if (i >= s.length) return null;
        const d = s[i]!;
        if (d === '"') break;
        if (d === '\\' && i + 1 < s.length && '"\\$`\n'.includes(s[i + 1]!)) {
          cur += s[i + 1];
          i += 2;
        } else {
          cur += d;
          i++;
        }
      }
      inWord = true;
      i++;
    } else if (c === '\\' && i + 1 < s.length) {
      cur += s[i + 1];
      inWord = true;
      i += 2;
    } else {
      cur += c;
      inWord = true;
      i++;
    }
  }
  if (inWord) words.push(cur);
  return words;
}

/** `/bin/bash -lc 'echo hi'` (stream) or `["/bin/bash","-lc","echo hi"]` (rollout) → `echo hi`. */
export function commandText(command: unknown): string {
  let argv: string[] | null = null;
  if (Array.isArray(command)) argv = command.map((a) => String(a));
  else if (typeof command === 'string') argv = shellWords(command);
  if (argv && argv.length === 3 && /(^|\/)(ba|z|da)?sh$/.test(argv[0]!) && /^-l?c$/.test(argv[1]!)) return argv[2]!;
  if (typeof command === 'string') return command;
  return argv ? argv.join(' ') : '';
}

const CHILD_FINAL: Record<string, ChildAgent['status']> = {
  completed: 'done',
  shutdown: 'done',
  errored: 'failed',
  interrupted: 'failed',
  not_found: 'unknown',
  notfound: 'unknown',
};

/** An `agents_states` entry: stream `{status, message}`, rollout `"pending_init"` or `{completed: "text"}`. */
function agentState(v: unknown): { status: string; message: string | null } {
  if (typeof v === 'string') return { status: v.replace(/([a-z])([A-Z])/g, '$1_$2').toLowerCase(), message: null };
  const r = rec(v);
  if (typeof r.status === 'string') return { status: r.status.toLowerCase(), message: str(r.message) };
  const [key, value] = Object.entries(r)[0] ?? ['unknown', null];
  return { status: key.replace(/([a-z])([A-Z])/g, '$1_$2').toLowerCase(), message: str(value) };
}

function statesSummary(states: Json): string | null {
  const parts = Object.entries(states).map(([id, v]) => {
    const s = agentState(v);
    return `${id}: ${s.status}${s.message ? `: ${s.message}` : ''}`;
  });
  return parts.length ? parts.join('; ') : null;
}

/** The transcript message of a finished (or, with `status`, unfinished) tool item. */
function toolMessage(item: Item, statusOverride?: string): Message {
  const r = item.raw;
  let name = item.type;
  let input: string | null = null;
  let output: string | null = null;
  let status: string | null = str(r.status);
  switch (item.type) {
    case 'command_execution': {
      name = 'Bash';
      input = commandText(r.command);
      const out = str(r.aggregated_output) ?? str(r.output) ?? '';
      const code = typeof r.exit_code === 'number' ? r.exit_code : null;
      output = `${code !== null && code !== 0 ? `[exit ${code}] ` : ''}${out}`.trimEnd();
      break;
    }
    case 'file_change': {
      const changes = Array.isArray(r.changes) ? r.changes.map(rec) : [];
      input = changes.map((c) => `${str(c.kind) ?? str(rec(c.kind).type) ?? 'change'} ${str(c.path) ?? ''}`.trim()).join(', ');
      break;
    }
    case 'mcp_tool_call': {
      name = `mcp:${str(r.server) ?? '?'}/${str(r.tool) ?? '?'}`;
      input = r.arguments === undefined ? null : typeof r.arguments === 'string' ? r.arguments : JSON.stringify(r.arguments);
      const err = str(rec(r.error).message);
      const result = rec(r.result);
      output = err !== null ? `error: ${err}` : contentText(result.content) || (r.result === undefined || r.result === null ? null : JSON.stringify(r.result));
      break;
    }
    case 'web_search': {
      input = str(r.query) ?? str(rec(r.action).query);
      break;
    }
    case 'collab_tool_call': {
      name = str(r.tool) ?? 'collab_tool_call';
      const receivers = Array.isArray(r.receiver_thread_ids) ? r.receiver_thread_ids.map(String) : [];
      input = str(r.prompt) ?? (receivers.length ? receivers.join(', ') : null);
      output = statesSummary(rec(r.agents_states)) ?? (receivers.length && str(r.prompt) ? receivers.join(', ') : null);
      break;
    }
    case 'todo_list': {
      const items = Array.isArray(r.items) ? r.items.map(rec) : [];
      input = items.map((t) => `[${t.completed ? 'x' : ' '}] ${str(t.text) ?? ''}`).join('; ');
      break;
    }
    default: {
      const { id: _id, type: _type, status: _status, ...rest } = r;
      input = Object.keys(rest).length ? JSON.stringify(rest) : null;
    }
  }
  if (statusOverride) status = statusOverride;
  const tool: ToolCall = {
    name,
    input: input === null ? null : cap(input, INPUT_MAX),
    output: output === null || output === '' ? null : cap(output, OUTPUT_MAX),
    status,
  };
  const text = cap(input ? `${name}: ${input.replace(/\s*\n\s*/g, ' ')}` : name, INPUT_MAX + 40);
  return { role: 'tool', text, tool };
}

/** A readable error out of Codex's message, which is often the API's JSON error body. */
export function errorText(message: string): string {
  const t = message.trim();
  if (t.startsWith('{')) {
    try {
      const e = rec(rec(JSON.parse(t)).error);
      const inner = str(e.message);
      if (inner) {
        const kind = str(e.type) ?? str(e.code);
        return kind ? `${inner} (${kind})` : inner;
      }
    } catch {
      /* not JSON after all */
    }
  }
  return t;
}

// ------------------------------------------------------------------------------------------------
// The stream parser.

function parser(onMessage?: (m: Message) => void, options: CodexParserOptions = {}): CodexStreamParser {
  const state: CodexStreamState = { ...emptyState(), threadUsage: null, turn: 'none', lastError: null };
  const seenTools = new Set<string>();
  /** Tool items started and not completed yet, in order. */
  const open = new Map<string, Item>();
  const children = new Map<string, ChildAgent>();
  const childAnswers = new Set<string>();
  let anonymous = 0;

  const emit = (m: Message): void => onMessage?.(m);

  const countTool = (item: Item): void => {
    const key = item.id ?? `#${++anonymous}`;
    if (seenTools.has(key)) return;
    seenTools.add(key);
    state.toolUses++;
  };

  const childUpdate = (id: string, v: unknown): void => {
    const child = children.get(id);
    if (!child) return;
    const s = agentState(v);
    const final = CHILD_FINAL[s.status.replace(/_/g, '')] ?? CHILD_FINAL[s.status];
    if (final) {
      if (child.status === 'running' || child.statusSource === 'inferred') {
        child.status = final;
        child.statusSource = 'stream';
        child.finishedAt ??= nowIso();
      }
    } else if (s.status === 'pending_init' || s.status === 'running') {
      if (child.finishedAt === null) child.status = 'running';
    }
    if (s.message !== null && s.status === 'completed' && !childAnswers.has(`${id}\0${s.message}`)) {
      // The child's final answer, as the parent's stream carries it (its other words are only in its
      // own rollout: childMessages reads those).
      childAnswers.add(`${id}\0${s.message}`);
      emit({ role: 'assistant', text: s.message, childId: id });
    }
  };

  const collab = (item: Item, completed: boolean): void => {
    const r = item.raw;
    const states = rec(r.agents_states);
    if (completed && str(r.tool) === 'spawn_agent' && Array.isArray(r.receiver_thread_ids)) {
      for (const id of r.receiver_thread_ids.map(String)) {
        if (children.has(id)) continue;
        const prompt = str(r.prompt);
        const child: ChildAgent = {
          id,
          cli: 'codex',
          description: prompt === null ? null : cap(prompt.replace(/\s+/g, ' ').trim(), DESCRIPTION_MAX),
          status: 'running',
          statusSource: 'stream',
          startedAt: nowIso(),
          finishedAt: null,
        };
        children.set(id, child);
        state.children.push(child);
      }
    }
    for (const [id, v] of Object.entries(states)) childUpdate(id, v);
  };

  const onItem = (item: Item, phase: 'started' | 'updated' | 'completed'): void => {
    if (item.type === 'agent_message') {
      if (phase !== 'completed') return;
      const text = str(item.raw.text) ?? contentText(item.raw.content);
      state.lastAssistantText = text;
      emit({ role: 'assistant', text });
      return;
    }
    if (NOT_TOOLS.has(item.type)) return; // reasoning, warnings ("Model metadata … not found")
    countTool(item);
    if (phase === 'completed') {
      if (item.id !== null) open.delete(item.id);
      emit(toolMessage(item));
    } else if (item.id !== null) {
      open.set(item.id, item);
    }
    if (item.type === 'collab_tool_call') collab(item, phase === 'completed');
  };

  const turnEnded = (outcome: 'completed' | 'failed'): void => {
    state.turn = outcome;
    inferChildren(state, outcome === 'completed' ? 'done' : 'failed');
  };

  return {
    state,
    line(text: string) {
      if (text.trim() === '') return;
      let ev: Json;
      try {
        const v: unknown = JSON.parse(text);
        if (!v || typeof v !== 'object' || Array.isArray(v) || typeof (v as Json).type !== 'string') throw new Error('not an event');
        ev = v as Json;
      } catch {
        state.skippedLines++;
        return;
      }
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
            state.usage = runUsage(state.threadUsage, options.threadUsageBefore);
          }
          turnEnded('completed');
          break;
        }
        case 'turn.failed': {
          const message = str(rec(ev.error).message) ?? str(ev.message) ?? 'the turn failed';
          state.fatalError = errorText(message);
          turnEnded('failed');
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
          onItem(item, ev.type === 'item.started' ? 'started' : ev.type === 'item.updated' ? 'updated' : 'completed');
          break;
        }
        default:
          break; // an event kind this version does not know: not noise, just not ours
      }
    },
    end() {
      for (const item of open.values()) emit(toolMessage(item, 'in_progress'));
      open.clear();
    },
  };
}

/** Children still running when the run (or its turn) ended take the run's end, marked as a guess. */
function inferChildren(state: StreamState, status: ChildAgent['status']): void {
  for (const c of state.children) {
    if (c.status !== 'running') continue;
    c.status = status;
    c.statusSource = 'inferred';
    c.finishedAt ??= nowIso();
  }
}

// ------------------------------------------------------------------------------------------------
// The verdict.

function verdict(exit: { code: number | null; signal: string | null }, state: StreamState): Verdict {
  const s = state as Partial<CodexStreamState> & StreamState;
  let v: Verdict;
  if (s.fatalError) v = { outcome: 'failed', error: s.fatalError };
  else if (exit.signal) v = { outcome: 'failed', error: `codex was stopped by ${exit.signal}${s.turn === 'completed' ? '' : ' before its turn ended'}` };
  else if (exit.code === 0 && s.turn === 'completed') v = { outcome: 'succeeded', error: null };
  else if (exit.code === 0) v = { outcome: 'failed', error: 'codex exited with status 0 without finishing its turn (no turn.completed)' };
  else {
    const why = s.lastError ? `: ${s.lastError}` : s.sessionId === null ? ' before it opened a thread' : '';
    v = { outcome: 'failed', error: `codex exited with status ${exit.code ?? 'unknown'}${why}` };
  }
  // The run is over: so is every sub-agent (they live in the codex process).
  inferChildren(state, v.outcome === 'succeeded' ? 'done' : 'failed');
  return v;
}

// ------------------------------------------------------------------------------------------------
// The store: $CODEX_HOME (default ~/.codex)/sessions/YYYY/MM/DD/rollout-<time>-<thread_id>.jsonl.

export function codexHome(storeEnv: Record<string, string>): string {
  if (storeEnv.CODEX_HOME) return storeEnv.CODEX_HOME;
  if (storeEnv.HOME) return join(storeEnv.HOME, '.codex');
  if (process.env.CODEX_HOME) return process.env.CODEX_HOME;
  return join(homedir(), '.codex');
}

function listDir(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

/** The rollout file of a thread, newest day first; null when there is none. */
export function findRollout(home: string, threadId: string): string | null {
  const suffix = `-${threadId}.jsonl`;
  const desc = (names: string[]) => names.filter((n) => /^\d+$/.test(n)).sort((a, b) => Number(b) - Number(a));
  const sessions = join(home, 'sessions');
  for (const y of desc(listDir(sessions))) {
    for (const m of desc(listDir(join(sessions, y)))) {
      for (const d of desc(listDir(join(sessions, y, m)))) {
        const dir = join(sessions, y, m, d);
        const hit = listDir(dir).find((n) => n.startsWith('rollout-') && n.endsWith(suffix));
        if (hit) return join(dir, hit);
      }
    }
  }
  const archived = join(home, 'archived_sessions');
  const hit = listDir(archived).find((n) => n.startsWith('rollout-') && n.endsWith(suffix));
  return hit ? join(archived, hit) : null;
}

async function eachLine(path: string, visit: (line: Json) => boolean | void): Promise<void> {
  const input = createReadStream(path, { encoding: 'utf8' });
  const lines = createInterface({ input, crlfDelay: Infinity });
  try {
    for await (const text of lines) {
      if (!text.trim()) continue;
      let v: unknown;
      try {
        v = JSON.parse(text);
      } catch {
        continue; // a torn last line of a rollout still being written
      }
      if (visit(rec(v)) === false) break;
    }
  } finally {
    lines.close();
    input.destroy();
  }
}

/** Context Codex injects as user messages; not what anyone wrote. */
function isContextMessage(text: string): boolean {
  const t = text.trimStart();
  return /^<(environment_context|user_instructions|permissions instructions|turn_aborted|subagent_notification|collaboration_mode|skills_instructions)[\s>]/.test(t) || t.startsWith('# AGENTS.md');
}

/** The tool message of a rollout `function_call` and its output (calls no item_completed describes). */
function callMessage(call: Json, output: unknown): Message {
  const fn = str(call.name) ?? str(call.type) ?? 'tool';
  const args = str(call.arguments) ?? str(call.input) ?? (call.action === undefined ? '' : JSON.stringify(call.action));
  const shell = ['exec_command', 'shell', 'shell_command', 'local_shell_call'].includes(fn);
  let input = args;
  try {
    const a = rec(JSON.parse(args));
    if (shell) input = commandText(a.cmd ?? a.command) || args;
  } catch {
    /* keep the raw arguments */
  }
  let out = typeof output === 'string' ? output : contentText(rec(output).content ?? output);
  let status: string | null = null;
  if (shell) {
    // exec_command output: "Chunk ID: …\nWall time: …\nProcess exited with code N\n…\nOutput:\n<stdout>"
    const code = /Process exited with code (-?\d+)/.exec(out);
    const at = out.indexOf('Output:\n');
    if (at !== -1) out = out.slice(at + 'Output:\n'.length);
    if (code) {
      status = code[1] === '0' ? 'completed' : 'failed';
      if (code[1] !== '0') out = `[exit ${code[1]}] ${out}`;
    }
    out = out.trimEnd();
  }
  const name = shell ? 'Bash' : fn;
  return {
    role: 'tool',
    text: cap(`${name}: ${input.replace(/\s*\n\s*/g, ' ')}`, INPUT_MAX + 40),
    tool: { name, input: cap(input, INPUT_MAX), output: out ? cap(out, OUTPUT_MAX) : null, status },
  };
}

/**
 * A child thread's messages from its rollout, in two streaming passes. The rollout's
 * `event_msg/item_completed` items (user message, agent messages, commands, sub-agent calls) are the
 * main source; a tool call that has none (a command the sandbox refused is recorded only as a
 * `response_item` function_call + output) is taken from the response items, and a rollout without any
 * item_completed (other Codex versions) is read from its response items alone.
 */
async function childMessages(q: ChildQuery, onMessage: (m: Message) => void): Promise<boolean> {
  if (!/^[0-9A-Za-z][0-9A-Za-z_-]{0,127}$/.test(q.childId)) return false;
  const file = findRollout(codexHome(q.storeEnv), q.childId);
  if (!file) return false;

  // Pass 1: does it belong to this run, and which calls have an item of their own?
  let belongs = true;
  let items = 0;
  const itemIds = new Set<string>();
  await eachLine(file, (line) => {
    const p = rec(line.payload);
    if (line.type === 'session_meta') {
      const parents = [str(p.parent_thread_id), str(rec(rec(rec(p.source).subagent).thread_spawn).parent_thread_id), str(p.session_id)];
      if (q.sessionId !== null && !parents.includes(q.sessionId)) {
        belongs = false;
        return false;
      }
    } else if (line.type === 'event_msg' && p.type === 'item_completed') {
      items++;
      const id = str(rec(p.item).id);
      if (id) itemIds.add(id);
    }
  });
  if (!belongs) return false;

  // Pass 2: the messages, in order.
  const calls = new Map<string, Json>();
  await eachLine(file, (line) => {
    const p = rec(line.payload);
    if (line.type === 'event_msg' && p.type === 'item_completed') {
      const item = itemOf(p.item);
      if (!item) return;
      if (item.type === 'user_message') {
        const text = contentText(item.raw.content);
        if (text && !isContextMessage(text)) onMessage({ role: 'user', text });
      } else if (item.type === 'agent_message') {
        onMessage({ role: 'assistant', text: str(item.raw.text) ?? contentText(item.raw.content) });
      } else if (!NOT_TOOLS.has(item.type)) {
        onMessage(toolMessage(item));
      }
      return;
    }
    if (line.type !== 'response_item') return;
    if (p.type === 'message') {
      if (items > 0) return;
      const text = contentText(p.content);
      if (p.role === 'assistant' && text) onMessage({ role: 'assistant', text });
      else if (p.role === 'user' && text && !isContextMessage(text)) onMessage({ role: 'user', text });
    } else if (p.type === 'function_call' || p.type === 'custom_tool_call' || p.type === 'local_shell_call') {
      const id = str(p.call_id) ?? '';
      if (!itemIds.has(id)) calls.set(id, p);
    } else if (p.type === 'function_call_output' || p.type === 'custom_tool_call_output') {
      const id = str(p.call_id) ?? '';
      const call = calls.get(id);
      if (!call) return;
      calls.delete(id);
      onMessage(callMessage(call, p.output));
    }
  });
  return true;
}

// ------------------------------------------------------------------------------------------------
// Launch.

function launch(input: LaunchInput): Launch {
  // Exec-level options, valid for a new run and (placed before `resume`) for a resume. The caller's
  // arguments come first: a multi-value option among them (`-i a.png b.png`) then ends at our first
  // flag instead of swallowing `resume <id> -` (codex would silently start a new thread) or `-`.
  const options = [...input.extraArgs, '--json', '--skip-git-repo-check', '-C', input.cwd];
  if (input.model) options.push('-m', input.model);
  if (input.variant) options.push('-c', `model_reasoning_effort=${JSON.stringify(input.variant)}`);
  if (input.mode === 'new') return { command: 'codex', args: ['exec', ...options, '-'], env: {} };
  // `resume` with anything but a thread UUID is taken as a thread *name*, and an unknown name silently
  // starts a new thread: never let that happen.
  if (!input.sessionId || !UUID.test(input.sessionId)) {
    throw new SubagentError('E_SESSION_NOT_FOUND', `codex cannot resume "${input.sessionId ?? ''}": not a thread id`, {
      sessionId: input.sessionId,
      hint: 'the earlier run never reported a Codex thread id (thread.started); start a new name instead',
    });
  }
  return { command: 'codex', args: ['exec', ...options, 'resume', input.sessionId, '-'], env: {} };
}

// ------------------------------------------------------------------------------------------------

/** The adapter, with the parser's Codex extras visible (options, `state.threadUsage`, `end()`). */
export interface CodexAdapter extends AgentAdapter {
  parser(onMessage?: (m: Message) => void, options?: CodexParserOptions): CodexStreamParser;
}

export const codex: CodexAdapter = {
  cli: 'codex',
  program: 'codex',
  // --variant is the reasoning effort; there is no per-run agent flag (profiles are config layers:
  // pass `-- -p NAME`), and `-i` takes images only, so --file is refused rather than half-honoured.
  supports: { model: true, variant: true, agent: false, files: false, resume: true },
  gracefulSignal: 'SIGINT',
  stream: 'ndjson',
  storeEnvKeys: ['CODEX_HOME', 'HOME'],
  chooseSessionId: () => null,
  launch,
  parser,
  verdict,
  childMessages,
};
