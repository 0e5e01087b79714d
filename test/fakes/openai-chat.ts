// Fake OpenAI chat completions API for OpenCode (provider "@ai-sdk/openai-compatible") and Qwen Code:
// `POST /v1/chat/completions` with stream:true → SSE chunks (role, content deltas, tool_calls deltas,
// finish_reason "stop" | "tool_calls", a usage chunk, `data: [DONE]`); stream:false → one JSON
// completion. Behaviour per request: see script.ts and README.md.
import type http from 'node:http';
import type { Action, Conversation, FakeOptions, FakeRequest, FakeServer, Flavor, ToolOutput } from './script.js';
import { answerOf, asArray, asRecord, asString, contentText, errorText, fakeId, firstLine, lastUserMessage, namesOf, openaiError } from './script.js';
import { pathOf, retryHeaders, sendJson, shellCall, sseEvent, startApi, startSse, stripReminders, tokens, toolOutput } from './script.js';

/** OpenCode's tools: `bash {command, description}`, sub-agents `task {description, prompt, subagent_type}`.
 * OpenCode also asks the model for a session title (system prompt of its "title" agent, no tools);
 * that request is answered with a fixed title and never consumes a directive or a script step. */
export const opencodeFlavor: Flavor = {
  bash(command) {
    return shellCall('bash', command);
  },
  task(description, prompt, conv) {
    if (conv.toolOutputs.length > 0) return undefined;
    return { name: 'task', input: { description, prompt, subagent_type: 'general' } };
  },
  summarize(output: ToolOutput) {
    // task output: <task id="ses_…" state="completed">\n<task_result>\n…\n</task_result>\n</task>
    const m = /<task_result>([\s\S]*?)<\/task_result>/.exec(output.text);
    return firstLine(m ? (m[1] ?? '') : output.text);
  },
  aux(conv) {
    if (conv.toolNames.length === 0 && /title generator|generate a (short )?title|thread title/i.test(conv.system)) {
      return { type: 'text', text: 'Fake title' };
    }
    return undefined;
  },
};

/** GitHub Copilot CLI's tools (BYOK, chat completions): `bash {command, description, initial_wait}`, sub-agents
 * `task {name, description, prompt, agent_type, mode}` run in the foreground (`mode: "sync"`), whose tool result is
 * the child's answer. Recognised by the tools only Copilot offers (`list_agents`, `read_agent`). */
export const copilotFlavor: Flavor = {
  bash(command) {
    // initial_wait (30–600 s): how long Copilot waits before moving a command to the background.
    return shellCall('bash', command, { initial_wait: 600 });
  },
  task(description, prompt, conv) {
    if (conv.toolOutputs.length > 0) return undefined;
    return { name: 'task', input: { name: 'fake-child', description, prompt, agent_type: 'general-purpose', mode: 'sync' } };
  },
  summarize(output: ToolOutput) {
    return firstLine(output.text);
  },
};

/** Qwen Code's tools: `run_shell_command {command, description, is_background}`, sub-agents
 * `agent {description, prompt, subagent_type}` (background by default: its tool output is a launch
 * notice, the child's answer comes later as a `<task-notification>` user message). */
export const qwenFlavor: Flavor = {
  bash(command) {
    return shellCall('run_shell_command', command, { is_background: false });
  },
  task(description, prompt, conv) {
    if (conv.toolOutputs.length > 0) return undefined;
    return { name: 'agent', input: { description, prompt, subagent_type: 'general-purpose' } };
  },
  summarize(output: ToolOutput) {
    // run_shell_command output: Command: …\nDirectory: …\nOutput: <stdout>\nError: …\nExit Code: …
    const m = /^Output: ([\s\S]*?)\n(?:Error|Exit Code):/m.exec(output.text);
    return firstLine(m ? (m[1] ?? '') : output.text);
  },
  aux(conv) {
    // Its "auto" approval mode asks the model whether a tool call may run (a forced respond_in_schema call).
    if (conv.toolNames.length === 1 && conv.toolNames[0] === 'respond_in_schema' && /security classifier/i.test(conv.system)) {
      return { type: 'tool', calls: [{ name: 'respond_in_schema', input: { shouldBlock: false } }] };
    }
    // A background sub-agent's end comes back as a user message; answer like a finished TASK.
    const note = /^\s*<task-notification>[\s\S]*?<result>([\s\S]*?)<\/result>/.exec(conv.lastUserText);
    if (note) return { type: 'text', text: `done: ${firstLine(note[1] ?? '')}` };
    return undefined;
  },
};

/**
 * The flavor of the CLI that sent a request: Qwen Code's when its user agent says so
 * (`QwenCode/0.24.4 (linux; x64)`), Copilot's when it offers its agent tools, else OpenCode's.
 */
