import { randomUUID } from '../../base/uuid.js';
import type { Launch, LaunchInput } from '../types.js';
import { resumeUuid } from '../shared/launch.js';

/**
 * The command line of a Gemini CLI run (docs/agents/gemini.md):
 *
 *   new:    gemini -o stream-json --session-id <uuid we chose> [-m M] [ARGS…]
 *   resume: gemini -o stream-json --resume <that uuid>         [-m M] [ARGS…]
 *
 * with GEMINI_CLI_NO_RELAUNCH=true. The prompt is stdin (a stdin that is not a terminal makes the CLI
 * headless; it reads stdin to EOF).
 */

/** The Gemini CLI takes the session id we give it (`--session-id`), so it is known before the run starts. */
export function chooseSessionId(): string {
  return randomUUID();
}

export function launch(input: LaunchInput): Launch {
  const args = ['-o', 'stream-json'];
  if (input.mode === 'resume') {
    // `--resume` also takes "latest" and a list index: anything but the session's UUID could resume
    // another session.
    args.push('--resume', resumeUuid('gemini', input.sessionId, 'session id', 'the earlier run has no Gemini session id; start a new name instead'));
  } else if (input.sessionId) {
    args.push('--session-id', input.sessionId);
  }
  if (input.model) args.push('-m', input.model);
  // Last: several of the CLI's options are arrays (--policy, --include-directories, --extensions) that
  // would swallow what follows; nothing of ours does, and the prompt is on stdin.
  args.push(...input.extraArgs);
  // Without it, `gemini` is a launcher that starts a second Node with a bigger heap and ignores SIGINT,
  // SIGTERM and SIGHUP while it waits: signals would not reach the CLI, and a CLI killed by a signal
  // would be reported as "exit 1". The launcher also loads the whole CLI first (~170 MB RSS).
  return { command: 'gemini', args, env: { GEMINI_CLI_NO_RELAUNCH: 'true' } };
}
