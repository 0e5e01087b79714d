import { spawn } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import type { ChildAgent, Usage } from '../registry/record.js';
import type { AgentAdapter, ChildQuery, Launch, LaunchInput, Message, StreamParser, StreamState, ToolCall, Verdict } from './types.js';
import { emptyState } from './types.js';
import { isoOf, nowIso } from '../base/time.js';

/**
 * OpenCode (`opencode run --format json`, measured with 1.18.33; see docs/agents/opencode.md).
 *
 * stdout is one JSON event per line: `{type, timestamp, sessionID, part|error}` with types
 * `step_start`, `text` (one per finished text part), `reasoning` (only with --thinking), `tool_use` (only
 * once the tool has finished), `step_finish` (`reason`, `tokens`, `cost`) and `error`. The session id is
 * on every line, the first one included. A sub-agent is the `task` tool: its tool_use carries the child
 * session in `state.metadata.sessionId`; the child's own work is not streamed, only its final answer
 * inside the task output. The child's words are read back with `opencode export <child session>`.
 */

/** Caps for the short summaries a transcript keeps of tool calls. */
export const TOOL_INPUT_MAX = 300;
export const TOOL_OUTPUT_MAX = 500;
/** `opencode export` of one child: give up after this long, and never read more than this. */
const EXPORT_TIMEOUT_MS = 60_000;
const EXPORT_MAX_BYTES = 64 * 1024 * 1024;

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
}

/**
 * What locates a run's store for `opencode export`: the SQLite file (OPENCODE_DB, else XDG_DATA_HOME, else
 * HOME/.local/share) and the config export loads on the way (so it sees what the run saw). Never
 * OPENCODE_CONFIG_CONTENT: it can hold API keys, and records are plain files.
 */
export const STORE_ENV_KEYS: readonly string[] = ['HOME', 'XDG_DATA_HOME', 'OPENCODE_DB', 'XDG_CONFIG_HOME', 'XDG_CACHE_HOME', 'XDG_STATE_HOME', 'OPENCODE_CONFIG', 'OPENCODE_CONFIG_DIR'];

const extras = new WeakMap<StreamState, OpencodeExtra>();

/** The opencode-specific facts a parser has gathered (undefined for a state no opencode parser made). */
export function opencodeExtra(state: StreamState): OpencodeExtra | undefined {
  return extras.get(state);
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function str(v: unknown): string | null {
  return typeof v === 'string' ? v : null;
}

function num(v: unknown): number {
  return typeof v === 'number' && Number.isFinite(v) ? v : 0;
}


/** Shortens to `max` characters (whitespace runs folded), with an ellipsis when cut. */
export function short(text: string, max: number): string {
  const t = text.replace(/\s+/g, ' ').trim();
  return t.length <= max ? t : t.slice(0, max - 1) + '…';
}

/** The one argument that says what a tool call does, for the readable `text` (`bash: ls -la`). */
function toolInputSummary(tool: string, input: unknown): string | null {
  if (!isRecord(input)) return input === undefined || input === null ? null : short(String(input), TOOL_INPUT_MAX);
  const pick = (...keys: string[]): string | null => {
    for (const k of keys) {
      const v = input[k];
      if (typeof v === 'string' && v !== '') return v;
    }
    return null;
  };
  let main: string | null = null;
  switch (tool) {
    case 'bash':
      main = pick('command');
      break;
    case 'read':
    case 'write':
    case 'edit':
    case 'multiedit':
      main = pick('filePath', 'path');
      break;
    case 'glob':
    case 'grep':
      main = pick('pattern');
      break;
    case 'task':
      main = pick('description', 'prompt');
      break;
    case 'webfetch':
      main = pick('url');
      break;
    default:
      break;
  }
  if (main === null) {
    const json = JSON.stringify(input);
    main = json === '{}' ? null : json;
  }
  return main === null ? null : short(main, TOOL_INPUT_MAX);
}

/** The words inside a task tool's output: `<task id=… state=…>\n<task_result>\n…\n</task_result>\n</task>`. */
export function taskResult(output: string): string {
  const m = /<task_result>\n?([\s\S]*?)\n?<\/task_result>/.exec(output);
  return (m ? (m[1] ?? '') : output).trim();
}

function taskChildId(state: Record<string, unknown>): string | null {
  const meta = isRecord(state.metadata) ? state.metadata : {};
  const fromMeta = str(meta.sessionId);
  if (fromMeta) return fromMeta;
  const out = str(state.output);
  const m = out ? /<task id="([^"]+)"/.exec(out) : null;
  return m?.[1] ?? null;
}

