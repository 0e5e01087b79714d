// Fake OpenAI Responses API for Codex: `POST /v1/responses` (stream:true) → SSE response.created,
// response.output_item.added/done per output item (message, function_call), output_text deltas,
// response.completed with usage; failure variants: an HTTP error status (ERROR:<status>) or
// response.failed inside a 200 stream (FAIL:<message>). Behaviour per request: see script.ts, README.md.
import type http from 'node:http';
import type { Action, Conversation, FakeOptions, FakeRequest, FakeServer, Flavor, ToolCall, ToolOutput } from './script.js';
import { answerOf, asArray, asRecord, asString, contentText, errorText, fakeId, firstLine, lastUserMessage, openaiError } from './script.js';
import { pathOf, retryHeaders, sendJson, sseEvent, startApi, startSse, tokens, toolOutput } from './script.js';

/** The namespace Codex 0.169 puts its sub-agent tools in (spawn_agent, wait_agent, …). */
const MULTI_AGENT_NAMESPACE = 'multi_agent_v1';

/** Parses the agent id out of spawn_agent's output `{"agent_id":"…","nickname":"…"}`. */
function agentIdOf(output: ToolOutput | undefined): string | undefined {
  if (!output) return undefined;
  try {
    const id = asRecord(JSON.parse(output.text)).agent_id;
    return typeof id === 'string' ? id : undefined;
  } catch {
    return undefined;
  }
}

/** wait_agent's output `{"status":{"<id>":{"completed":"<final text>"}},…}` → the first final text. */
function waitResult(text: string): { final: boolean; message: string } {
  try {
    const status = asRecord(asRecord(JSON.parse(text)).status);
    for (const v of Object.values(status)) {
      const st = asRecord(v);
      for (const key of ['completed', 'errored', 'shutdown', 'not_found']) {
        if (key in st) return { final: true, message: typeof st[key] === 'string' ? (st[key] as string) : key };
      }
    }
    return { final: false, message: '' };
  } catch {
    return { final: true, message: firstLine(text) };
  }
}

/** Codex 0.169's tools: shell commands through `exec_command {cmd}` (unified exec; older builds and other
 * models get `shell_command {command}` or `shell {command:[…]}`), sub-agents through the namespaced
 * `spawn_agent {message}` then `wait_agent {targets, timeout_ms}`. */
export const codexFlavor: Flavor = {
  bash(command, conv) {
    if (conv.toolNames.includes('exec_command') || conv.toolNames.length === 0) {
      return { name: 'exec_command', input: { cmd: command, yield_time_ms: 10000 } };
    }
    if (conv.toolNames.includes('shell_command')) return { name: 'shell_command', input: { command } };
    return { name: 'shell', input: { command: ['bash', '-lc', command] } };
  },
  task(_description, prompt, conv) {
    const outputs = conv.toolOutputs;
    const ns = { namespace: MULTI_AGENT_NAMESPACE };
    if (outputs.length === 0) return { name: 'spawn_agent', input: { message: prompt }, ...ns };
    const spawned = agentIdOf(outputs.find((o) => o.name === 'spawn_agent') ?? outputs[0]);
    const last = outputs[outputs.length - 1];
    if (!spawned || !last) return undefined;
    if (last.name === 'wait_agent' && waitResult(last.text).final) return undefined;
    if (outputs.length > 20) return undefined; // give up waiting
    return { name: 'wait_agent', input: { targets: [spawned], timeout_ms: 60000 }, ...ns };
  },
  summarize(output) {
    if (output.name === 'wait_agent') return firstLine(waitResult(output.text).message);
    // exec_command output: "Chunk ID: …\nWall time: …\nProcess exited with code 0\n…\nOutput:\n<stdout>"
    const at = output.text.indexOf('\nOutput:\n');
    if (at !== -1) return firstLine(output.text.slice(at + '\nOutput:\n'.length));
    return firstLine(output.text);
  },
};

/** Codex sends its own context as user messages; these are not what the user wrote. */
function isContextMessage(text: string): boolean {
  const t = text.trimStart();
  return (
    /^<(environment_context|user_instructions|permissions instructions|turn_aborted|subagent_notification|collaboration_mode)[\s>]/.test(t) ||
    t.startsWith('# AGENTS.md')
  );
}

/** Tool names offered, namespaced ones included (`{type:"namespace", name, tools:[…]}`). */
function toolNamesOf(tools: unknown): string[] {
  const names: string[] = [];
  for (const t of asArray(tools).map(asRecord)) {
    const nested = asArray(t.tools);
    if (nested.length > 0) names.push(...toolNamesOf(nested));
    const fn = asRecord(t.function);
    const name = asString(t.name) || asString(fn.name) || (t.type === 'local_shell' ? 'local_shell' : '');
    if (name && nested.length === 0) names.push(name);
  }
  return names;
}

