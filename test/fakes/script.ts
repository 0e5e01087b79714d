// The shared part of the fake model servers: the directive language, the CLI-neutral "action" a fake
// answers with, request recording, and the HTTP plumbing (listen on 127.0.0.1:0, SSE, close).
//
// Each server file (anthropic.ts, openai-responses.ts, openai-chat.ts, google-genai.ts) is an `ApiAdapter`
// given to `startApi` and only knows its wire format: which requests are model calls, how to read one into
// a `Conversation`, how to name the tools of its CLI (`Flavor`), and how to write an `Action` back as that
// API's answer. See README.md beside this file.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

// ---------------------------------------------------------------------------------------------------
// What a fake answers with, independent of the wire format.

export interface ToolCall {
  /** Tool (function) name exactly as the CLI offered it, e.g. "Bash", "exec_command", "bash". */
  name: string;
  /** Tool arguments; serialised as JSON on the wire. */
  input: Record<string, unknown>;
  /** Call id; generated when absent. */
  id?: string;
  /** Responses API only: the namespace of a namespaced tool (Codex's multi_agent_v1 tools). */
  namespace?: string;
}

export type Action =
  /** Answer with text (stop reason "end of turn"); `headers` are added to the HTTP answer (a provider's
   * rate-limit headers on a request it allowed). */
  | { type: 'text'; text: string; delayMs?: number; headers?: Record<string, string> }
  /** Answer with tool calls (optionally preceded by text), stop reason "tool use"; `headers` as for text. */
  | { type: 'tool'; calls: ToolCall[]; text?: string; delayMs?: number; headers?: Record<string, string> }
  /** HTTP error status with the API's JSON error body. `retryAfterMs` is sent as a `retry-after-ms`
   * header (default 0; null = no header). OpenCode has no setting for its retries of 5xx/429 (5 retries,
   * 2 s doubling back-off, ~60 s) but honours this header, so by default its retries are immediate.
   * `headers` are added to the answer (a provider's limit signal: `retry-after`, rate-limit headers). */
  | { type: 'error'; status: number; message?: string; retryAfterMs?: number | null; delayMs?: number; headers?: Record<string, string> }
  /** HTTP 200 and a stream that then fails (Responses: response.failed; Anthropic: an `error` event;
   * chat completions: an `error` chunk). */
  | { type: 'fail'; message: string; delayMs?: number }
  /** Accept the request and never answer (until close()). For cancel tests. */
  | { type: 'hang' }
  /** Anything else, verbatim. */
  | { type: 'raw'; status: number; headers?: Record<string, string>; body: string; delayMs?: number };

// ---------------------------------------------------------------------------------------------------
// What a fake reads out of a request, independent of the wire format.

export interface ToolOutput {
  callId: string;
  /** The tool's name when the request says it (found from the matching call). */
  name?: string;
  /** The tool output as text (content blocks joined by "\n"). */
  text: string;
}

export interface Conversation {
  /** Text of the last message the user wrote (tool results and system reminders left out). */
  lastUserText: string;
  /** Outputs of tool calls that came after that message, in order. Empty on the first request of a turn. */
  toolOutputs: ToolOutput[];
  /** Names of the tools the CLI offered in this request. */
  toolNames: string[];
  /** System prompt / instructions text (used to spot auxiliary requests such as title generation). */
  system: string;
  /** Model name the CLI asked for. */
  model: string;
  /** The request is the CLI's own turn on a background task's end (Claude's `<task-notification>`): what it said. */
  taskNotification?: { taskId: string; status: string; result: string };
}

export interface FakeRequest {
  /** 0-based position of this request among all requests the server received. */
  index: number;
  method: string;
  /** Path with query string, e.g. "/v1/messages?beta=true". */
  url: string;
  headers: http.IncomingHttpHeaders;
  /** Parsed JSON body, or null (no body / not JSON). */
  body: unknown;
  /** Raw body length in bytes. */
  bodyBytes: number;
  /** Present for model requests the server understood. */
  conversation?: Conversation;
  /** Filled once the server decided: the action it answered with. */
  action?: Action;
  /** The token counts the server reported in its answer, when it sent some (chat completions `usage`, Responses `response.completed.usage`). */
  reportedUsage?: { promptTokens: number; completionTokens: number };
  /** How the action was chosen. */
  source?: 'handler' | 'script' | 'directive' | 'aux' | 'route';
  receivedAt: number;
}

