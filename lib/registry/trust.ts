import {
  chmodSync,
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  mkdirSync,
  openSync,
  readSync,
  renameSync,
  statSync,
  writeFileSync,
  type BigIntStats,
} from 'node:fs';
import { join } from 'node:path';
import { SubagentError, isErrno, unwritable } from '../base/errors.js';
import { PRIVATE_DIR, PRIVATE_FILE } from './private.js';

/**
 * Which registries may run code as their user (docs/security.md). Listing and reading never run
 * anything; the end hooks (`hooks/on-end`, a record's `onEnd`) run only from a *trusted* registry:
 *
 * - one named explicitly (--registry, SUBAGENT_DIR) and owned by the caller, or
 * - one that carries a marker (`made-here.json`) naming this very directory and this uid, written by
 *   a start of this user that created the registry (or was told its path explicitly).
 *
 * "This very directory" is its inode number and birth time. Git (and tar, rsync, cp) carry a file's
 * bytes, never its inode nor its birth: a marker committed into a repository, unpacked from an archive
 * or copied from another machine names another directory than the one it is found in, and is void. A
 * registry moved with `mv` on one filesystem, or seen through NFS from another node, is the same
 * directory and stays trusted.
 */
export const MARKER = 'made-here.json';

/**
 * Where a registry came from (lib/registry/locate.ts's `source`), as far as trust is concerned:
 * `inherited` is a SUBAGENT_DIR that a supervisor handed to its agent (SUBAGENT_RUN_ID beside it) —
 * not the user's naming, so as trusted as the registry's marker says.
 */
export type Found = 'flag' | 'env' | 'inherited' | 'ancestor' | 'cwd';

export interface Trust {
  trusted: boolean;
  /** Why not, when not. */
  reason: string | null;
  /** What to do about it, when not. */
  hint: string | null;
}

interface Marker {
  uid: number;
  ino: string;
  birth: string;
  /** true: the suite created the directory (so it may make it private); false: adopted by name. */
  created: boolean;
}

const TRUSTED: Trust = { trusted: true, reason: null, hint: null };

/** Group or world may write: another user could plant what we would run. */
export const OTHERS_WRITE = 0o022;

function me(): number | undefined {
  return process.getuid?.();
}

/** The registry's trust: one stat of the directory and, when found by walking up, one read of its marker. */
export function trustOf(registry: string, found: Found): Trust {
  const uid = me();
  if (uid === undefined) return TRUSTED;
  let st: BigIntStats;
  try {
    st = statSync(registry, { bigint: true });
  } catch {
    return TRUSTED; // not there yet: nothing in it to run, and a start creates it with its marker
  }
  if (Number(st.uid) !== uid) return untrusted(`it belongs to uid ${st.uid}, not ${uid}`, 'use your own registry (--registry or SUBAGENT_DIR)');
  if (Number(st.mode) & OTHERS_WRITE) {
    return untrusted(
      `other users may write into it (mode ${(Number(st.mode) & 0o777).toString(8)})`,
      `make it private (chmod go-w ${registry}) and check that nobody planted anything in it (hooks/, agents/)`,
    );
  }
  if (found === 'flag' || found === 'env') return TRUSTED;
  if (markerMatches(registry, st, uid)) return TRUSTED;
  return untrusted(
    'it was found by walking up from the working directory and was not made here by your own start: it may have come with a clone, an archive or another machine',
    `if it is yours, adopt it by naming it: --registry ${registry} (or SUBAGENT_DIR=${registry}); a start-subagent that names it records it as made here`,
  );
}

function untrusted(reason: string, hint: string): Trust {
  return { trusted: false, reason: `the registry runs no hooks: ${reason}`, hint };
}

