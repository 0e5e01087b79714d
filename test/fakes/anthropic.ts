// Fake Anthropic Messages API for Claude Code (2.1.197, 2.1.331): `HEAD /` → 200, `POST /v1/messages[?beta=true]` with
// `stream:true` → SSE (message_start, content_block_start/delta/stop per text and tool_use block,
// message_delta with stop_reason and usage, message_stop); `stream:false` → one JSON message;
// `POST /v1/messages/count_tokens` → a count. Behaviour per request: see script.ts and README.md.
import type http from 'node:http';
import type { Action, Conversation, FakeOptions, FakeRequest, FakeServer, Flavor, ToolOutput } from './script.js';
import { answerOf, asArray, asRecord, asString, contentText, errorText, fakeId, firstLine, lastUserMessage, namesOf, pathOf } from './script.js';
import { retryHeaders, sendJson, shellCall, sseEvent, startApi, startSse, stripReminders, tokens, toolOutput } from './script.js';

/**
 * A sub-agent's answer as the parent's model reads it: Claude 2.1.331 prefixes a foreground child's with
 * `<tools-used-before-summary>…</…>` and frames it ("[Subagent hand-back] … The report follows:");
 * a background child's tool result is only "Async agent launched successfully…".
 */
function childReport(text: string): string {
  const t = text.replace(/<tools-used-before-summary>[\s\S]*?<\/tools-used-before-summary>/g, '');
  if (/^\s*Async agent launched/.test(t)) return 'child started in the background';
  const follows = /\[Subagent hand-back\][\s\S]*?The report follows:\n/.exec(t);
  return follows ? t.slice(follows.index + follows[0].length) : t;
}

/** Claude's `<task-notification>` in the request's last message (a user message of the CLI's own), if any. */
function taskNotification(last: Record<string, unknown> | undefined): Conversation['taskNotification'] {
  if (last?.role !== 'user') return undefined;
  const text = contentText(last.content);
  const n = /<task-notification>([\s\S]*?)<\/task-notification>/.exec(text)?.[1];
  if (n === undefined) return undefined;
  const tag = (name: string) => new RegExp(`<${name}>([\\s\\S]*?)</${name}>`).exec(n)?.[1]?.trim() ?? '';
  return { taskId: tag('task-id'), status: tag('status'), result: tag('result') };
}

/** Claude Code's tool names: `Bash {command, description}`, sub-agents `Agent` (older builds: `Task`). */
export const claudeFlavor: Flavor = {
  bash(command) {
    return shellCall('Bash', command);
  },
  task(description, prompt, conv) {
    if (conv.toolOutputs.length > 0) return undefined;
    const name = conv.toolNames.includes('Agent') || !conv.toolNames.includes('Task') ? 'Agent' : 'Task';
    return { name, input: { description, prompt, subagent_type: 'general-purpose' } };
  },
  summarize(output: ToolOutput) {
    return firstLine(output.name === 'Agent' || output.name === 'Task' ? childReport(output.text) : output.text);
  },
  // The turn Claude takes on its own when a background child ended: say what the child reported.
  aux(conv) {
    const n = conv.taskNotification;
    return n ? { type: 'text', text: `child ${n.status}: ${firstLine(n.result)}` } : undefined;
  },
};

/** Reads an Anthropic Messages request body into a Conversation. */
export function anthropicConversation(body: unknown): Conversation {
  const b = asRecord(body);
  const messages = asArray(b.messages).map(asRecord);
  const toolNameById = new Map<string, string>();
  for (const m of messages) {
    for (const block of asArray(m.content).map(asRecord)) {
      if (block.type === 'tool_use') toolNameById.set(asString(block.id), asString(block.name));
    }
  }
  // The last message the user wrote: role user, no tool_result blocks, some text besides reminders.
  const { index: lastUser, text: lastUserText } = lastUserMessage(messages, (m) => {
    const blocks = typeof m.content === 'string' ? [] : asArray(m.content).map(asRecord);
    if (m.role !== 'user' || blocks.some((x) => x.type === 'tool_result')) return undefined;
    return stripReminders(contentText(m.content)).trim();
  });
  const notification = taskNotification(messages[messages.length - 1]);
  const toolOutputs: ToolOutput[] = [];
  for (const m of messages.slice(lastUser + 1)) {
    if (m.role !== 'user') continue;
    for (const block of asArray(m.content).map(asRecord)) {
      if (block.type !== 'tool_result') continue;
      const callId = asString(block.tool_use_id);
      toolOutputs.push(toolOutput(callId, contentText(block.content), toolNameById.get(callId)));
    }
  }
  return {
    lastUserText,
    toolOutputs,
    toolNames: namesOf(asArray(b.tools), (t) => asString(t.name)),
    system: contentText(b.system),
    model: asString(b.model),
    ...(notification ? { taskNotification: notification } : {}),
  };
}

/** The API's error `type` for an HTTP status (`api_error` for the rest). */
const ERROR_TYPE: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  529: 'overloaded_error',
};

function errorBody(status: number, message: string): Record<string, unknown> {
  return { type: 'error', error: { type: ERROR_TYPE[status] ?? 'api_error', message } };
}

