import { closeSync, existsSync, openSync, readFileSync, readSync, unlinkSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { listDir } from '../../base/dir.js';
import { fields, isObject, parseObject, str, type JsonObject } from '../../base/json.js';
import { LineFollower } from '../../base/lines.js';
import { isUuid } from '../../base/uuid.js';
import type { ChildQuery, Message, SessionQuery } from '../types.js';
import { runningChild } from '../shared/children.js';
import { AGENT_TOOL, COMPLETE_TASK, submittedAnswer, toolInput, toolMessage } from './tools.js';

/**
 * The Gemini CLI's own store: `$GEMINI_CLI_HOME` (else `$HOME`)/.gemini/tmp/<project>/chats/, one chat
 * file per session (`session-<time>-<id8>.jsonl`) and, for each sub-agent a session ran, the child's own
 * chat `<session id>/<child session id>.jsonl`. `<project>` is the short name `projects.json` gives the
 * run's directory.
 */

export const STORE_ENV_KEYS: readonly string[] = ['HOME', 'GEMINI_CLI_HOME'];

/** The `.gemini` directory of the run's store (as the run had HOME / GEMINI_CLI_HOME). */
export function geminiDir(storeEnv: Record<string, string>, fallback: NodeJS.ProcessEnv = process.env): string {
  const home = storeEnv.GEMINI_CLI_HOME || storeEnv.HOME || fallback.GEMINI_CLI_HOME || fallback.HOME || homedir();
  return join(home, '.gemini');
}

/** The chats directories to look in: the run's project first (by projects.json), then every project. */
function chatDirs(gemini: string, cwd: string): string[] {
  const tmp = join(gemini, 'tmp');
  const dirs: string[] = [];
  try {
    const projects = fields(parseObject(readFileSync(join(gemini, 'projects.json'), 'utf8'))?.projects);
    const short = str(projects[cwd]);
    if (short && /^[^/\\]+$/.test(short) && short !== '..') dirs.push(join(tmp, short, 'chats'));
  } catch {
    /* no registry yet: scan */
  }
  for (const p of listDir(tmp)) {
    const d = join(tmp, p, 'chats');
    if (!dirs.includes(d)) dirs.push(d);
  }
  return dirs;
}

/**
 * A chat as the CLI itself rebuilds it from its records: one record per message id (a later line with
 * the same id replaces it in place), `$set.messages` replaces them all, `$rewindTo` drops a message and
 * what follows it; a line with a `sessionId` (the file's first) is its metadata.
 */
export class Chat {
  meta: JsonObject = {};
  private readonly byId = new Map<string, JsonObject>();

  /** Applies one record of the file. */
  apply(r: JsonObject): void {
    if (typeof r.$rewindTo === 'string') {
      let found = false;
      for (const id of [...this.byId.keys()]) {
        if (id === r.$rewindTo) found = true;
        if (found) this.byId.delete(id);
      }
      if (!found) this.byId.clear();
    } else if (typeof r.id === 'string') {
      this.byId.set(r.id, r);
    } else if (isObject(r.$set)) {
      if (Array.isArray(r.$set.messages)) {
        this.byId.clear();
        for (const m of r.$set.messages) if (isObject(m) && typeof m.id === 'string') this.byId.set(m.id, m);
      }
    } else if (typeof r.sessionId === 'string') {
      this.meta = { ...this.meta, ...r };
    }
  }

  get messages(): JsonObject[] {
    return [...this.byId.values()];
  }
}

/** The messages of a chat file, as the CLI itself rebuilds them (`Chat`), and its metadata (`{sessionId, kind, …}`). */
export function readChat(file: string): { meta: JsonObject; messages: JsonObject[] } {
  const chat = new Chat();
  new LineFollower(file, (text) => {
    const r = parseObject(text);
    if (r) chat.apply(r);
  }).flush();
  return { meta: chat.meta, messages: chat.messages };
}

const CHILD_ID = /^[A-Za-z0-9][A-Za-z0-9_.#-]{0,199}$/;

/** Enough for a chat's first line (its session, project hash, times and kind). */
const FIRST_LINE_MAX = 4096;

/** The first line of a file as an object (a chat's `{sessionId, kind, …}`), read alone. */
function firstLine(file: string): JsonObject | null {
  let first: JsonObject | null = null;
  try {
    const fd = openSync(file, 'r');
    try {
      const buf = Buffer.alloc(FIRST_LINE_MAX);
      const text = buf.subarray(0, readSync(fd, buf, 0, buf.length, 0)).toString('utf8');
      const end = text.indexOf('\n');
      first = parseObject(end === -1 ? text : text.slice(0, end));
    } finally {
      closeSync(fd);
    }
  } catch {
    /* gone or unreadable: not this session's */
  }
  return first;
}

/** The session's own chat file in a chats directory (`session-<time>-<first 8 of the id>.jsonl`). */
function chatIn(chats: string, sessionId: string): string | null {
  const suffix = `-${sessionId.slice(0, 8)}.jsonl`;
  for (const n of listDir(chats)) {
    if (!n.startsWith('session-') || !n.endsWith(suffix)) continue;
    if (firstLine(join(chats, n))?.sessionId === sessionId) return join(chats, n);
  }
  return null;
}

/** The messages of the session's own chat in a chats directory. */
function sessionMessages(chats: string, sessionId: string): JsonObject[] | null {
  const file = chatIn(chats, sessionId);
  return file ? readChat(file).messages : null;
}

/** Every chat file of the session in the run's store, by name in each chats directory (the run's project first). */
export function sessionChats(q: Pick<SessionQuery, 'sessionId' | 'cwd' | 'storeEnv'>): string[] {
  if (!isUuid(q.sessionId)) return [];
  const suffix = `-${q.sessionId.slice(0, 8)}.jsonl`;
  const files: string[] = [];
  for (const chats of chatDirs(geminiDir(q.storeEnv), q.cwd)) {
    for (const n of listDir(chats).sort()) {
      if (n.startsWith('session-') && n.endsWith(suffix) && firstLine(join(chats, n))?.sessionId === q.sessionId) files.push(join(chats, n));
    }
  }
  return files;
}

/**
 * Whether a chat message is one a resume would bring back (the CLI's own test): a user message with
 * words of the user's, or a model message with words, thoughts or tool calls.
 */
export function resumable(m: JsonObject): boolean {
  if (m.type === 'user') return contentText(m.content).trim() !== '';
  if (m.type !== 'gemini') return false;
  return contentText(m.content).trim() !== '' || toolCalls(m).length > 0 || (Array.isArray(m.thoughts) && m.thoughts.length > 0);
}

/** Whether a chat file holds a conversation (a message a resume brings back); null when it cannot be read now. */
export function holdsConversation(file: string): boolean | null {
  try {
    return readChat(file).messages.some(resumable);
  } catch {
    return null;
  }
}

/**
 * Removes the chat files of the session that hold no conversation when another one does. A resume a
 * minute or more after the session's chat was made (`gemini --resume`, in its TUI or headless) starts
 * such a file before it loads the session's own; the CLI's clean-up, at the start of any other session
 * in the project, takes it for broken and deletes every file of the session's short id with it — the
 * session's own chat included. A new session's only chat, still empty, is never one of them.
 */
export function tidySession(q: Pick<SessionQuery, 'sessionId' | 'cwd' | 'storeEnv'>): void {
  const files = sessionChats(q);
  if (files.length < 2) return;
  const held = files.map(holdsConversation);
  if (!held.includes(true)) return;
  files.forEach((f, i) => {
    if (held[i] !== false) return;
    try {
      unlinkSync(f);
    } catch {
      /* gone already: the CLI's clean-up may have been first */
    }
  });
}

/** The session's own chat file in the run's store (null: none yet). */
export function sessionChat(q: Pick<SessionQuery, 'sessionId' | 'cwd' | 'storeEnv'>): string | null {
  if (!isUuid(q.sessionId)) return null;
  for (const chats of chatDirs(geminiDir(q.storeEnv), q.cwd)) {
    const file = chatIn(chats, q.sessionId);
    if (file) return file;
  }
  return null;
}

/** Where a child of the run's session is kept: its own chat file, and the session's record of its call. */
export interface ChildRecord {
  /** `<session id>/<child session id>.jsonl`, when it exists. */
  chat: string | null;
  /** The `invoke_agent` call in the session's chat (its `agentId`, its `result`), once the call has ended. */
  call: JsonObject | null;
}

/** The tool calls a chat message records. */
function toolCalls(m: JsonObject): JsonObject[] {
  return Array.isArray(m.toolCalls) ? m.toolCalls.map(fields) : [];
}

/** The session's record of a child's call: asked by the call id (the stream's) or the child's session id. */
function childCall(messages: JsonObject[], childId: string): JsonObject | null {
  for (const m of messages) {
    for (const c of toolCalls(m)) if (c.id === childId || c.agentId === childId) return c;
  }
  return null;
}

/**
 * The chat of a child still running: the session records its call (and so its session id) only when it
 * ends, so it is the session's sub-agent chat that no recorded call claims and whose first message is
 * the task the stream showed (`description`, as the record keeps it); the newest when several are.
 */
function runningChat(dir: string, parent: JsonObject[] | null, description: string): string | null {
  const claimed = new Set((parent ?? []).flatMap((m) => toolCalls(m).map((c) => str(c.agentId))));
  const agent = description.slice(0, Math.max(0, description.indexOf(': ')));
  let best: { file: string; start: string } | null = null;
  for (const n of listDir(dir)) {
    const id = n.endsWith('.jsonl') ? n.slice(0, -'.jsonl'.length) : '';
    if (!CHILD_ID.test(id) || claimed.has(id)) continue;
    const chat = readChat(join(dir, n));
    if (chat.meta.kind !== 'subagent') continue;
    const first = chat.messages.find((m) => m.type === 'user');
    const task = toolInput(AGENT_TOOL, { agent_name: agent, prompt: contentText(first?.content) });
    if (runningChild(id, 'gemini', task).description !== description) continue;
    const start = str(chat.meta.startTime) ?? '';
    if (!best || start > best.start) best = { file: join(dir, n), start };
  }
  return best?.file ?? null;
}

/**
 * A child of the run's session, asked by the `invoke_agent` call id the stream gave it (the session's
 * chat names the call's `agentId`, the child's own session) or by that session id; a child still running
 * by its `description` (`runningChat`). Null when the store has neither its chat file nor its call.
 */
export function findChild(q: Pick<ChildQuery, 'sessionId' | 'cwd' | 'childId' | 'storeEnv' | 'description'>): ChildRecord | null {
  if (!isUuid(q.sessionId) || !CHILD_ID.test(q.childId)) return null;
  for (const chats of chatDirs(geminiDir(q.storeEnv), q.cwd)) {
    const dir = join(chats, q.sessionId);
    const parent = sessionMessages(chats, q.sessionId);
    const call = parent ? childCall(parent, q.childId) : null;
    const agentId = call ? str(call.agentId) : q.childId;
    const file = agentId && CHILD_ID.test(agentId) ? join(dir, `${agentId}.jsonl`) : null;
    const chat = file && existsSync(file) ? file : !call && q.description ? runningChat(dir, parent, q.description) : null;
    if (chat || call) return { chat, call };
  }
  return null;
}

/** Text of a message's content: a string, or parts whose text is the user's (not the CLI's context). */
function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((p) => str(fields(p).text) ?? '')
    .filter((t) => t !== '' && !/^\s*<session_context>/.test(t))
    .join('\n');
}

/** What a recorded tool call answered: its display text, else the model's functionResponse output. */
export function callOutput(call: JsonObject): string | null {
  if (typeof call.resultDisplay === 'string') return call.resultDisplay;
  const response = fields(fields(fields(Array.isArray(call.result) ? call.result[0] : null).functionResponse).response);
  return str(response.output) ?? str(response.error);
}

/** A child's messages from its own chat file: its prompt, its words, its tool calls, and its answer (`complete_task`). */
function chatMessages(file: string, onMessage: (m: Message) => void): number {
  let n = 0;
  const say = (m: Message): void => {
    onMessage(m);
    n++;
  };
  for (const m of readChat(file).messages) chatMessage(m, say);
  return n;
}

/** The transcript's messages of one chat message: a prompt, or the model's words and tool calls (a child's answer, `complete_task`, as words). */
export function chatMessage(m: JsonObject, say: (m: Message) => void): void {
  const text = contentText(m.content);
  if (m.type === 'user') {
    if (text.trim()) say({ role: 'user', text });
    return;
  }
  if (m.type !== 'gemini') return;
  if (text.trim()) say({ role: 'assistant', text });
  for (const call of toolCalls(m)) {
    const name = str(call.name) ?? 'tool';
    const answer = name === COMPLETE_TASK ? submittedAnswer(call.args) : null;
    say(answer === null ? toolMessage(name, call.args, callOutput(call), str(call.status)) : { role: 'assistant', text: answer });
  }
}

/**
 * A child's messages from the run's store: from its own chat file; when that holds nothing (the CLI
 * empties the chat of a child that failed) from the session's record of its call, the prompt it was
 * given and what the call returned (`Subagent '…' failed. Error: …`).
 */
export async function childMessages(q: ChildQuery, onMessage: (m: Message) => void): Promise<boolean> {
  const found = findChild(q);
  if (!found) return false;
  const tagged = (m: Message): void => onMessage({ ...m, childId: q.childId });
  if (found.chat && chatMessages(found.chat, tagged) > 0) return true;
  if (!found.call) return true;
  const prompt = str(fields(found.call.args).prompt);
  if (prompt) tagged({ role: 'user', text: prompt });
  const returned = callOutput({ result: found.call.result });
  if (returned) tagged({ role: 'assistant', text: returned });
  return true;
}
