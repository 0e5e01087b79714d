import { isErrno } from '../base/errors.js';
import { liveness, lookAgain, type ProcessIdentity } from './identity.js';
import type { Seen } from './tree.js';
import { backend } from './backend.js';

/** Sends a signal only to the process we recorded, checked by a look taken for this send. */
export function signalIdentity(id: ProcessIdentity, signal: NodeJS.Signals): boolean {
  lookAgain();
  return sendIfSame(id, signal);
}

/** Never to a pid whose identity does not match, nor to one the backend cannot check (`unchecked`). */
function sendIfSame(id: ProcessIdentity, signal: NodeJS.Signals): boolean {
  if (liveness(id) !== 'alive') return false;
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
 * only while a verified member of it is alive, so a recycled group id is never hit. One look for the
 * whole batch (the ps backend runs ps once, not once per process).
 */
export function signalAll(seen: Seen[], signal: NodeJS.Signals, groups: boolean): number {
  let sent = 0;
  lookAgain();
  const verified = seen.filter((s) => liveness(s) === 'alive');
  if (!groups) {
    for (const s of verified) if (sendIfSame(s, signal)) sent++;
    return sent;
  }
  const pgids = new Set(verified.map((s) => s.pgid).filter((g) => g > 1));
  for (const pgid of pgids) {
    try {
      process.kill(-pgid, signal);
    } catch (err) {
      if (!isErrno(err, 'ESRCH', 'EPERM')) throw err;
    }
  }
  // A process its group's signal reached is not signalled again: a second TERM can cut short the
  // shutdown the first began (a shell runs its trap twice, a CLI may take it as "quit now"). Only one
  // found in another group now (it moved since the look) is signalled on its own.
  const groupNow = new Map(
    backend()
      .processes()
      .map((p) => [p.pid, p]),
  );
  for (const s of verified) {
    const now = groupNow.get(s.pid);
    if (now && pgids.has(now.pgid)) sent++;
    else if (sendIfSame(s, signal)) sent++;
  }
  return sent;
}