interface ToolPart {
  tool: string;
  call: ToolCall;
  text: string;
  state: Record<string, unknown>;
}

/** A `tool` part (of the stream's tool_use events and of `opencode export`) as a transcript message. */
function toolPart(part: Record<string, unknown>): ToolPart {
  const tool = str(part.tool) ?? 'tool';
  const state = isRecord(part.state) ? part.state : {};
  const status = str(state.status);
  const input = toolInputSummary(tool, state.input);
  let output: string | null = null;
  if (status === 'error') output = str(state.error);
  else if (typeof state.output === 'string') output = tool === 'task' ? taskResult(state.output) : state.output;
  const call: ToolCall = { name: tool, input, output: output === null ? null : short(output, TOOL_OUTPUT_MAX), status };
  const label = tool === 'task' ? str(isRecord(state.input) ? state.input.description : null) ?? input : input;
  return { tool, call, text: label ? `${tool}: ${label}` : tool, state };
}

const REJECTED = /rejected permission/i;

export function parseOpencode(onMessage?: (m: Message) => void): StreamParser {
  const state = emptyState();
  const extra: OpencodeExtra = { lastStepReason: null, steps: 0, textParts: 0, rejectedTools: [], lastTextMessageId: null };
  extras.set(state, extra);
  let costSeen = false;

  const addUsage = (part: Record<string, unknown>): void => {
    const t = isRecord(part.tokens) ? part.tokens : {};
    const cache = isRecord(t.cache) ? t.cache : {};
    const u: Usage = state.usage ?? { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0, totalTokens: 0, costUsd: null };
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
    const input = isRecord(tp.state.input) ? tp.state.input : {};
    const time = isRecord(tp.state.time) ? tp.state.time : {};
    const status: ChildAgent['status'] = tp.call.status === 'completed' ? 'done' : tp.call.status === 'error' ? 'failed' : tp.call.status === 'running' || tp.call.status === 'pending' ? 'running' : 'unknown';
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
      if (text.trim() === '') return;
      let ev: unknown;
      try {
        ev = JSON.parse(text);
      } catch {
        state.skippedLines++;
        return;
      }
      if (!isRecord(ev) || typeof ev.type !== 'string') {
        state.skippedLines++;
        return;
      }
      state.lastActivityAt = isoOf(ev.timestamp) ?? nowIso();
      if (state.sessionId === null) state.sessionId = str(ev.sessionID);
      const part = isRecord(ev.part) ? ev.part : {};
      switch (ev.type) {
        case 'text': {
          const t = str(part.text);
          if (t === null) break;
          extra.textParts++;
          const mid = str(part.messageID);
          // The answer is the last assistant message's text; several text parts of one message join.
          state.lastAssistantText = mid !== null && mid === extra.lastTextMessageId && state.lastAssistantText !== null ? `${state.lastAssistantText}\n\n${t}` : t;
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
          extra.steps++;
          break;
        case 'step_finish':
          extra.lastStepReason = str(part.reason);
          addUsage(part);
          break;
        case 'error': {
          const err = isRecord(ev.error) ? ev.error : {};
          const data = isRecord(err.data) ? err.data : {};
          const name = str(err.name) ?? 'Error';
          const message = str(data.message) ?? str(err.message) ?? JSON.stringify(err).slice(0, 300);
          const status = typeof data.statusCode === 'number' ? ` (HTTP ${data.statusCode})` : '';
          state.fatalError = short(`${name}: ${message}${status}`, 500);
          break;
        }
        default:
          // reasoning (with --thinking) and future event types: not part of the transcript.
          break;
      }
    },
  };
}