type Block = { type: 'text'; text: string } | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> };

function blocksOf(action: Action): Block[] {
  const { text, calls } = answerOf(action);
  const blocks: Block[] = [];
  // A text answer is a block even when empty; text before tool calls only when there is some.
  if (action.type === 'text' || text) blocks.push({ type: 'text', text: text ?? '' });
  for (const c of calls) blocks.push({ type: 'tool_use', id: c.id ?? fakeId('toolu'), name: c.name, input: c.input });
  return blocks;
}

function writeAnswer(req: FakeRequest, res: http.ServerResponse, action: Action, conv: Conversation, { stream }: { stream: boolean }): void {
  if (action.type === 'error') {
    sendJson(res, action.status, errorBody(action.status, errorText(action)), { 'request-id': fakeId('req'), ...retryHeaders(action) });
    return;
  }
  const id = fakeId('msg');
  const inputTokens = tokens(req.bodyBytes);
  const blocks = blocksOf(action);
  const outputTokens = tokens(JSON.stringify(blocks).length);
  const stopReason = action.type === 'tool' ? 'tool_use' : 'end_turn';
  const usage = { input_tokens: inputTokens, output_tokens: outputTokens, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
  if (!stream) {
    if (action.type === 'fail') {
      sendJson(res, 500, errorBody(500, action.message));
      return;
    }
    sendJson(
      res,
      200,
      { id, type: 'message', role: 'assistant', model: conv.model, content: blocks, stop_reason: stopReason, stop_sequence: null, usage },
      { 'request-id': fakeId('req') },
    );
    return;
  }
  startSse(res);
  sseEvent(
    res,
    {
      type: 'message_start',
      message: {
        id,
        type: 'message',
        role: 'assistant',
        model: conv.model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { ...usage, output_tokens: 1 },
      },
    },
    'message_start',
  );
  if (action.type === 'fail') {
    sseEvent(res, errorBody(500, action.message), 'error');
    res.end();
    return;
  }
  blocks.forEach((block, index) => {
    if (block.type === 'text') {
      sseEvent(res, { type: 'content_block_start', index, content_block: { type: 'text', text: '' } }, 'content_block_start');
      sseEvent(res, { type: 'content_block_delta', index, delta: { type: 'text_delta', text: block.text } }, 'content_block_delta');
    } else {
      sseEvent(
        res,
        { type: 'content_block_start', index, content_block: { type: 'tool_use', id: block.id, name: block.name, input: {} } },
        'content_block_start',
      );
      sseEvent(
        res,
        { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: JSON.stringify(block.input) } },
        'content_block_delta',
      );
    }
    sseEvent(res, { type: 'content_block_stop', index }, 'content_block_stop');
  });
  sseEvent(res, { type: 'message_delta', delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: outputTokens } }, 'message_delta');
  sseEvent(res, { type: 'message_stop' }, 'message_stop');
  res.end();
}

/** Starts the fake Anthropic server on 127.0.0.1. Point Claude Code at it with ANTHROPIC_BASE_URL=srv.url. */
export function startAnthropic(options: FakeOptions = {}): Promise<FakeServer> {
  return startApi(options, {
    side(req, res) {
      const path = pathOf(req);
      if ((req.method === 'HEAD' || req.method === 'GET') && path === '/') {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.end(req.method === 'GET' ? 'fake anthropic\n' : undefined);
        return true;
      }
      if (req.method !== 'POST' || path !== '/v1/messages/count_tokens') return false;
      sendJson(res, 200, { input_tokens: tokens(req.bodyBytes) });
      return true;
    },
    call: (req) => (req.method === 'POST' && pathOf(req) === '/v1/messages' ? { stream: asRecord(req.body).stream === true } : null),
    conversation: (req) => anthropicConversation(req.body),
    flavor: () => claudeFlavor,
    write: writeAnswer,
  });
}

/**
 * Anthropic's answer to a subscriber whose 5-hour window is used up until `reset` (epoch seconds): 429,
 * `rate_limit_error`, the `anthropic-ratelimit-unified-*` headers (Claude Code signed in as a subscriber
 * says the reset in its `rate_limit_event`), `retry-after` the seconds left, and no retry.
 */
export function subscriberLimit(reset: number): Action {
  const headers = {
    'content-type': 'application/json',
    'retry-after': String(Math.max(1, reset - Math.floor(Date.now() / 1000))),
    'x-should-retry': 'false',
    'anthropic-ratelimit-unified-status': 'rejected',
    'anthropic-ratelimit-unified-reset': String(reset),
    'anthropic-ratelimit-unified-representative-claim': 'five_hour',
    'anthropic-ratelimit-unified-5h-status': 'rejected',
    'anthropic-ratelimit-unified-5h-reset': String(reset),
    'anthropic-ratelimit-unified-5h-utilization': '1.0',
    'anthropic-ratelimit-unified-overage-status': 'rejected',
    'anthropic-ratelimit-unified-overage-disabled-reason': 'org_level_disabled',
  };
  const body = { type: 'error', error: { type: 'rate_limit_error', message: "This request would exceed your account's rate limit. Please try again later." } };
  return { type: 'raw', status: 429, headers, body: JSON.stringify(body) };
}