/** A test's override: return an Action to answer with, or undefined to fall through to the script
 * queue and then the directives. */
export type Handler = (req: FakeRequest) => Action | undefined | Promise<Action | undefined>;

export interface FakeOptions {
  /** Actions answered in order, one per model request, before directives are looked at. Auxiliary
   * requests (e.g. OpenCode's title generation) do not consume them. */
  script?: Action[];
  /** Called first for every model request. */
  handler?: Handler;
  /** Port to listen on (default 0 = any free one). Always 127.0.0.1. */
  port?: number;
}

export interface FakeServer {
  port: number;
  /** http://127.0.0.1:PORT (no trailing slash, no /v1). */
  url: string;
  /** Every request received, in order, HEAD / and 404s included. */
  requests: FakeRequest[];
  /** Model requests only (the ones with a `conversation`). */
  modelRequests(): FakeRequest[];
  /** Stops listening and drops open connections (hanging ones included). */
  close(): Promise<void>;
}

// ---------------------------------------------------------------------------------------------------
// The directive language (see README.md). Looked for in `Conversation.lastUserText`.

export type Directive =
  | { kind: 'reply'; text: string }
  | { kind: 'tool'; tool: string; arg: string }
  | { kind: 'task'; description: string; prompt: string }
  | { kind: 'error'; status: number; message?: string }
  | { kind: 'fail'; message: string }
  | { kind: 'hang' }
  | { kind: 'none' };

export interface ParsedDirective {
  directive: Directive;
  /** Sum of SLOW:<ms> prefixes. */
  delayMs: number;
}

// A keyword starts the text or follows a non-word character; all but HANG need a colon.
const KEYWORD = /(?:^|[^A-Za-z0-9_])(?:(REPLY|TOOL|TASK|ERROR|FAIL|SLOW)(?=:)|(HANG)(?![A-Za-z0-9_]))/g;

function restOfLine(s: string): string {
  const nl = s.indexOf('\n');
  return (nl === -1 ? s : s.slice(0, nl)).replace(/\r$/, '');
}

/** Finds the first directive in `text`. `SLOW:<ms>` may precede another directive (e.g.
 * "SLOW:2000 REPLY:hi"); on its own it delays a default reply. */
export function parseDirective(text: string): ParsedDirective {
  let delayMs = 0;
  KEYWORD.lastIndex = 0;
  for (;;) {
    const m = KEYWORD.exec(text);
    if (!m) return { directive: delayMs > 0 ? { kind: 'reply', text: 'ok' } : { kind: 'none' }, delayMs };
    const keyword = m[1] ?? m[2] ?? '';
    const start = m.index + m[0].length; // just after the keyword
    const after = text.slice(start);
    const payload = after.startsWith(':') ? after.slice(1) : '';
    switch (keyword) {
      case 'SLOW': {
        const ms = /^\d+/.exec(payload);
        if (!ms) continue;
        delayMs += Number(ms[0]);
        KEYWORD.lastIndex = start + 1 + ms[0].length;
        continue;
      }
      case 'REPLY':
        return { directive: { kind: 'reply', text: restOfLine(payload) }, delayMs };
      case 'TOOL': {
        const line = restOfLine(payload);
        const colon = line.indexOf(':');
        if (colon === -1) return { directive: { kind: 'tool', tool: 'Bash', arg: line }, delayMs };
        return { directive: { kind: 'tool', tool: line.slice(0, colon), arg: line.slice(colon + 1) }, delayMs };
      }
      case 'TASK': {
        const colon = payload.indexOf(':');
        const description = colon === -1 ? 'fake subtask' : payload.slice(0, colon).trim() || 'fake subtask';
        const prompt = (colon === -1 ? payload : payload.slice(colon + 1)).trim();
        return { directive: { kind: 'task', description, prompt }, delayMs };
      }
      case 'ERROR': {
        const m2 = /^(\d{3})(?::(.*))?/.exec(restOfLine(payload));
        const status = m2 ? Number(m2[1]) : 500;
        const message = m2?.[2]?.trim();
        return { directive: message ? { kind: 'error', status, message } : { kind: 'error', status }, delayMs };
      }
      case 'FAIL':
        return { directive: { kind: 'fail', message: restOfLine(payload).trim() || 'fake stream failure' }, delayMs };
      case 'HANG':
        return { directive: { kind: 'hang' }, delayMs };
      default:
        continue;
    }
  }
}

