import { isAlive, type ProcessIdentity } from './proc/identity.js';
import { snapshotRun } from './proc/tree.js';
import { latestRun, latestRunDirOfListed, readLauncher, readRecord, runDir } from './registry/store.js';
import type { RunRecord, Status } from './registry/record.js';

/** A run as it really is: its record plus what /proc says about the processes it names. */
export interface Observation {
  record: RunRecord;
  status: Status;
  /** Why the status is what it is, when the record alone would say something else. */
  statusReason: string | null;
  /** For a run that is not done: is its agent process still alive (cancellable)? */
  agentAlive: boolean;
  dir: string;
  /** The run's supervisor: from the record, else as its launcher recorded it, else null. */
  supervisor: ProcessIdentity | null;
  /** An agent the record does not name, found by the run's marker (its supervisor died first). */
  foundAgentPid?: number;
}

/** Who vouches for a run that is not done: its supervisor, or before that is known the start command. */
function watcher(dir: string, r: RunRecord): { supervisor: ProcessIdentity | null; alive: boolean } {
  const supervisor = r.supervisor ?? readLauncher(dir);
  if (supervisor) return { supervisor, alive: isAlive(supervisor) };
  return { supervisor: null, alive: isAlive(r.starter) };
}

/**
 * Guarantee 3 and 4: liveness by identity; `unknown` when the supervisor is dead without a `done`
 * record. The record is read again after the liveness check, so a run that ended cleanly between the
 * two reads is reported `done`, never `unknown`.
 */
export function observeRun(dir: string): Observation {
  const first = readRecord(dir);
  if (first.status === 'done') return { record: first, status: 'done', statusReason: null, agentAlive: false, dir, supervisor: first.supervisor };
  const w1 = watcher(dir, first);
  if (w1.alive) return { record: first, status: first.status, statusReason: null, agentAlive: isAlive(first.agentProcess), dir, supervisor: w1.supervisor };
  const again = readRecord(dir);
  if (again.status === 'done') return { record: again, status: 'done', statusReason: null, agentAlive: false, dir, supervisor: again.supervisor };
  const w2 = watcher(dir, again);
  if (w2.alive) return { record: again, status: again.status, statusReason: null, agentAlive: isAlive(again.agentProcess), dir, supervisor: w2.supervisor };
  // A supervisor that died between spawning the agent and recording it leaves an agent only its
  // marker (SUBAGENT_RUN_ID in its environment) can find.
  let agentAlive = again.agentProcess ? isAlive(again.agentProcess) : false;
  let foundAgentPid: number | null = null;
  if (!again.agentProcess) {
    const marked = snapshotRun([], `SUBAGENT_RUN_ID=${again.runId}`);
    const pids = new Set(marked.map((p) => p.pid));
    foundAgentPid = marked.find((p) => !pids.has(p.ppid))?.pid ?? null;
    agentAlive = marked.length > 0;
  }
  const reason = w2.supervisor
    ? `the supervisor (pid ${w2.supervisor.pid}) died without recording how the run ended`
    : 'the run was never picked up by a supervisor (the start command died before launching it)';
  const agentPid = again.agentProcess?.pid ?? foundAgentPid;
  const alive = agentPid !== null ? `its agent (pid ${agentPid}) is still alive` : 'processes of the run are still alive';
  return { record: again, status: 'unknown', statusReason: agentAlive ? `${reason}; ${alive}` : reason, agentAlive, dir, supervisor: w2.supervisor, ...(foundAgentPid !== null ? { foundAgentPid } : {}) };
}

export function observeLatest(registry: string, name: string): Observation | null {
  const run = latestRun(registry, name);
  if (run === null) return null;
  return observeRun(runDir(registry, name, run));
}

export function isTerminal(status: Status): boolean {
  return status === 'done' || status === 'unknown';
}

/** observeLatest for a name taken from the registry's own listing (one syscall fewer per name). */
export function observeListed(registry: string, name: string): Observation | null {
  const dir = latestRunDirOfListed(registry, name);
  return dir === null ? null : observeRun(dir);
}
