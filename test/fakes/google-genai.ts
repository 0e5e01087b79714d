// Fake Google GenAI (Gemini API) for the Gemini CLI: `POST /v1beta/models/<model>:streamGenerateContent?alt=sse`
// → SSE `data: <GenerateContentResponse>` chunks (candidates[0].content.parts with text or functionCall
// parts, finishReason STOP, usageMetadata); `POST /v1beta/models/<model>:generateContent` → one JSON
// GenerateContentResponse; `:countTokens` → a count. Errors are the API's JSON body
// `{error:{code, message, status}}`. Behaviour per request: see script.ts and README.md.
import type http from 'node:http';
import type { Action, Conversation, FakeOptions, FakeRequest, FakeServer, Flavor, ToolCall, ToolOutput } from './script.js';
import { answerOf, asArray, asRecord, asString, errorText, fakeId, firstLine, lastUserMessage, namesOf, pathOf } from './script.js';
import { retryHeaders, sendJson, shellCall, sseEvent, startApi, startSse, tokens, toolOutput } from './script.js';

/** The tool a Gemini CLI sub-agent must call to finish (its answer is the tool's argument, not text). */
const COMPLETE_TASK = 'complete_task';

/** The useful line of a tool's output: the shell tool's `Output: …` line, a sub-agent's `"response"`. */
function usefulLine(text: string): string {
  const out = /^Output: ?(.*)$/m.exec(text);
  if (out) return out[1]?.trim() || firstLine(text.slice(out.index + out[0].length));
  const response = /"response"\s*:\s*("(?:[^"\\]|\\.)*")/.exec(text);
  if (response?.[1]) return firstLine(JSON.parse(response[1]) as string);
  return firstLine(text);
}

/** The Gemini CLI's tools: `run_shell_command {command, description}`, sub-agents `invoke_agent
 * {agent_name:"generalist", prompt}`. A sub-agent ends by calling `complete_task` (see `finishChild`). */
export const geminiFlavor: Flavor = {
  bash(command) {
    return shellCall('run_shell_command', command);
  },
  task(_description, prompt, conv) {
    if (conv.toolOutputs.length > 0) return undefined;
    return { name: 'invoke_agent', input: { agent_name: 'generalist', prompt } };
  },
  summarize(output: ToolOutput) {
    return usefulLine(output.text);
  },
};

/** Context the Gemini CLI puts before the prompt in the first user message: not what anyone wrote. */
const CONTEXT_PART = /^\s*<session_context>/;

/** The text parts of a `parts` array, thoughts and the CLI's own context parts left out. */
function textParts(parts: unknown[]): string[] {
  return parts
    .map(asRecord)
    .filter((p) => typeof p.text === 'string' && p.thought !== true && !CONTEXT_PART.test(p.text))
    .map((p) => p.text as string);
}

/** The text of a functionResponse's `response`: `output`, else `error`, else the JSON. */
function responseText(response: unknown): string {
  const r = asRecord(response);
  if (typeof r.output === 'string') return r.output;
  if (typeof r.error === 'string') return r.error;
  if (typeof r.content === 'string') return r.content;
  return JSON.stringify(response ?? null);
}

/** Reads a GenerateContent request body into a Conversation (`model` comes from the URL). */
export function geminiConversation(body: unknown, model: string): Conversation {
  const b = asRecord(body);
  const contents = asArray(b.contents).map(asRecord);
  // The last message the user wrote: role user, some text, no functionResponse parts.
  const { index: lastUser, text: lastUserText } = lastUserMessage(contents, (c) => {
    const parts = asArray(c.parts);
    if (c.role !== 'user' || parts.some((p) => asRecord(p).functionResponse !== undefined)) return undefined;
    // A resume after a turn the model never answered sends both prompts as parts of one user content:
    // the last part is the message the user wrote last.
    return textParts(parts).at(-1);
  });
  const toolOutputs: ToolOutput[] = [];
  for (const c of contents.slice(lastUser + 1)) {
    if (c.role !== 'user') continue;
    for (const p of asArray(c.parts).map(asRecord)) {
      const fr = asRecord(p.functionResponse);
      if (p.functionResponse === undefined) continue;
      const name = asString(fr.name);
      toolOutputs.push(toolOutput(asString(fr.id) || name, responseText(fr.response), name));
    }
  }
  return {
    lastUserText,
    toolOutputs,
    toolNames: namesOf(
      asArray(b.tools).flatMap((t) => asArray(asRecord(t).functionDeclarations)),
      (d) => asString(d.name),
    ),
    system: textParts(asArray(asRecord(b.systemInstruction).parts)).join('\n'),
    model,
  };
}

/** The declaration of an offered tool, by name. */
function declaration(body: unknown, name: string): Record<string, unknown> {
  for (const t of asArray(asRecord(body).tools)) {
    for (const d of asArray(asRecord(t).functionDeclarations).map(asRecord)) if (d.name === name) return d;
  }
  return {};
}

/**
 * A sub-agent's text answer as the `complete_task` call its executor requires: the argument is the
 * declared output (`result`, for the generalist an object `{response}`), holding the text.
 */
function finishChild(body: unknown, text: string): ToolCall {
  const d = declaration(body, COMPLETE_TASK);
  const schema = asRecord(d.parametersJsonSchema ?? d.parameters);
  const key = asString(asArray(schema.required)[0]) || 'result';
  const prop = asRecord(asRecord(schema.properties)[key]);
  if (String(prop.type).toLowerCase() === 'object') {
    const inner = asString(asArray(prop.required)[0]) || Object.keys(asRecord(prop.properties))[0] || 'response';
    return { name: COMPLETE_TASK, input: { [key]: { [inner]: text } } };
  }
  return { name: COMPLETE_TASK, input: { [key]: text } };
}