/** Reads a Responses API request body into a Conversation. */
export function responsesConversation(body: unknown): Conversation {
  const b = asRecord(body);
  const items = asArray(b.input).map(asRecord);
  const nameByCall = new Map<string, string>();
  for (const it of items) {
    if (it.type === 'function_call' || it.type === 'custom_tool_call') nameByCall.set(asString(it.call_id), asString(it.name));
  }
  const { index: lastUser, text: lastUserText } = lastUserMessage(items, (it) => {
    if (it.role !== 'user' || (it.type !== undefined && it.type !== 'message')) return undefined;
    const text = contentText(it.content);
    return isContextMessage(text) ? undefined : text;
  });
  const toolOutputs: ToolOutput[] = [];
  for (const it of items.slice(lastUser + 1)) {
    if (it.type !== 'function_call_output' && it.type !== 'custom_tool_call_output') continue;
    const callId = asString(it.call_id);
    const out = it.output;
    const text = typeof out === 'string' ? out : contentText(asRecord(out).content ?? out);
    toolOutputs.push(toolOutput(callId, text, nameByCall.get(callId)));
  }
  return {
    lastUserText,
    toolOutputs,
    toolNames: toolNamesOf(b.tools),
    system: asString(b.instructions),
    model: asString(b.model),
  };
}

function functionCallItem(c: ToolCall): Record<string, unknown> {
  const callId = c.id ?? fakeId('call');
  return {
    type: 'function_call',
    id: `fc_${callId}`,
    status: 'completed',
    call_id: callId,
    name: c.name,
    ...(c.namespace ? { namespace: c.namespace } : {}),
    arguments: JSON.stringify(c.input),
  };
}

function writeAnswer(req: FakeRequest, res: http.ServerResponse, action: Action, conv: Conversation): void {
  if (action.type === 'error') {
    sendJson(res, action.status, openaiError(action.status, errorText(action)), { 'x-request-id': fakeId('req'), ...retryHeaders(action) });
    return;
  }
  const responseId = fakeId('resp');
  const created = Math.floor(Date.now() / 1000);
  const base = { id: responseId, object: 'response', created_at: created, model: conv.model };
  let seq = 0;
  const emit = (data: Record<string, unknown>): void => sseEvent(res, { ...data, sequence_number: seq++ }, asString(data.type));
  startSse(res);
  emit({ type: 'response.created', response: { ...base, status: 'in_progress', output: [] } });
  if (action.type === 'fail') {
    emit({ type: 'response.failed', response: { ...base, status: 'failed', output: [], error: { code: 'server_error', message: action.message } } });
    res.end();
    return;
  }
  const output: Record<string, unknown>[] = [];
  const { text, calls } = answerOf(action);
  if (text !== undefined && text !== '') {
    const id = fakeId('msg');
    const index = output.length;
    const done = { type: 'message', id, status: 'completed', role: 'assistant', content: [{ type: 'output_text', text, annotations: [] }] };
    emit({ type: 'response.output_item.added', output_index: index, item: { ...done, status: 'in_progress', content: [] } });
    emit({ type: 'response.output_text.delta', item_id: id, output_index: index, content_index: 0, delta: text });
    emit({ type: 'response.output_item.done', output_index: index, item: done });
    output.push(done);
  }
  for (const c of calls) {
    const item = functionCallItem(c);
    const index = output.length;
    emit({ type: 'response.output_item.added', output_index: index, item });
    emit({ type: 'response.output_item.done', output_index: index, item });
    output.push(item);
  }
  const inputTokens = tokens(req.bodyBytes);
  const outputTokens = tokens(JSON.stringify(output).length);
  req.reportedUsage = { promptTokens: inputTokens, completionTokens: outputTokens };
  emit({
    type: 'response.completed',
    response: {
      ...base,
      status: 'completed',
      output,
      usage: {
        input_tokens: inputTokens,
        input_tokens_details: { cached_tokens: 0 },
        output_tokens: outputTokens,
        output_tokens_details: { reasoning_tokens: 0 },
        total_tokens: inputTokens + outputTokens,
      },
    },
  });
  res.end();
}

/** Starts the fake Responses API server on 127.0.0.1; Codex's provider base_url is `${srv.url}/v1`. */
export function startOpenAIResponses(options: FakeOptions = {}): Promise<FakeServer> {
  return startApi(options, {
    side(req, res) {
      if (req.method !== 'GET' || pathOf(req) !== '/v1/models') return false;
      sendJson(res, 200, { object: 'list', data: [] });
      return true;
    },
    call: (req) => (req.method === 'POST' && pathOf(req) === '/v1/responses' ? {} : null),
    conversation: (req) => responsesConversation(req.body),
    flavor: () => codexFlavor,
    write: writeAnswer,
  });
}