/** Where an explicit `--` would end the options of `opencode run` (files must come before it). */
function filesAt(extraArgs: string[]): number {
  const dd = extraArgs.indexOf('--');
  return dd === -1 ? extraArgs.length : dd;
}

export function opencodeLaunch(input: LaunchInput): Launch {
  const args = ['run', '--format', 'json'];
  if (input.model) args.push('--model', input.model);
  if (input.agent) args.push('--agent', input.agent);
  if (input.variant) args.push('--variant', input.variant);
  if (input.mode === 'resume') {
    if (!input.sessionId) throw new Error('opencode: a resume needs the session id of the run it continues');
    args.push('--session', input.sessionId);
  }
  // `--file` is a yargs array: it swallows every following argument up to the next option. So the
  // files go last (or just before an explicit `--` of the user's), where they cannot eat a message.
  const at = filesAt(input.extraArgs);
  const files = input.files.flatMap((f) => ['--file', f]);
  args.push(...input.extraArgs.slice(0, at), ...files, ...input.extraArgs.slice(at));
  // OpenCode takes its project directory from $PWD when set, not from its real cwd: with the caller's
  // PWD inherited it would work on the caller's directory (measured: a run in --cwd /tmp/x snapshotted
  // and worked on /work/main instead). The supervisor starts us in the run's cwd; make PWD say so.
  return { command: 'opencode', args, env: { PWD: input.cwd } };
}

export function opencodeVerdict(exit: { code: number | null; signal: string | null }, state: StreamState): Verdict {
  if (state.fatalError) return { outcome: 'failed', error: state.fatalError };
  if (exit.signal) return { outcome: 'failed', error: `opencode was killed by ${exit.signal}` };
  if (exit.code !== 0) return { outcome: 'failed', error: `opencode exited with status ${exit.code}${state.sessionId === null ? ' before opening a session' : ''}` };
  const extra = extras.get(state);
  if (!extra) return { outcome: 'succeeded', error: null };
  if (extra.steps === 0 && extra.textParts === 0 && state.toolUses === 0) {
    return { outcome: 'failed', error: 'opencode exited 0 without any event (no answer)' };
  }
  const reason = extra.lastStepReason;
  if (reason === 'tool-calls' || reason === null) {
    const step = `its last step ${reason === null ? 'never finished' : 'ended asking for tools'}`;
    const error = extra.rejectedTools.length
      ? `opencode stopped without a final answer: a permission ask was auto-rejected (${short(extra.rejectedTools.join('; '), 200)}); ${step} (allow the tool in the opencode config, or pass -- --auto)`
      : `opencode stopped without a final answer: ${step}`;
    return { outcome: 'failed', error };
  }
  if (reason === 'length' || reason === 'content-filter' || reason === 'error') {
    return { outcome: 'failed', error: `opencode's last step ended with reason "${reason}"` };
  }
  return { outcome: 'succeeded', error: null };
}

/** Messages of one exported session (`opencode export <id>`: `{info, messages:[{info, parts}]}`). */
export function exportMessages(doc: unknown, onMessage: (m: Message) => void, childId?: string): number {
  if (!isRecord(doc) || !Array.isArray(doc.messages)) return 0;
  const tag = childId ? { childId } : {};
  let n = 0;
  for (const msg of doc.messages) {
    if (!isRecord(msg)) continue;
    const role = isRecord(msg.info) ? str(msg.info.role) : null;
    const parts = Array.isArray(msg.parts) ? msg.parts : [];
    for (const p of parts) {
      if (!isRecord(p)) continue;
      if (p.type === 'text' && typeof p.text === 'string') {
        if (p.synthetic === true || p.ignored === true) continue;
        onMessage({ role: role === 'user' ? 'user' : 'assistant', text: p.text, ...tag });
        n++;
      } else if (p.type === 'tool') {
        const tp = toolPart(p);
        onMessage({ role: 'tool', text: tp.text, tool: tp.call, ...tag });
        n++;
      }
    }
  }
  return n;
}

