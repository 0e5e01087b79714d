import { fields, isObject, shortLine, str } from '../../base/json.js';
import type { ToolCall } from '../types.js';

/**
 * OpenCode's tool parts, as its `--format json` stream (`tool_use` events) and `opencode export` (the
 * store) both carry them: the transcript message of a tool call, and what a `task` (sub-agent) call says.
 * Read by stream.ts and store.ts.
 */

/** Caps for the short summaries a transcript keeps of tool calls. */
export const TOOL_INPUT_MAX = 300;
export const TOOL_OUTPUT_MAX = 500;

/** The one argument that says what a tool call does, for the readable `text` (`bash: ls -la`). */
function toolInputSummary(tool: string, input: unknown): string | null {
  if (!isObject(input)) return input === undefined || input === null ? null : shortLine(String(input), TOOL_INPUT_MAX);
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
  return main === null ? null : shortLine(main, TOOL_INPUT_MAX);
}

/** The words inside a task tool's output: `<task id=… state=…>\n<task_result>\n…\n</task_result>\n</task>`. */
export function taskResult(output: string): string {
  const m = /<task_result>\n?([\s\S]*?)\n?<\/task_result>/.exec(output);
  return (m ? (m[1] ?? '') : output).trim();
}

export function taskChildId(state: Record<string, unknown>): string | null {
  const meta = fields(state.metadata);
  const fromMeta = str(meta.sessionId);
  if (fromMeta) return fromMeta;
  const out = str(state.output);
  const m = out ? /<task id="([^"]+)"/.exec(out) : null;
  return m?.[1] ?? null;
}

export interface ToolPart {
  tool: string;
  call: ToolCall;
  text: string;
  state: Record<string, unknown>;
}

/** A `tool` part (of the stream's tool_use events and of `opencode export`) as a transcript message. */
export function toolPart(part: Record<string, unknown>): ToolPart {
  const tool = str(part.tool) ?? 'tool';
  const state = fields(part.state);
  const status = str(state.status);
  const input = toolInputSummary(tool, state.input);
  let output: string | null = null;
  if (status === 'error') output = str(state.error);
  else if (typeof state.output === 'string') output = tool === 'task' ? taskResult(state.output) : state.output;
  const call: ToolCall = { name: tool, input, output: output === null ? null : shortLine(output, TOOL_OUTPUT_MAX), status };
  const label = tool === 'task' ? (str(isObject(state.input) ? state.input.description : null) ?? input) : input;
  return { tool, call, text: label ? `${tool}: ${label}` : tool, state };
}
