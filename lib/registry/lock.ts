import { closeSync, fstatSync, openSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { readRegular } from '../base/regular.js';
import { SubagentError, isErrno, unwritable } from '../base/errors.js';
import { isIdentity, liveness, lookAgain, selfIdentity, type ProcessIdentity } from '../proc/identity.js';
import { monotonicMs, sleepSync } from '../base/time.js';
import { PRIVATE_FILE } from './private.js';

/**
 * An exclusive lock file holding its owner's identity (pid + start time + boot id), git style:
 * created with O_EXCL. Taken over only when the owner is proven dead, and then only by the holder of
 * `<lock>.break`, who re-checks that the lock is still the same dead one (same inode, same content)
 * before removing it — so two takers can never both win.
 *
 * Owner data that cannot be parsed: the owner writes it right after creating the file, so unreadable
 * data older than UNREADABLE_GRACE_MS is treated as abandoned; younger, it is waited for. An owner the
 * process backend cannot check (recorded by the other backend) is never proven dead: it is waited for.
 */
export const UNREADABLE_GRACE_MS = 5000;
export const DEFAULT_LOCK_TIMEOUT_MS = 15000;
const LOOK_AGAIN_MS = 250;

export interface LockHandle {
  path: string;
  ino: number;
  /** What we wrote into it: with the inode, how we know a lock file is still ours. */
  text: string;
}

type Owner = { kind: 'alive'; unchecked: boolean } | { kind: 'dead'; ino: number; text: string } | { kind: 'gone' } | { kind: 'young-unreadable' };

function inspect(path: string): Owner {
  let text: string;
  let ino: number;
  let mtimeMs: number;
  try {
    const st = statSync(path);
    ino = st.ino;
    mtimeMs = st.mtimeMs;
    text = readRegular(path).toString('utf8');
  } catch (err) {
    if (isErrno(err, 'ENOENT')) return { kind: 'gone' };
    throw err;
  }
  let owner: unknown;
  try {
    owner = JSON.parse(text);
  } catch {
    owner = null;
  }
  if (!isIdentity(owner)) {
    return Date.now() - mtimeMs > UNREADABLE_GRACE_MS ? { kind: 'dead', ino, text } : { kind: 'young-unreadable' };
  }
  const state = liveness(owner);
  return state === 'dead' ? { kind: 'dead', ino, text } : { kind: 'alive', unchecked: state === 'unchecked' };
}

function tryCreate(path: string, me: ProcessIdentity): LockHandle | null {
  let fd: number;
  try {
    fd = openSync(path, 'wx', PRIVATE_FILE);
  } catch (err) {
    if (isErrno(err, 'EEXIST')) return null;
    throw err;
  }
  const text = JSON.stringify(me);
  let ino: number;
  try {
    writeSync(fd, text);
    ino = fstatSync(fd).ino;
  } catch (err) {
    closeSync(fd);
    unlinkSync(path);
    throw err;
  }
  closeSync(fd);
  return { path, ino, text };
}

/** Remove a lock we judged dead — only if it is still that very file. */
function breakDeadLock(path: string, judged: { ino: number; text: string }, me: ProcessIdentity): void {
  const breaker = `${path}.break`;
  const held = tryCreate(breaker, me);
  if (!held) {
    const other = inspect(breaker);
    if (other.kind === 'dead') removeIfSame(breaker, other.ino, other.text);
    return;
  }
  try {
    const now = inspect(path);
    if (now.kind === 'dead' && now.ino === judged.ino && now.text === judged.text) removeIfSame(path, now.ino, now.text);
  } finally {
    removeIfSame(breaker, held.ino, held.text);
  }
}

/**
 * Unlinks `path` only while it is the file we mean: same inode and same content (ext4 hands a freed
 * inode number straight to the next new file, so the inode alone does not say "the same file").
 */
function removeIfSame(path: string, ino: number, text: string): void {
  try {
    if (statSync(path).ino === ino && readRegular(path).toString('utf8') === text) unlinkSync(path);
  } catch (err) {
    if (!isErrno(err, 'ENOENT')) throw err;
  }
}

export function acquireLock(path: string, timeoutMs = DEFAULT_LOCK_TIMEOUT_MS): LockHandle {
  const me = selfIdentity();
  const deadline = monotonicMs() + timeoutMs;
  let looked = -Infinity;
  let pause = 1;
  for (;;) {
    let handle: LockHandle | null;
    try {
      handle = tryCreate(path, me);
    } catch (err) {
      throw unwritable(path, err);
    }
    if (handle) return handle;
    // A loop that sleeps without yielding keeps the process backend's view unless told to look again:
    // at most every LOOK_AGAIN_MS, as a look costs the ps backend a process (~13 ms; /proc has no view to
    // drop and is read afresh by every check). An owner's death is seen that much later at most.
    if (monotonicMs() - looked >= LOOK_AGAIN_MS) {
      lookAgain();
      looked = monotonicMs();
    }
    const owner = inspect(path);
    if (owner.kind === 'dead') {
      breakDeadLock(path, owner, me);
      continue;
    }
    if (owner.kind === 'gone') continue;
    if (monotonicMs() > deadline) {
      const by = owner.kind === 'alive' && owner.unchecked ? 'a process this process backend cannot check' : 'a live process';
      throw new SubagentError('E_LOCK_TIMEOUT', `the lock ${path} stayed held by ${by} for ${Math.round(timeoutMs / 1000)} s`, {
        path,
        hint: 'another subagents command is updating this run; retry, or find the owner: cat the lock file for its pid',
      });
    }
    sleepSync(pause);
    pause = Math.min(pause * 2, 25);
  }
}

export function releaseLock(handle: LockHandle): void {
  removeIfSame(handle.path, handle.ino, handle.text);
}

export function withLock<T>(path: string, fn: () => T): T {
  const handle = acquireLock(path);
  try {
    return fn();
  } finally {
    releaseLock(handle);
  }
}
