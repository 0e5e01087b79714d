import { SubagentError } from '../../base/errors.js';
import { isUuid } from '../../base/uuid.js';
import type { CliName } from '../types.js';

/**
 * The id a resume continues, for a CLI that must be given a whole UUID there (anything else it could take
 * for another session, or a name that silently starts a new one); else E_SESSION_NOT_FOUND with `hint`.
 * `idName` is what the CLI calls it ("session id", "thread id").
 */
export function resumeUuid(cli: CliName, sessionId: string | null, idName: string, hint: string): string {
  if (isUuid(sessionId)) return sessionId;
  throw new SubagentError('E_SESSION_NOT_FOUND', `${cli} cannot resume "${sessionId ?? ''}": not a ${idName}`, { sessionId, hint });
}
