import { statSync } from 'node:fs';
import { SubagentError } from '../base/errors.js';

/**
 * The registry is private to its owner whatever the umask (a shared filesystem has other users, and
 * the registry holds prompts, answers and error text): every directory it creates is 0700, every file
 * 0600. A umask only takes bits away, so these modes are what the files get, or less.
 */
export const PRIVATE_DIR = 0o700;
export const PRIVATE_FILE = 0o600;

/**
 * A registry that belongs to another user is refused before anything is read or written: its runs
 * are not ours to start, cancel or cache, and a file we wrote into it would be ours, not its owner's.
 * A registry that does not exist yet is ours to create.
 */
export function refuseForeign(registry: string): void {
  const me = process.getuid?.();
  if (me === undefined) return;
  let owner: number;
  try {
    owner = statSync(registry).uid;
  } catch {
    return;
  }
  if (owner === me) return;
  throw new SubagentError('E_REGISTRY_FOREIGN', `the registry ${registry} belongs to another user (uid ${owner}, not ${me}); it was not read nor written`, {
    path: registry,
    owner,
    uid: me,
    hint: 'use your own registry (--registry or SUBAGENT_DIR), or run the command as the user who owns it',
  });
}
