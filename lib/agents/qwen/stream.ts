import { obj, str } from '../../base/json.js';
import type { Exit, RunOptions, Verdict } from '../types.js';
import { StreamJsonRun } from '../shared/stream-json.js';

/**
 * Qwen Code's `--output-format stream-json` is Claude Code's format (measured with 0.24.4; see
 * docs/agents/qwen.md), read by the stream-json family's run (lib/agents/shared/stream-json.ts) with
 * Qwen's differences given as options: the tools are `run_shell_command` and `agent`; an `agent` result
 * carries no `tool_use_result`, and the sub-agent's id is `<subagent_type>-<tool_use_id>`; the usage of a
 * result line counts the whole session, earlier runs included; there is no cost. `stream_event` lines
 * (its goal state) are passed over.
 */

/** Qwen's shell tool and its sub-agent tool. */
export const SHELL_TOOL = 'run_shell_command';
export const AGENT_TOOL = 'agent';

/** The id Qwen gives the sub-agent of an `agent` call (its task id, and its transcript's name). */
export function qwenAgentId(toolUseId: string, input: unknown): string | null {
  const type = str(obj(input)?.subagent_type);
  return type ? `${type}-${toolUseId}` : null;
}

/** One run's stdout; `run.threadUsageBefore` makes its usage this run's. */
export class QwenRun extends StreamJsonRun {
  constructor(run: RunOptions = {}) {
    super(run, {
      cli: 'qwen',
      agentTools: [AGENT_TOOL],
      shellTools: [SHELL_TOOL],
      agentIdOfCall: qwenAgentId,
      usageScope: 'session',
      usageBefore: run.threadUsageBefore ?? null,
    });
  }

  /** How the run ended: `result.is_error` first, then the exit status (53: turn limit, 55: time or tool-call limit). */
  override verdict(exit: Exit): Verdict {
    const v = super.verdict(exit);
    // Exit 53 without a result: --max-session-turns reached (Qwen says so on stderr only).
    return v.reason === 'crashed' && exit.code === 53 ? { ...v, reason: 'max-turns' } : v;
  }
}