/** The directory of a run's SQLite store (`$XDG_DATA_HOME/opencode`, default `~/.local/share/opencode`). */
export function opencodeDataDir(env: Record<string, string | undefined>): string | null {
  if (env.XDG_DATA_HOME) return join(env.XDG_DATA_HOME, 'opencode');
  if (env.HOME) return join(env.HOME, '.local', 'share', 'opencode');
  return null;
}

/**
 * Whether the run's store exists: `$OPENCODE_DB` (absolute, or relative to the data dir) when set, else
 * an `opencode*.db` in the data dir (release builds use `opencode.db`, other channels `opencode-<ch>.db`).
 */
export function opencodeStoreExists(env: Record<string, string | undefined>): boolean {
  const data = opencodeDataDir(env);
  const db = env.OPENCODE_DB;
  if (db) {
    if (db === ':memory:') return false;
    if (isAbsolute(db)) return existsSync(db);
    return data !== null && existsSync(join(data, db));
  }
  if (data === null) return false;
  try {
    return readdirSync(data).some((f) => /^opencode.*\.db$/.test(f));
  } catch {
    return false;
  }
}

/** Runs `opencode export <id>` with the run's store env; resolves its stdout, or null when it failed. */
function runExport(id: string, q: ChildQuery): Promise<string | null> {
  return new Promise((resolve) => {
    // The run's store, not the caller's: a store variable the run did not have must not leak in.
    const env: NodeJS.ProcessEnv = { ...process.env };
    for (const k of STORE_ENV_KEYS) delete env[k];
    Object.assign(env, q.storeEnv);
    const cwd = existsSync(q.cwd) ? q.cwd : undefined;
    // OpenCode believes $PWD over its real cwd (see opencodeLaunch).
    if (cwd) env.PWD = cwd;
    else delete env.PWD;
    let child;
    try {
      // stdin ignored: without an id `export` would open an interactive picker (we always pass one).
      child = spawn('opencode', ['export', id], { cwd, env, stdio: ['ignore', 'pipe', 'ignore'] });
    } catch {
      resolve(null);
      return;
    }
    const chunks: Buffer[] = [];
    let bytes = 0;
    let done = false;
    const end = (v: string | null): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      resolve(v);
    };
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      end(null);
    }, EXPORT_TIMEOUT_MS);
    child.stdout.on('data', (c: Buffer) => {
      bytes += c.length;
      if (bytes > EXPORT_MAX_BYTES) {
        child.kill('SIGKILL');
        end(null);
        return;
      }
      chunks.push(c);
    });
    child.on('error', () => end(null));
    child.on('close', (code) => end(code === 0 ? Buffer.concat(chunks).toString('utf8') : null));
  });
}

/** The JSON document in export's stdout (it is the whole stdout today; tolerate a line of noise first). */
function parseExport(out: string): unknown {
  try {
    return JSON.parse(out);
  } catch {
    const at = out.indexOf('\n{');
    if (at === -1) return null;
    try {
      return JSON.parse(out.slice(at + 1));
    } catch {
      return null;
    }
  }
}

/** How long the first run of a store may take to create it, and after how long a lock is stale. */
export const PREPARE_TIMEOUT_MS = 120_000;
export const PREPARE_LOCK = '.subagents-init.lock';

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Runs `opencode ARGS` quietly (stdin closed, output dropped); resolves its exit code (null: failed/timeout). */
function runQuiet(args: string[], env: NodeJS.ProcessEnv, cwd: string | undefined, timeoutMs: number): Promise<number | null> {
  return new Promise((resolve) => {
    let child;
    try {
      child = spawn('opencode', args, { cwd, env, stdio: 'ignore' });
    } catch {
      resolve(null);
      return;
    }
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', () => {
      clearTimeout(timer);
      resolve(null);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve(code);
    });
  });
}

