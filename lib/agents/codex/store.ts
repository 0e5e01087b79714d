import { createReadStream } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { listDir } from '../../base/dir.js';
import { cap, fields, parseObject, str, type JsonObject } from '../../base/json.js';
import type { ChildQuery, Message } from '../types.js';
import { commandText, contentText, INPUT_MAX, itemOf, NOT_TOOLS, OUTPUT_MAX, toolMessage } from './items.js';

/**
 * Codex's own store: $CODEX_HOME (default ~/.codex)/sessions/YYYY/MM/DD/rollout-<time>-<thread_id>.jsonl,
 * one rollout file per thread; a sub-agent is a thread of its own, whose rollout names its parent.
 */

export function codexHome(storeEnv: Record<string, string>): string {
  if (storeEnv.CODEX_HOME) return storeEnv.CODEX_HOME;
  if (storeEnv.HOME) return join(storeEnv.HOME, '.codex');
  if (process.env.CODEX_HOME) return process.env.CODEX_HOME;
  return join(homedir(), '.codex');
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

// biome-ignore lint/suspicious/noConfusingVoidType: a visitor returns false to stop, or nothing to go on
async function eachLine(path: string, visit: (line: JsonObject) => boolean | void): Promise<void> {
  const input = createReadStream(path, { encoding: 'utf8' });
  const lines = createInterface({ input, crlfDelay: Infinity });
  try {
    for await (const text of lines) {
      // Blank lines, and the torn last line of a rollout still being written, are not events.
      const line = parseObject(text);
      if (line && visit(line) === false) break;
    }
  } finally {
    lines.close();
    input.destroy();
  }
}

/** Context Codex injects as user messages; not what anyone wrote. */
export function isContextMessage(text: string): boolean {
  const t = text.trimStart();
  return (
    /^<(environment_context|user_instructions|permissions instructions|turn_aborted|subagent_notification|collaboration_mode|skills_instructions)[\s>]/.test(
      t,
    ) || t.startsWith('# AGENTS.md')
  );
}

/** The tool message of a rollout `function_call` and its output (calls no item_completed describes). */
function callMessage(call: JsonObject, output: unknown): Message {
  const fn = str(call.name) ?? str(call.type) ?? 'tool';
  const args = str(call.arguments) ?? str(call.input) ?? (call.action === undefined ? '' : JSON.stringify(call.action));
  const shell = ['exec_command', 'shell', 'shell_command', 'local_shell_call'].includes(fn);
  let input = args;
  const a = parseObject(args);
  if (shell && a) input = commandText(a.cmd ?? a.command) || args;
  let out = typeof output === 'string' ? output : contentText(fields(output).content ?? output);
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
export async function childMessages(q: ChildQuery, onMessage: (m: Message) => void): Promise<boolean> {
  if (!/^[0-9A-Za-z][0-9A-Za-z_-]{0,127}$/.test(q.childId)) return false;
  const file = findRollout(codexHome(q.storeEnv), q.childId);
  if (!file) return false;

  // Pass 1: does it belong to this run, and which calls have an item of their own?
  let belongs = true;
  let items = 0;
  const itemIds = new Set<string>();
  await eachLine(file, (line) => {
    const p = fields(line.payload);
    if (line.type === 'session_meta') {
      const parents = [str(p.parent_thread_id), str(fields(fields(fields(p.source).subagent).thread_spawn).parent_thread_id), str(p.session_id)];
      if (q.sessionId !== null && !parents.includes(q.sessionId)) {
        belongs = false;
        return false;
      }
    } else if (line.type === 'event_msg' && p.type === 'item_completed') {
      items++;
      const id = str(fields(p.item).id);
      if (id) itemIds.add(id);
    }
  });
  if (!belongs) return false;

  // Pass 2: the messages, in order.
  const calls = new Map<string, JsonObject>();
  await eachLine(file, (line) => {
    const p = fields(line.payload);
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
