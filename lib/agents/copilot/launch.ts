import { randomUUID } from '../../base/uuid.js';
import type { Launch, LaunchInput } from '../types.js';
import { resumeUuid } from '../shared/launch.js';

/**
 * The command line of a GitHub Copilot CLI run (measured with 1.0.102; see docs/agents/copilot.md):
 *
 *   new:    copilot --output-format json --allow-all-tools --session-id <uuid we chose> [flags] [args…]
 *   resume: copilot --output-format json --allow-all-tools --resume <uuid>               [flags] [args…]
 *
 * The prompt is stdin (no -p: Copilot reads stdin to EOF when it is not a terminal). Headless, every
 * tool but the trivial ones is denied unless --allow-all-tools; the caller narrows that with
 * `-- --deny-tool …` (denials win over it) or widens it with `-- --allow-all-paths`.
 */

/** Copilot takes the id we give it (`--session-id`): its stream names the session only in its last line. */
export function chooseSessionId(): string {
  return randomUUID();
}

export function launch(input: LaunchInput): Launch {
  const args = ['--output-format', 'json', '--allow-all-tools'];
  if (input.mode === 'resume') {
    // `--resume` also takes a session *name* or an id prefix, and `--session-id` starts a new session
    // when the id is unknown: only a whole UUID with `--resume` fails on a session that is not there.
    args.push('--resume', resumeUuid('copilot', input.sessionId, 'session id', 'the earlier run has no Copilot session UUID; start a new name instead'));
  } else if (input.sessionId) {
    args.push('--session-id', input.sessionId);
  }
  if (input.model) args.push('--model', input.model);
  if (input.variant) args.push('--reasoning-effort', input.variant);
  if (input.agent) args.push('--agent', input.agent);
  // Last: --allow-tool, --deny-tool, --add-dir… take several values and would swallow what follows.
  args.push(...input.extraArgs);
  return { command: 'copilot', args, env: {} };
}