/** Removes Claude Code's `<system-reminder>…</system-reminder>` blocks and similar wrappers. */
export function stripReminders(text: string): string {
  return text.replace(/<system-reminder>[\s\S]*?<\/system-reminder>/g, '');
}

// ---------------------------------------------------------------------------------------------------
// How one CLI names its tools. Each server file provides one.

export interface Flavor {
  /** The tool call that runs `command` in a shell. */
  bash(command: string, conv: Conversation): ToolCall;
  /** The next tool call of a sub-agent spawn, given the outputs so far (empty on the first request of
   * the turn), or undefined when the spawn is over and the final text should be given. */
  task(description: string, prompt: string, conv: Conversation): ToolCall | undefined;
  /** One line summarising a tool output, for the final "done: <line>" text. */
  summarize(output: ToolOutput): string;
  /** An answer for an auxiliary request the CLI makes on its own (title generation…), or undefined. */
  aux?(conv: Conversation): Action | undefined;
}

export function firstLine(text: string): string {
  for (const line of text.split('\n')) {
    const t = line.trim();
    if (t) return t;
  }
  return '';
}

let idCounter = 0;
/** Short unique ids for messages and tool calls ("toolu_fake_1", "call_fake_2"…). */
export function fakeId(prefix: string): string {
  idCounter += 1;
  return `${prefix}_fake_${process.pid}_${idCounter}`;
}

/** Turns a conversation into an action using the directive in its last user message. */
export function decide(conv: Conversation, flavor: Flavor): Action {
  const { directive: d, delayMs } = parseDirective(conv.lastUserText);
  const delay = delayMs > 0 ? { delayMs } : {};
  const last = conv.toolOutputs[conv.toolOutputs.length - 1];
  const done = (): Action => ({ type: 'text', text: `done: ${last ? flavor.summarize(last) : ''}`, ...delay });
  switch (d.kind) {
    case 'reply':
      return { type: 'text', text: d.text, ...delay };
    case 'none':
      return { type: 'text', text: 'ok (no directive)', ...delay };
    case 'error':
      return d.message ? { type: 'error', status: d.status, message: d.message, ...delay } : { type: 'error', status: d.status, ...delay };
    case 'fail':
      return { type: 'fail', message: d.message, ...delay };
    case 'hang':
      return { type: 'hang' };
    case 'tool': {
      if (conv.toolOutputs.length > 0) return done();
      if (d.tool.toLowerCase() === 'bash' || d.tool.toLowerCase() === 'shell') {
        return { type: 'tool', calls: [flavor.bash(d.arg, conv)], ...delay };
      }
      // Any other tool: TOOL:<Name>:<json input>, passed through as is.
      let input: Record<string, unknown> = {};
      try {
        const parsed: unknown = JSON.parse(d.arg || '{}');
        if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) input = parsed as Record<string, unknown>;
      } catch {
        input = { input: d.arg };
      }
      return { type: 'tool', calls: [{ name: d.tool, input }], ...delay };
    }
    case 'task': {
      const call = flavor.task(d.description, d.prompt, conv);
      return call ? { type: 'tool', calls: [call], ...delay } : done();
    }
  }
}

/** The `retry-after-ms` header for an error action (none when retryAfterMs is null). */
export function retryHeaders(action: { retryAfterMs?: number | null }): Record<string, string> {
  if (action.retryAfterMs === null) return {};
  return { 'retry-after-ms': String(action.retryAfterMs ?? 0) };
}

/** Rough token count for usage figures: 1 token per 4 bytes, at least 1. */
export function tokens(n: number): number {
  return Math.max(1, Math.ceil(n / 4));
}

// ---------------------------------------------------------------------------------------------------
// HTTP plumbing.

/** One model API a fake speaks: how it reads a request and writes an answer. The skeleton (`startApi`)
 * does the rest: listening, recording, choosing the action, delays and hangs, the 404 of an unknown route. */
