import type { Launch, LaunchInput } from '../types.js';
import { resumeUuid } from '../shared/launch.js';

/**
 * The command line of a Codex run (`codex exec --json`, the prompt on stdin as `-`; docs/agents/codex.md):
 *
 *   new run  codex exec [extra…] --json --skip-git-repo-check -C <cwd> [-m M] [-c model_reasoning_effort="V"] -
 *   resume   codex exec [extra…] --json --skip-git-repo-check -C <cwd> [-m M] [-c …] resume <thread_id> -
 *
 * Every exec-level option goes *before* `resume` (`-s`, `-C`, `-p`, `--add-dir` are refused after it).
 */

export function launch(input: LaunchInput): Launch {
  // Exec-level options, valid for a new run and (placed before `resume`) for a resume. The caller's
  // arguments come first: a multi-value option among them (`-i a.png b.png`) then ends at our first
  // flag instead of swallowing `resume <id> -` (codex would silently start a new thread) or `-`.
  const options = [...input.extraArgs, '--json', '--skip-git-repo-check', '-C', input.cwd];
  if (input.model) options.push('-m', input.model);
  if (input.variant) options.push('-c', `model_reasoning_effort=${JSON.stringify(input.variant)}`);
  if (input.mode === 'new') return { command: 'codex', args: ['exec', ...options, '-'], env: {} };
  // `resume` with anything but a thread UUID is taken as a thread *name*, and an unknown name silently
  // starts a new thread: never let that happen.
  const thread = resumeUuid(
    'codex',
    input.sessionId,
    'thread id',
    'the earlier run never reported a Codex thread id (thread.started); start a new name instead',
  );
  return { command: 'codex', args: ['exec', ...options, 'resume', thread, '-'], env: {} };
}
