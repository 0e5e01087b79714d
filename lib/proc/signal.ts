import { isErrno } from '../errors.js';
import { readStat, sameProcess, type ProcessIdentity } from './identity.js';
import type { Seen } from './tree.js';

/** Sends a signal only to the process we recorded: never to a pid whose identity does not match. */
export function signalIdentity(id: ProcessIdentity, signal: NodeJS.Signals): boolean {
  if (!sameProcess(id, readStat(id.pid))) return false;
  try {
    process.kill(id.pid, signal);
    return true;
  } catch (err) {
    if (isErrno(err, 'ESRCH')) return false;
    throw err;
  }
}

/**
 * Signals each process of a snapshot that is still itself, and each of their process groups — a group
 * only while a verified member of it is alive, so a recycled group id is never hit.
 */
export function signalAll(seen: Seen[], signal: NodeJS.Signals, groups: boolean): number {
  let sent = 0;
  const verified = seen.filter((s) => sameProcess(s, readStat(s.pid)));
  if (groups) {
    const pgids = new Set(verified.map((s) => s.pgid).filter((g) => g > 1));
    for (const pgid of pgids) {
      try {
        process.kill(-pgid, signal);
      } catch (err) {
        if (!isErrno(err, 'ESRCH', 'EPERM')) throw err;
      }
    }
  }
  for (const s of verified) if (signalIdentity(s, signal)) sent++;
  return sent;
}