export interface ApiAdapter<Call> {
  /** Answers a request that is not a model call (health check, model list, token count); true when it did. */
  side?(req: FakeRequest, res: http.ServerResponse): boolean;
  /** The model call a request is (what `write` needs of it, e.g. whether to stream), or null. */
  call(req: FakeRequest): Call | null;
  conversation(req: FakeRequest, call: Call): Conversation;
  flavor(conv: Conversation, req: FakeRequest): Flavor;
  /** Turns the chosen action into one this API's client accepts, where it needs another form. */
  adjust?(action: Action, conv: Conversation, req: FakeRequest): Action;
  write(req: FakeRequest, res: http.ServerResponse, action: Action, conv: Conversation, call: Call): void;
}

/** Returns true when it handled the request (wrote the response or took ownership of it). */
type Route = (req: FakeRequest, res: http.ServerResponse, ctx: RouteContext) => Promise<boolean>;

interface RouteContext {
  /** Chooses the action for a model request: handler, then script queue, then aux, then directive. */
  choose(req: FakeRequest, conv: Conversation, flavor: Flavor): Promise<Action>;
  /** Registers a response that must be ended on close() (hang). */
  hold(res: http.ServerResponse): void;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Writes one SSE event. `event` omitted = data-only (chat completions style). */
export function sseEvent(res: http.ServerResponse, data: unknown, event?: string): void {
  const payload = typeof data === 'string' ? data : JSON.stringify(data);
  res.write(`${event ? `event: ${event}\n` : ''}data: ${payload}\n\n`);
}

export function startSse(res: http.ServerResponse): void {
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
  });
}

export function sendJson(res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)), ...headers });
  res.end(text);
}

/** Starts a fake of one model API on 127.0.0.1: every request recorded, each model call answered by the
 * action chosen for it (handler, script, aux, directive) written in the API's form. */
export function startApi<Call>(options: FakeOptions, api: ApiAdapter<Call>): Promise<FakeServer> {
  return startFake(options, async (req, res, ctx) => {
    if (api.side?.(req, res)) return true;
    const call = api.call(req);
    if (call === null) return false;
    const conv = api.conversation(req, call);
    req.conversation = conv;
    const chosen = await ctx.choose(req, conv, api.flavor(conv, req));
    const action = api.adjust ? api.adjust(chosen, conv, req) : chosen;
    req.action = action;
    if (!(await applyDelay(action, res, ctx))) return true;
    if (res.destroyed) return true;
    // Set before the API writes its head, which adds them to its own.
    if ((action.type === 'text' || action.type === 'tool' || action.type === 'error') && action.headers)
      for (const [k, v] of Object.entries(action.headers)) res.setHeader(k, v);
    api.write(req, res, action, conv, call);
    return true;
  });
}

