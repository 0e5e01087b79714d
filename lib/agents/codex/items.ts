import { cap, fields, str, type JsonObject } from '../../base/json.js';
import type { Message, ToolCall } from '../types.js';

/**
 * Codex's items, as its `--json` stream and its rollout files (the store) both carry them: one shape for
 * the two, and the transcript message of a tool item. Read by stream.ts and store.ts.
 */

export const INPUT_MAX = 300;
export const OUTPUT_MAX = 500;

/** Text of a content array (`[{type:"text"|"Text"|"output_text"|"input_text", text}]`) or a string. */
export function contentText(v: unknown): string {
  if (typeof v === 'string') return v;
  if (!Array.isArray(v)) return '';
  return v
    .map((b) => str(fields(b).text) ?? '')
    .filter((s) => s !== '')
    .join('\n');
}

// ------------------------------------------------------------------------------------------------
// Items: the stream's `item` (snake_case types) and the rollout's `event_msg/item_completed` items
// (PascalCase types, content arrays, argv arrays) normalised to one shape.

export interface Item {
  id: string | null;
  type: string;
  raw: JsonObject;
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

export function itemOf(v: unknown): Item | null {
  const raw = fields(v);
  const type = str(raw.type);
  if (!type) return null;
  return { id: str(raw.id), type: normaliseType(type), raw };
}

/** Items that are not tool calls. */
export const NOT_TOOLS: ReadonlySet<string> = new Set(['agent_message', 'user_message', 'reasoning', 'error']);

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

/** An `agents_states` entry: stream `{status, message}`, rollout `"pending_init"` or `{completed: "text"}`. */
export function agentState(v: unknown): { status: string; message: string | null } {
  if (typeof v === 'string') return { status: v.replace(/([a-z])([A-Z])/g, '$1_$2').toLowerCase(), message: null };
  const r = fields(v);
  if (typeof r.status === 'string') return { status: r.status.toLowerCase(), message: str(r.message) };
  const [key, value] = Object.entries(r)[0] ?? ['unknown', null];
  return { status: key.replace(/([a-z])([A-Z])/g, '$1_$2').toLowerCase(), message: str(value) };
}

function statesSummary(states: JsonObject): string | null {
  const parts = Object.entries(states).map(([id, v]) => {
    const s = agentState(v);
    return `${id}: ${s.status}${s.message ? `: ${s.message}` : ''}`;
  });
  return parts.length ? parts.join('; ') : null;
}

/** The transcript message of a finished (or, with `status`, unfinished) tool item. */
export function toolMessage(item: Item, statusOverride?: string): Message {
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
      const changes = Array.isArray(r.changes) ? r.changes.map(fields) : [];
      input = changes.map((c) => `${str(c.kind) ?? str(fields(c.kind).type) ?? 'change'} ${str(c.path) ?? ''}`.trim()).join(', ');
      break;
    }
    case 'mcp_tool_call': {
      name = `mcp:${str(r.server) ?? '?'}/${str(r.tool) ?? '?'}`;
      input = r.arguments === undefined ? null : typeof r.arguments === 'string' ? r.arguments : JSON.stringify(r.arguments);
      const err = str(fields(r.error).message);
      const result = fields(r.result);
      output = err !== null ? `error: ${err}` : contentText(result.content) || (r.result === undefined || r.result === null ? null : JSON.stringify(r.result));
      break;
    }
    case 'web_search': {
      input = str(r.query) ?? str(fields(r.action).query);
      break;
    }
    case 'collab_tool_call': {
      name = str(r.tool) ?? 'collab_tool_call';
      const receivers = Array.isArray(r.receiver_thread_ids) ? r.receiver_thread_ids.map(String) : [];
      input = str(r.prompt) ?? (receivers.length ? receivers.join(', ') : null);
      output = statesSummary(fields(r.agents_states)) ?? (receivers.length && str(r.prompt) ? receivers.join(', ') : null);
      break;
    }
    case 'todo_list': {
      const items = Array.isArray(r.items) ? r.items.map(fields) : [];
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