/**
 * Creates the run's OpenCode store before the first run in it, one creator at a time. OpenCode 1.18.33
 * migrates a new database with no lock of its own: several `opencode run` started at once on a store that
 * does not exist yet race on `CREATE TABLE` and all but one exit 1 ("Failed query: CREATE TABLE
 * `workspace` …"; measured: 1 to 2 of 4 concurrent first runs). So the first caller takes a lock file in the
 * data dir and runs `opencode db path` (which creates and migrates the database, ~1–2 s), and the others wait
 * for it. Once the store exists this costs one stat. Meant for the supervisor, in the run's environment,
 * right before it starts the agent (see docs/agents/opencode.md).
 */
export async function opencodePrepare(env: NodeJS.ProcessEnv, cwd?: string): Promise<void> {
  const data = opencodeDataDir(env);
  if (data === null) return;
  const lock = join(data, PREPARE_LOCK);
  const deadline = Date.now() + PREPARE_TIMEOUT_MS;
  for (;;) {
    if (opencodeStoreExists(env) && !existsSync(lock)) return;
    let fd: number;
    try {
      mkdirSync(data, { recursive: true });
      fd = openSync(lock, 'wx');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') return; // cannot lock here: let OpenCode cope
      try {
        // A creator that died keeps its lock: after the timeout it is stale.
        if (Date.now() - statSync(lock).mtimeMs > PREPARE_TIMEOUT_MS) unlinkSync(lock);
      } catch {
        /* released meanwhile */
      }
      if (Date.now() > deadline) return;
      await sleep(100);
      continue;
    }
    try {
      writeSync(fd, `${process.pid}\n`);
      closeSync(fd);
      if (!opencodeStoreExists(env)) await runQuiet(['db', 'path'], env, cwd && existsSync(cwd) ? cwd : undefined, PREPARE_TIMEOUT_MS);
    } finally {
      try {
        unlinkSync(lock);
      } catch {
        /* gone */
      }
    }
    return;
  }
}

export async function opencodeChildMessages(q: ChildQuery, onMessage: (m: Message) => void): Promise<boolean> {
  // Never let `export` create an empty store where the run had none.
  if (!opencodeStoreExists(q.storeEnv)) return false;
  if (!/^[A-Za-z0-9_-]+$/.test(q.childId)) return false;
  const out = await runExport(q.childId, q);
  if (out === null) return false;
  const doc = parseExport(out);
  if (!isRecord(doc) || !isRecord(doc.info)) return false;
  // Only a sub-agent of this run's session (when we know it) is this run's child.
  if (q.sessionId && typeof doc.info.parentID === 'string' && doc.info.parentID !== q.sessionId) return false;
  exportMessages(doc, onMessage, q.childId);
  return true;
}

/** The supervisor calls `prepare` (opencodePrepare) with the agent's environment before it spawns the agent. */
export const opencode: AgentAdapter = {
  cli: 'opencode',
  program: 'opencode',
  supports: { model: true, variant: true, agent: true, files: true, resume: true },
  // OpenCode dies at once on SIGTERM or SIGINT alike (no final event either way) and leaves its bash
  // tool running; the core's cancel signals every process of the run's tree, tools included.
  gracefulSignal: 'SIGTERM',
  stream: 'ndjson',
  storeEnvKeys: STORE_ENV_KEYS,
  chooseSessionId: () => null,
  launch: opencodeLaunch,
  parser: parseOpencode,
  verdict: opencodeVerdict,
  childMessages: opencodeChildMessages,
  prepare: opencodePrepare,
};