/** Starts an HTTP server on 127.0.0.1 that records every request and hands it to `route`. */
async function startFake(options: FakeOptions, route: Route): Promise<FakeServer> {
  const requests: FakeRequest[] = [];
  const queue = [...(options.script ?? [])];
  const held = new Set<http.ServerResponse>();

  const ctx: RouteContext = {
    async choose(req, conv, flavor) {
      if (options.handler) {
        const a = await options.handler(req);
        if (a) {
          req.source = 'handler';
          return a;
        }
      }
      const aux = flavor.aux?.(conv);
      if (aux) {
        req.source = 'aux';
        return aux;
      }
      const next = queue.shift();
      if (next) {
        req.source = 'script';
        return next;
      }
      req.source = 'directive';
      return decide(conv, flavor);
    },
    hold(res) {
      held.add(res);
      res.on('close', () => held.delete(res));
    },
  };

  const server = http.createServer((inc, res) => {
    const chunks: Buffer[] = [];
    inc.on('data', (c: Buffer) => chunks.push(c));
    inc.on('end', () => {
      const raw = Buffer.concat(chunks);
      let body: unknown = null;
      if (raw.length > 0) {
        try {
          body = JSON.parse(raw.toString('utf8'));
        } catch {
          body = null;
        }
      }
      const req: FakeRequest = {
        index: requests.length,
        method: inc.method ?? 'GET',
        url: inc.url ?? '/',
        headers: inc.headers,
        body,
        bodyBytes: raw.length,
        receivedAt: Date.now(),
      };
      requests.push(req);
      route(req, res, ctx)
        .then((handled) => {
          if (!handled && !res.headersSent) {
            req.source = 'route';
            sendJson(res, 404, { error: { message: `fake server: no route for ${req.method} ${req.url}` } });
          }
        })
        .catch((err: unknown) => {
          if (!res.headersSent) sendJson(res, 500, { error: { message: `fake server crashed: ${String(err)}` } });
          else res.destroy();
        });
    });
  });
  server.keepAliveTimeout = 1000;

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  let closed: Promise<void> | undefined;
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    requests,
    modelRequests: () => requests.filter((r) => r.conversation !== undefined),
    close() {
      closed ??= new Promise<void>((resolve) => {
        for (const res of held) res.destroy();
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closed;
    },
  };
}

/** Applies an action's delay, or holds the response forever for `hang`. Returns false for hang. */
async function applyDelay(action: Action, res: http.ServerResponse, ctx: RouteContext): Promise<boolean> {
  if (action.type === 'hang') {
    ctx.hold(res);
    return false;
  }
  if (action.delayMs && action.delayMs > 0) await sleep(action.delayMs);
  if (action.type === 'raw') {
    res.writeHead(action.status, action.headers ?? {});
    res.end(action.body);
    return false;
  }
  return true;
}

/** A request's path without its query string. */
export function pathOf(req: FakeRequest): string {
  return req.url.split('?')[0] ?? '';
}

/** The message of an error action (a default naming its status). */
export function errorText(action: { status: number; message?: string }): string {
  return action.message ?? `fake upstream error ${action.status}`;
}

/** What an answer holds: its text (if any) and its tool calls, in that order on the wire. */
export function answerOf(action: Action): { text?: string; calls: ToolCall[] } {
  if (action.type === 'text') return { text: action.text, calls: [] };
  if (action.type === 'tool') return { ...(action.text !== undefined ? { text: action.text } : {}), calls: action.calls };
  return { calls: [] };
}

/** The OpenAI APIs' (chat completions, Responses) error body for an HTTP status. */
export function openaiError(status: number, message: string): Record<string, unknown> {
  const type = status >= 500 ? 'server_error' : status === 429 ? 'rate_limit_exceeded' : 'invalid_request_error';
  return { error: { message, type, param: null, code: null } };
}

/** The last message the user wrote: the last item whose `textOf` is some text besides white space. */
export function lastUserMessage<T>(items: T[], textOf: (item: T) => string | undefined): { index: number; text: string } {
  for (let i = items.length - 1; i >= 0; i--) {
    const text = textOf(items[i] as T);
    if (text?.trim()) return { index: i, text };
  }
  return { index: -1, text: '' };
}

/** One tool output read from a request (`name` when the request says which call it answers). */
export function toolOutput(callId: string, text: string, name: string | undefined): ToolOutput {
  return { callId, text, ...(name ? { name } : {}) };
}

/** The names a request lists (offered tools, declarations), the nameless left out. */
export function namesOf(list: unknown[], nameOf: (item: Record<string, unknown>) => string): string[] {
  return list.map((x) => nameOf(asRecord(x))).filter((n) => n !== '');
}

/** The shell tool call most CLIs offer: `{command, description}` and what else the CLI asks for. */
export function shellCall(name: string, command: string, extra: Record<string, unknown> = {}): ToolCall {
  return { name, input: { command, description: 'Run the command the fake model was told to run', ...extra } };
}

// Small helpers for reading untyped JSON.
export function asRecord(v: unknown): Record<string, unknown> {
  return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
}
export function asArray(v: unknown): unknown[] {
  return Array.isArray(v) ? v : [];
}
export function asString(v: unknown): string {
  return typeof v === 'string' ? v : '';
}
/** Text of a content value: a string, or an array of blocks with `text` fields. */
export function contentText(v: unknown): string {
  if (typeof v === 'string') return v;
  return asArray(v)
    .map((b) => {
      const r = asRecord(b);
      if (typeof r.text === 'string') return r.text;
      if (r.content !== undefined) return contentText(r.content);
      return '';
    })
    .filter((s) => s !== '')
    .join('\n');
}