/** The marker as read, or null (missing, not a plain file of ours, not a marker). Never follows a symlink, never blocks on a FIFO. */
function readMarker(registry: string, uid: number): Marker | null {
  let fd: number;
  try {
    fd = openSync(join(registry, MARKER), constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    return null;
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile() || st.uid !== uid || st.size > 4096) return null;
    const buf = Buffer.alloc(st.size);
    const n = readSync(fd, buf, 0, buf.length, 0);
    const m = JSON.parse(buf.subarray(0, n).toString('utf8')) as Partial<Marker>;
    if (typeof m.uid !== 'number' || typeof m.ino !== 'string' || typeof m.birth !== 'string') return null;
    return { uid: m.uid, ino: m.ino, birth: m.birth, created: m.created === true };
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
}

function markerMatches(registry: string, st: BigIntStats, uid: number): Marker | null {
  const m = readMarker(registry, uid);
  if (!m || m.uid !== uid || m.ino !== String(st.ino)) return null;
  // A filesystem (or an NFS client) that cannot tell a birth time says 0: the inode alone decides then.
  const birth = String(st.birthtimeNs);
  return m.birth === birth || m.birth === '0' || birth === '0' ? m : null;
}

function writeMarker(registry: string, st: BigIntStats, uid: number, created: boolean): void {
  const m: Marker = { uid, ino: String(st.ino), birth: String(st.birthtimeNs), created };
  const tmp = join(registry, `.${MARKER}.${process.pid}`);
  writeFileSync(tmp, JSON.stringify(m) + '\n', { mode: PRIVATE_FILE });
  renameSync(tmp, join(registry, MARKER));
}

/** The parts of a registry on the way to what is run or trusted: each must be a directory of the registry's owner that only the owner may write. */
export const GUARDED = ['hooks', 'agents', 'queue', 'tmp', 'worktrees', 'trash'] as const;

/**
 * Why a path of the registry may not be trusted, or null: a symlink (never followed), not a
 * directory/file as `kind` says, owned by another uid, or writable by group or world. One lstat.
 */
export function unsafeReason(path: string, kind: 'dir' | 'file', uid: number, kindMatters = true): string | null {
  let st: ReturnType<typeof lstatSync>;
  try {
    st = lstatSync(path);
  } catch {
    return null; // missing: nothing to trust
  }
  if (st.isSymbolicLink()) return `${path} is a symbolic link`;
  if (st.uid !== uid) return `${path} belongs to uid ${st.uid}, not ${uid}`;
  if (st.mode & OTHERS_WRITE) return `${path} may be written by other users (mode ${(st.mode & 0o777).toString(8)})`;
  if (kindMatters && (kind === 'dir' ? !st.isDirectory() : !st.isFile())) return `${path} is not a ${kind === 'dir' ? 'directory' : 'regular file'}`;
  return null;
}

/**
 * Before a start or a resume writes into the registry: creates it (0700, with its marker) when it
 * does not exist; makes private only a registry the suite created; and refuses (E_REGISTRY_UNSAFE)
 * one whose guarded parts another user owns or may write, or that are symlinks — nothing is written
 * then. An existing registry named explicitly and not yet marked is adopted (its marker written) by
 * the returned function, which the command calls once its run is published: a start refused by a
 * later check changes nothing.
 */
export function prepareRegistry(registry: string, found: Found): (() => void) | null {
  const uid = me();
  let created = false;
  try {
    created = mkdirSync(registry, { recursive: true, mode: PRIVATE_DIR }) !== undefined;
  } catch (err) {
    if (!isErrno(err, 'EEXIST')) throw unwritable(registry, err);
  }
  if (uid === undefined) return null;
  let adoption: (() => void) | null = null;
  let st: BigIntStats;
  try {
    st = statSync(registry, { bigint: true });
  } catch (err) {
    throw unwritable(registry, err);
  }
  const problems: string[] = [];
  if (Number(st.uid) === uid && !created) {
    const m = markerMatches(registry, st, uid);
    // Private again only what the suite itself made (loosened since by hand): never a directory it did not create.
    if (m?.created && Number(st.mode) & 0o077) {
      try {
        chmodSync(registry, PRIVATE_DIR);
      } catch {
        /* reported below when others may write */
      }
      st = statSync(registry, { bigint: true });
    }
    if (Number(st.mode) & OTHERS_WRITE) problems.push(`${registry} may be written by other users (mode ${(Number(st.mode) & 0o777).toString(8)})`);
    if (!m && (found === 'flag' || found === 'env') && problems.length === 0) {
      const named = st;
      adoption = () => adopt(registry, named, uid);
    }
  } else if (created) {
    adopt(registry, st, uid, true);
  }
  for (const part of GUARDED) {
    // A file of the user's own where a folder should be is nobody else's doing: not unsafe, and the write
    // that needs the folder fails as E_REGISTRY_UNWRITABLE, as it always has.
    const why = unsafeReason(join(registry, part), 'dir', uid, false);
    if (why) problems.push(why);
  }
  if (problems.length) {
    throw new SubagentError('E_REGISTRY_UNSAFE', `the registry ${registry} is not safe to write into: ${problems.join('; ')}`, {
      path: registry,
      problems,
      hint: 'another user could have planted files there: inspect and remove them (or chmod go-w), or use another registry (--registry, SUBAGENT_DIR)',
    });
  }
  return adoption;
}

function adopt(registry: string, st: BigIntStats, uid: number, created = false): void {
  try {
    writeMarker(registry, st, uid, created);
  } catch (err) {
    throw unwritable(registry, err);
  }
}
