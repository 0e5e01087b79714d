import { attachedRun } from '../shared/attached.js';
import type { Interactive, InteractiveInput, Launch, SessionQuery } from '../types.js';
import { RolloutRun } from './rollout.js';
import { codexHome, findRollout } from './store.js';

/**
 * Codex's interactive mode on a thread, for subagent-attach (docs/attach.md): `codex resume <id>` in the
 * person's terminal (measured with 0.169.0). What happens there is appended to the thread's rollout, read
 * by rollout.ts.
 */

const SAFE_ID = /^[0-9A-Za-z][0-9A-Za-z_-]{0,127}$/;

function launch(input: InteractiveInput): Launch {
  const args = ['resume', input.sessionId];
  if (input.model) args.push('--model', input.model);
  return { command: 'codex', args, env: {} };
}

function sessionFile(q: SessionQuery): string | null {
  if (!q.sessionId || !SAFE_ID.test(q.sessionId)) return null;
  return findRollout(codexHome(q.storeEnv), q.sessionId);
}

export const codexInteractive: Interactive = {
  launch,
  sessionFile,
  // Its prompts are the rollout's own user items (RolloutRun emits them); the verdict is the exit status's.
  open: (run = {}) =>
    attachedRun(
      'codex',
      run,
      () => null,
      (r) => new RolloutRun(r),
    ),
};