export function chatFlavor(conv: Conversation, userAgent = ''): Flavor {
  if (/^QwenCode\//.test(userAgent)) return qwenFlavor;
  return conv.toolNames.includes('list_agents') && conv.toolNames.includes('read_agent') ? copilotFlavor : opencodeFlavor;
}

/** Reads a chat completions request body into a Conversation. */
export function chatConversation(body: unknown): Conversation {
  const b = asRecord(body);
  const messages = asArray(b.messages).map(asRecord);
  const nameByCall = new Map<string, string>();
  for (const m of messages) {
    for (const tc of asArray(m.tool_calls).map(asRecord)) nameByCall.set(asString(tc.id), asString(asRecord(tc.function).name));
  }
  // Qwen Code puts <system-reminder> parts (its skills, the date…) before the prompt.
  const { index: lastUser, text: lastUserText } = lastUserMessage(messages, (m) => (m.role === 'user' ? stripReminders(contentText(m.content)) : undefined));
  const answers = messages.slice(lastUser + 1).filter((m) => m.role === 'tool');
  const toolOutputs = answers.map((m) => toolOutput(asString(m.tool_call_id), contentText(m.content), nameByCall.get(asString(m.tool_call_id))));
  return {
    lastUserText,
    toolOutputs,
    toolNames: namesOf(asArray(b.tools), (t) => asString(t.name) || asString(asRecord(t.function).name)),
    system: messages
      .filter((m) => m.role === 'system')
      .map((m) => contentText(m.content))
      .join('\n'),
    model: asString(b.model),
  };
}

function writeAnswer(req: FakeRequest, res: http.ServerResponse, action: Action, conv: Conversation, { stream }: { stream: boolean }): void {
  if (action.type === 'error') {
    sendJson(res, action.status, openaiError(action.status, errorText(action)), retryHeaders(action));
    return;
  }
  const id = fakeId('chatcmpl');
  const created = Math.floor(Date.now() / 1000);
  const answer = answerOf(action);
  const text = answer.text;
  const calls = answer.calls.map((c) => ({ id: c.id ?? fakeId('call'), name: c.name, args: JSON.stringify(c.input) }));
  const finish = calls.length > 0 ? 'tool_calls' : 'stop';
  const promptTokens = tokens(req.bodyBytes);
  const completionTokens = tokens((text ?? '').length + calls.reduce((n, c) => n + c.args.length, 0));
  const usage = { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens };
  if (!stream) {
    if (action.type === 'fail') {
      sendJson(res, 500, openaiError(500, action.message));
      return;
    }
    const message: Record<string, unknown> = { role: 'assistant', content: text ?? null };
    if (calls.length > 0) message.tool_calls = calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.args } }));
    req.reportedUsage = { promptTokens, completionTokens };
    sendJson(res, 200, { id, object: 'chat.completion', created, model: conv.model, choices: [{ index: 0, message, finish_reason: finish }], usage });
    return;
  }
  const chunk = (delta: Record<string, unknown>, finishReason: string | null = null): void =>
    sseEvent(res, { id, object: 'chat.completion.chunk', created, model: conv.model, choices: [{ index: 0, delta, finish_reason: finishReason }] });
  startSse(res);
  chunk({ role: 'assistant', content: '' });
  if (action.type === 'fail') {
    // OpenCode retries an in-stream error whose text matches its "transient" patterns (server_error,
    // overloaded, 500, timeout, …) with 2 s doubling back-off and no header to shorten it; this type
    // and a neutral message keep the failure final.
    sseEvent(res, { error: { message: action.message, type: 'fake_stream_failure', param: null, code: null } });
    res.end();
    return;
  }
  if (text) chunk({ content: text });
  calls.forEach((c, index) => {
    chunk({ tool_calls: [{ index, id: c.id, type: 'function', function: { name: c.name, arguments: '' } }] });
    chunk({ tool_calls: [{ index, function: { arguments: c.args } }] });
  });
  chunk({}, finish);
  req.reportedUsage = { promptTokens, completionTokens };
  sseEvent(res, { id, object: 'chat.completion.chunk', created, model: conv.model, choices: [], usage });
  sseEvent(res, '[DONE]');
  res.end();
}

/** Starts the fake chat completions server on 127.0.0.1; OpenCode's provider baseURL is `${srv.url}/v1`. */
export function startOpenAIChat(options: FakeOptions = {}): Promise<FakeServer> {
  return startApi(options, {
    side(req, res) {
      if (req.method !== 'GET' || pathOf(req) !== '/v1/models') return false;
      sendJson(res, 200, { object: 'list', data: [{ id: 'fake-model', object: 'model', created: 0, owned_by: 'fake' }] });
      return true;
    },
    call: (req) => (req.method === 'POST' && pathOf(req) === '/v1/chat/completions' ? { stream: asRecord(req.body).stream === true } : null),
    conversation: (req) => chatConversation(req.body),
    flavor: (conv, req) => chatFlavor(conv, String(req.headers['user-agent'] ?? '')),
    write: writeAnswer,
  });
}
