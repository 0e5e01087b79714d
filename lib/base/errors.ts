/** Every failure a verb can report. Codes are stable API: never reuse one for another meaning. */
export const ERROR_CODES = [
  'E_NAME_REQUIRED',
  'E_NAME_INVALID',
  'E_NAME_EXISTS',
  'E_NAME_NOT_FOUND',
  'E_PROMPT_REQUIRED',
  'E_ARG_UNKNOWN',
  'E_ARG_INVALID',
  'E_CWD_INVALID',
  'E_CLI_UNKNOWN',
  'E_CMD_MISSING',
  'E_AGENT_BUSY',
  'E_NOT_RUNNING',
  'E_SIGNAL_UNSUPPORTED',
  'E_PATTERN_REQUIRED',
  'E_PATTERN_INVALID',
  'E_SESSION_NOT_FOUND',
  'E_CWD_MISMATCH',
  'E_WAIT_NAME_REQUIRED',
  'E_WAIT_TIMEOUT',
  'E_ARG_UNSUPPORTED',
  'E_CHILD_NOT_FOUND',
  'E_RUN_FAILED',
  'E_DEPTH_LIMIT',
  'E_RUN_NOT_FOUND',
  'E_BATCH_INCOMPLETE',
  'E_LOCK_TIMEOUT',
  'E_PROC_UNAVAILABLE',
  'E_IDENTITY_UNCHECKABLE',
  'E_REGISTRY_CORRUPT',
  'E_REGISTRY_UNWRITABLE',
  'E_REGISTRY_FOREIGN',
  'E_REGISTRY_NOT_FOUND',
  'E_REGISTRY_NOT_DIRECTORY',
  'E_REGISTRY_UNSAFE',
  'E_REGISTRY_UNTRUSTED',
  'E_EXECUTOR_FAILED',
  'E_INTERNAL',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

export interface ErrorDetails {
  hint?: string;
  [key: string]: unknown;
}

export class SubagentError extends Error {
  readonly code: ErrorCode;
  readonly details: ErrorDetails;
  /** Extra top-level fields of the JSON line (E_WAIT_TIMEOUT carries `agents`). */
  readonly extra: Record<string, unknown>;
  readonly exitCode: number;

  constructor(code: ErrorCode, message: string, details: ErrorDetails = {}, extra: Record<string, unknown> = {}) {
    super(message);
    this.name = 'SubagentError';
    this.code = code;
    this.details = details;
    this.extra = extra;
    this.exitCode = code === 'E_WAIT_TIMEOUT' ? 124 : 1;
  }
}

export function isErrno(err: unknown, ...codes: string[]): err is NodeJS.ErrnoException {
  return typeof err === 'object' && err !== null && codes.includes((err as NodeJS.ErrnoException).code ?? '');
}

/** Errors of the file system that mean "the registry cannot be written", not a bug of ours. */
export const UNWRITABLE_ERRNOS = ['ENOSPC', 'EROFS', 'EDQUOT', 'EACCES', 'EPERM', 'EIO', 'EFBIG', 'EMFILE', 'ENFILE'];

export function unwritable(path: string, err: unknown): SubagentError {
  const e = err as NodeJS.ErrnoException;
  return new SubagentError('E_REGISTRY_UNWRITABLE', `cannot write to the registry at ${path}: ${e.code ?? ''} ${e.message}`.trim(), {
    path,
    errno: e.code ?? null,
    hint: 'free disk space or fix the permissions of the registry directory, or point --registry / SUBAGENT_DIR elsewhere',
  });
}

/**
 * An exception that is not a SubagentError is a bug of ours: it is reported as E_INTERNAL, with the
 * registry it happened in when that is known, and the top of its stack.
 */
export function internalError(err: unknown, registry: string | null): SubagentError {
  if (err instanceof SubagentError) return err;
  const e = err as Error;
  return new SubagentError('E_INTERNAL', `internal error: ${e?.message ?? String(err)}`, {
    ...(registry ? { registry } : {}),
    hint: 'this is a bug in subagents; please report it with the command line that caused it',
    stack: e?.stack?.split('\n').slice(0, 6) ?? [],
  });
}

/** The same error, naming the registry it happened in (unless it names one already). */
export function inRegistry(err: unknown, registry: string): SubagentError {
  const e = internalError(err, registry);
  if (e.details.registry === undefined) e.details.registry = registry;
  return e;
}
