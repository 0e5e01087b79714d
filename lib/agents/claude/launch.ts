import { randomUUID } from '../../base/uuid.js';
import type { Launch, LaunchInput } from '../types.js';

/**
 * The command line of a Claude Code run (see docs/agents/claude.md):
 *
 *   new:    claude -p --output-format stream-json --verbose --session-id <uuid we chose> [flags] [-- args]
 *   resume: claude -p --output-format stream-json --verbose --resume <id>           [flags] [-- args]
 *
 * The caps Claude holds itself (`caps` in index.ts): --max-cost is its `--max-budget-usd` (this process's
 * cost, so a resume's own), --max-turns its `--max-turns` (not in --help, measured with 2.1.197 and 2.1.331).
 *
 * The prompt is stdin (no prompt argument: Claude reads stdin to EOF).
 */

/** Claude takes the session id we give it (`--session-id`), so it is known before the run starts. */
export function chooseSessionId(): string {
  return randomUUID();
}

export function launch(input: LaunchInput): Launch {
  const args = ['-p', '--output-format', 'stream-json', '--verbose'];
  if (input.mode === 'resume') {
    if (!input.sessionId) throw new Error('claude: resume needs the session id of the earlier run');
    args.push('--resume', input.sessionId);
  } else if (input.sessionId) {
    args.push('--session-id', input.sessionId);
  }
  if (input.model) args.push('--model', input.model);
  if (input.variant) args.push('--effort', input.variant);
  if (input.agent) args.push('--agent', input.agent);
  if (input.caps.maxCostUsd !== null) args.push('--max-budget-usd', String(input.caps.maxCostUsd));
  if (input.caps.maxTurns !== null) args.push('--max-turns', String(input.caps.maxTurns));
  // Last: several of Claude's options are variadic (--allowedTools <tools...>) and would swallow
  // anything after them; nothing of ours follows, and the prompt is on stdin.
  args.push(...input.extraArgs);
  return { command: 'claude', args, env: {} };
}