/** The thought tokens the fake reports for every answer (it sends no thought parts). */
export const THOUGHT_TOKENS = 2;

/** The Gemini API's `status` word for an HTTP status (`INTERNAL` for the rest). */
const STATUS_WORD: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  429: 'RESOURCE_EXHAUSTED',
  503: 'UNAVAILABLE',
};

function errorBody(status: number, message: string): Record<string, unknown> {
  return { error: { code: status, message, status: STATUS_WORD[status] ?? 'INTERNAL' } };
}

/** One GenerateContentResponse: the parts, why it stopped, the usage. */
function responseOf(req: FakeRequest, action: Action, conv: Conversation): Record<string, unknown> {
  const { text, calls } = answerOf(action);
  const parts: Record<string, unknown>[] = [];
  // A text answer is a part even when empty; text before function calls only when there is some.
  if (action.type === 'text' || text) parts.push({ text: text ?? '' });
  for (const c of calls) parts.push({ functionCall: { name: c.name, args: c.input, ...(c.id ? { id: c.id } : {}) } });
  const promptTokens = tokens(req.bodyBytes);
  const outputTokens = tokens(JSON.stringify(parts).length);
  // Thinking models count their thoughts apart from the answer (and in the total).
  const thoughtTokens = THOUGHT_TOKENS;
  req.reportedUsage = { promptTokens, completionTokens: outputTokens + thoughtTokens };
  return {
    candidates: [{ content: { role: 'model', parts }, finishReason: 'STOP', index: 0 }],
    usageMetadata: {
      promptTokenCount: promptTokens,
      candidatesTokenCount: outputTokens,
      thoughtsTokenCount: thoughtTokens,
      totalTokenCount: promptTokens + outputTokens + thoughtTokens,
    },
    modelVersion: conv.model,
    responseId: fakeId('resp'),
  };
}

function writeAnswer(req: FakeRequest, res: http.ServerResponse, action: Action, conv: Conversation, { stream }: GeminiCall): void {
  if (action.type === 'error') {
    sendJson(res, action.status, errorBody(action.status, errorText(action)), retryHeaders(action));
    return;
  }
  if (action.type === 'fail') {
    if (!stream) {
      sendJson(res, 500, errorBody(500, action.message));
      return;
    }
    // HTTP 200, then the API's error object as a chunk of its own (what the SDK looks for mid-stream).
    startSse(res);
    res.end(JSON.stringify(errorBody(500, action.message)));
    return;
  }
  const body = responseOf(req, action, conv);
  if (!stream) {
    sendJson(res, 200, body);
    return;
  }
  // Streamed as the API does: the text in a few chunks, the function calls, finishReason and the final
  // usage with the last one.
  startSse(res);
  const candidate = asRecord(asArray(body.candidates)[0]);
  const parts = asArray(asRecord(candidate.content).parts);
  const chunks = textChunks(parts);
  chunks.forEach((chunkParts, i) => {
    const last = i === chunks.length - 1;
    const content = { role: 'model', parts: chunkParts };
    sseEvent(res, last ? { ...body, candidates: [{ ...candidate, content }] } : { candidates: [{ content, index: 0 }], modelVersion: conv.model });
  });
  res.end();
}

/** The parts of one answer as the chunks of a stream: a text part cut in up to three pieces at spaces,
 * the other parts with the last piece. */
function textChunks(parts: unknown[]): unknown[][] {
  const first = asRecord(parts[0]);
  if (typeof first.text !== 'string') return [parts];
  const words = first.text.split(/(?<= )/);
  const size = Math.ceil(words.length / 3);
  const pieces: string[] = [];
  for (let i = 0; i < words.length; i += size) pieces.push(words.slice(i, i + size).join(''));
  if (pieces.length === 0) pieces.push('');
  return pieces.map((text, i) => (i === pieces.length - 1 ? [{ text }, ...parts.slice(1)] : [{ text }]));
}

/** `/v1beta/models/<model>:<method>` → its model and method. */
function modelCall(path: string): { model: string; method: string } | null {
  const m = /^\/v1(?:beta|alpha)?\/models\/([^/:]+):(\w+)$/.exec(path);
  return m ? { model: decodeURIComponent(m[1]!), method: m[2]! } : null;
}

/** A model call: the model the URL names, and whether the answer is streamed. */
interface GeminiCall {
  model: string;
  stream: boolean;
}

/** Starts the fake Gemini API on 127.0.0.1. Point the Gemini CLI at it with GOOGLE_GEMINI_BASE_URL=srv.url. */
export function startGoogleGenAI(options: FakeOptions = {}): Promise<FakeServer> {
  return startApi<GeminiCall>(options, {
    side(req, res) {
      if (req.method !== 'POST' || modelCall(pathOf(req))?.method !== 'countTokens') return false;
      sendJson(res, 200, { totalTokens: tokens(req.bodyBytes) });
      return true;
    },
    call(req) {
      const call = req.method === 'POST' ? modelCall(pathOf(req)) : null;
      if (call?.method !== 'streamGenerateContent' && call?.method !== 'generateContent') return null;
      return { model: call.model, stream: call.method === 'streamGenerateContent' };
    },
    conversation: (req, call) => geminiConversation(req.body, call.model),
    flavor: () => geminiFlavor,
    // A sub-agent answers through complete_task; its text would be a protocol violation.
    adjust(action, conv, req) {
      if (action.type !== 'text' || !conv.toolNames.includes(COMPLETE_TASK)) return action;
      return { type: 'tool', calls: [finishChild(req.body, action.text)], ...(action.delayMs ? { delayMs: action.delayMs } : {}) };
    },
    write: writeAnswer,
  });
}
