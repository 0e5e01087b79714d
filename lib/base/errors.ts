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
  'E_PATTERN_TIMEOUT',
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
  'E_REGISTRY_UNREADABLE',
  'E_EXECUTOR_FAILED',
  'E_NOT_A_TERMINAL',
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

/**
 * What went wrong, said once: Node's own messages start with the errno ("ENOSPC: no space left on
 * device, write"), so the code is prefixed only to a message that does not already carry it.
 */
export function fsReason(err: unknown): string {
  const e = err as NodeJS.ErrnoException & { kind?: string };
  // lib/base/regular.ts's NotAFileError: the path is said by the caller's sentence already.
  if (e?.code === 'EFTYPE' && e.kind) return `a ${e.kind}, not a regular file`;
  const message = e?.message ?? String(err);
  if (!e?.code || message.startsWith(e.code)) return message;
  return `${e.code}: ${message}`;
}

export function unwritable(path: string, err: unknown): SubagentError {
  const e = err as NodeJS.ErrnoException;
  return new SubagentError('E_REGISTRY_UNWRITABLE', `cannot write to the registry at ${path}: ${fsReason(err)}`, {
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

/** Calls of the file system that change it: their failure is E_REGISTRY_UNWRITABLE, any other E_REGISTRY_UNREADABLE. */
const WRITING_SYSCALLS = [
  'mkdir',
  'mkdtemp',
  'rename',
  'unlink',
  'rmdir',
  'rm',
  'write',
  'chmod',
  'fchmod',
  'fsync',
  'link',
  'symlink',
  'utime',
  'futime',
  'ftruncate',
  'copyfile',
];

/** How to fix a registry path that cannot be read, by what is wrong with it. */
function unreadableHint(path: string, code: string | undefined): string {
  if (code === 'EACCES' || code === 'EPERM')
    return `give its owner read and search permission back on ${path} and the registry's folders above it (chmod u+rwX), or point --registry / SUBAGENT_DIR at a registry you can read`;
  if (code === 'ELOOP') return `${path} is (or passes through) a symbolic link loop: remove the link or point it at a directory`;
  if (code === 'EFTYPE') return `move ${path} away: the registry holds only regular files and directories there`;
  if (code === 'ENOTDIR') return `a file stands where the registry expects a directory on the way to ${path}: move it away`;
  return `check ${path} (its type, permissions and the disk under it); nothing was changed`;
}

/** A registry path that cannot be read (permissions, a symlink loop, a FIFO where a file should be…): E_REGISTRY_UNREADABLE naming it. */
export function unreadable(path: string, err: unknown): SubagentError {
  const code = (err as NodeJS.ErrnoException)?.code;
  return new SubagentError('E_REGISTRY_UNREADABLE', `cannot read ${path}: ${fsReason(err)}`, {
    path,
    errno: code ?? null,
    hint: unreadableHint(path, code),
  });
}

/**
 * An error of the file system on a path inside `registry` is no bug of ours but the registry's state:
 * as its registry error (null for anything else). Every verb passes its errors through here, so an
 * unreadable folder or a symlink loop found on any path is named, not E_INTERNAL.
 */
export function registryFault(err: unknown, registry: string): SubagentError | null {
  if (err instanceof SubagentError || typeof err !== 'object' || err === null) return null;
  const e = err as NodeJS.ErrnoException;
  if (typeof e.code !== 'string' || typeof e.path !== 'string') return null;
  if (e.path !== registry && !e.path.startsWith(registry + '/')) return null;
  if (e.syscall && WRITING_SYSCALLS.includes(e.syscall)) return unwritable(registry, err);
  return unreadable(e.path, err);
}

/** The same error, naming the registry it happened in (unless it names one already). */
export function inRegistry(err: unknown, registry: string): SubagentError {
  const e = registryFault(err, registry) ?? internalError(err, registry);
  if (e.details.registry === undefined) e.details.registry = registry;
  return e;
}
