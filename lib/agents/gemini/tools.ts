import { fields, isObject, shortLine, str } from '../../base/json.js';
import type { Message } from '../types.js';

/**
 * The Gemini CLI's tool calls, as its stream (`tool_use` + `tool_result`) and its chat files (a
 * message's `toolCalls`) both carry them: the transcript message of one call. Read by stream.ts and
 * store.ts.
 */

export const TOOL_INPUT_MAX = 300;
export const TOOL_OUTPUT_MAX = 500;

/** The sub-agent tool: `{agent_name, prompt}`; the child runs inside the same process. */
export const AGENT_TOOL = 'invoke_agent';
/** The tool a sub-agent ends with; its argument is the child's answer. */
export const COMPLETE_TASK = 'complete_task';

/** The argument that says what a call does, by the first of these keys it has. */
const MAIN_ARGS = ['command', 'file_path', 'absolute_path', 'dir_path', 'path', 'pattern', 'query', 'url', 'prompt', 'fact'];

/** What a call was asked, in one line (`agent: prompt` for a sub-agent, else its main argument or its JSON). */
export function toolInput(name: string, args: unknown): string | null {
  if (!isObject(args)) return args === undefined || args === null ? null : shortLine(String(args), TOOL_INPUT_MAX);
  if (name === AGENT_TOOL) {
    const agent = str(args.agent_name);
    const prompt = str(args.prompt) ?? '';
    return shortLine(agent ? `${agent}: ${prompt}` : prompt, TOOL_INPUT_MAX) || null;
  }
  for (const k of MAIN_ARGS) {
    const v = args[k];
    if (typeof v === 'string' && v !== '') return shortLine(v, TOOL_INPUT_MAX);
  }
  const json = JSON.stringify(args);
  return json === '{}' ? null : shortLine(json, TOOL_INPUT_MAX);
}

/** The transcript message of a tool call: `run_shell_command: ls -la`, its output and the CLI's status word. */
export function toolMessage(name: string, args: unknown, output: string | null, status: string | null): Message {
  const input = toolInput(name, args);
  const out = output === null || output.trim() === '' ? null : shortLine(output, TOOL_OUTPUT_MAX);
  return { role: 'tool', text: input ? `${name}: ${input}` : name, tool: { name, input, output: out, status } };
}

/**
 * A sub-agent's answer out of its `complete_task` arguments: the declared output (`result`; for the
 * generalist an object `{response}`), as text. Null when there is none.
 */
export function submittedAnswer(args: unknown): string | null {
  const a = fields(args);
  const v = a.result ?? Object.values(a)[0];
  if (typeof v === 'string') return v;
  if (v === undefined || v === null) return null;
  const inner = Object.values(fields(v));
  if (inner.length === 1 && typeof inner[0] === 'string') return inner[0];
  return JSON.stringify(v, null, 2);
}
