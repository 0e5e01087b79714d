import { randomUUID } from '../../base/uuid.js';
import type { Launch, LaunchInput } from '../types.js';

/**
 * The command line of a Qwen Code run (see docs/agents/qwen.md):
 *
 *   new:    qwen --output-format stream-json --chat-recording --session-id <uuid we chose> [--model M] [-- args]
 *   resume: qwen --output-format stream-json --chat-recording --resume <id>                [--model M] [-- args]
 *
 * The prompt is stdin (no prompt argument: Qwen reads stdin to EOF, up to 8 MB, and appends "\n\n").
 * `--chat-recording` because a resume and `result --child` read what Qwen records of the session; a
 * user whose settings turn recording off would otherwise get runs that cannot be resumed.
 */

/** Qwen takes the session id we give it (`--session-id`, a UUID), so it is known before the run starts. */
export function chooseSessionId(): string {
  return randomUUID();
}

export function launch(input: LaunchInput): Launch {
  const args = ['--output-format', 'stream-json', '--chat-recording'];
  if (input.mode === 'resume') {
    if (!input.sessionId) throw new Error('qwen: resume needs the session id of the earlier run');
    args.push('--resume', input.sessionId);
  } else if (input.sessionId) {
    args.push('--session-id', input.sessionId);
  }
  if (input.model) args.push('--model', input.model);
  // Last: several of Qwen's options are arrays (--allowed-tools <tools...>) and would swallow anything after them.
  args.push(...input.extraArgs);
  return { command: 'qwen', args, env: {} };
}
