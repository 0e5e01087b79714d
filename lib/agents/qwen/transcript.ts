import { capCounted, fields, obj, parseObject, str } from '../../base/json.js';
import { OUTPUT_MAX, toolHeadline, toolInputSummary } from '../shared/tools.js';
import type { Message } from '../types.js';
import { AGENT_TOOL, SHELL_TOOL } from './stream.js';

/**
 * Qwen Code's transcript format (its chat recording: `chats/<session>.jsonl` and a sub-agent's
 * `subagents/<session>/agent-<id>.jsonl`), which is not its stream's: one record per line, `type`
 * `user` | `assistant` | `tool_result` | `system`, and `message: {role: "user" | "model", parts: […]}`
 * with Gemini's parts: `{text}` (`thought: true` for reasoning), `{functionCall: {id, name, args}}`,
 * `{functionResponse: {id, name, response: {output} | {error}}}`.
 */

/** What a transcript reader needs: a line at a time, and the end (to emit the calls that got no response). */
export interface TranscriptReader {
  line(text: string): void;
  end(): void;
}

interface Call {
  name: string;
  args: unknown;
}

/**
 * Reads a transcript: a sub-agent's, every message `childId`'s, its prompt included; the session's own
 * (a person's turn in it, subagent-attach) without `childId`.
 */
export function transcriptReader(childId: string | undefined, onMessage: (m: Message) => void): TranscriptReader {
  const tag = childId === undefined ? {} : { childId };
  const pending = new Map<string, Call>();
  const emitTool = (call: Call, output: string | null, status: string): void => {
    const kind = call.name === SHELL_TOOL ? 'shell' : call.name === AGENT_TOOL ? 'agent' : null;
    onMessage({
      role: 'tool',
      text: toolHeadline(call.name, call.args),
      tool: { name: call.name, input: toolInputSummary(call.name, call.args, kind), output: output === null ? null : capCounted(output, OUTPUT_MAX), status },
      ...tag,
    });
  };
  return {
    line(text) {
      const record = parseObject(text);
      if (!record || record.type === 'system') return;
      const parts = Array.isArray(fields(record.message).parts) ? (fields(record.message).parts as unknown[]) : [];
      for (const p of parts) {
        const part = obj(p);
        if (!part) continue;
        const call = obj(part.functionCall);
        const response = obj(part.functionResponse);
        if (typeof part.text === 'string') {
          if (part.thought === true || !part.text.trim()) continue;
          // Qwen's own additions to a user turn: a task notification, a <system-reminder> part.
          if (record.type === 'user' && (record.subtype !== undefined || /^\s*<system-reminder>[\s\S]*<\/system-reminder>\s*$/.test(part.text))) continue;
          if (record.type === 'user') onMessage({ role: 'user', text: part.text, ...tag });
          else if (record.type === 'assistant') onMessage({ role: 'assistant', text: part.text, ...tag });
        } else if (call) {
          pending.set(str(call.id) ?? `call-${pending.size + 1}`, { name: str(call.name) ?? 'tool', args: call.args });
        } else if (response) {
          const id = str(response.id) ?? '';
          const made = pending.get(id) ?? { name: str(response.name) ?? 'tool', args: undefined };
          pending.delete(id);
          const r = fields(response.response);
          const error = str(r.error) ?? str(fields(r.error).message);
          emitTool(made, error ?? str(r.output) ?? (r.output === undefined ? null : JSON.stringify(r.output)), error ? 'error' : 'completed');
        }
      }
    },
    end() {
      for (const call of pending.values()) emitTool(call, null, 'incomplete');
      pending.clear();
    },
  };
}
