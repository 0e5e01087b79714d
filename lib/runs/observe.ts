import { existsSync } from 'node:fs';
import { checkpoint } from '../base/checkpoint.js';
import { backend } from '../proc/backend.js';
import { liveness, type Liveness, type ProcessIdentity } from '../proc/identity.js';
import { snapshotRun } from '../proc/tree.js';
import { latestRun, readLatestOfListed, readLauncher, readRecord, runDir } from '../registry/store.js';
import type { RunRecord, Status, Usage } from '../registry/record.js';
import { JobViews, jobVerdict } from './placed.js';
import type { DoneCache, Stamp } from '../registry/done-cache.js';
import type { RunProbe } from '../registry/queue.js';
import { nameNotFound, validateName } from '../registry/names.js';
import { usageOfName } from './usage.js';

/** A run as it really is: its record plus what the process backend says about the processes it names. */
export interface Observation {
  record: RunRecord;
  status: Status;
  /** Why the status is what it is, when the record alone would say something else. */
  statusReason: string | null;
  /** For a run that is not done: is its agent process still alive (cancellable)? Also true when it may be: the backend cannot check it. */
  agentAlive: boolean;
  dir: string;
  /** The run's supervisor: from the record, else as its launcher recorded it, else null. */
  supervisor: ProcessIdentity | null;
  /** An agent the record does not name, found by the run's marker (its supervisor died first). */
  foundAgentPid?: number;
}

/** Who vouches for a run that is not done: its supervisor, or before that is known the start command. */
function watcher(dir: string, r: RunRecord): { supervisor: ProcessIdentity | null; state: Liveness; pid: number | null } {
  const supervisor = r.supervisor ?? readLauncher(dir);
  if (supervisor) return { supervisor, state: liveness(supervisor), pid: supervisor.pid };
  return { supervisor: null, state: liveness(r.starter), pid: r.starter?.pid ?? null };
}

/**
 * A run whose watcher lives — or may live: one whose identity this process backend cannot check (it was
 * recorded by the other backend) is reported as recorded, with the reason, never guessed dead.
 */
function watched(dir: string, record: RunRecord, w: ReturnType<typeof watcher>): Observation {
  const statusReason = w.state === 'unchecked' ? `${uncheckable(w.pid)}; the run may still be ${record.status}` : parkedReason(record);
  return { record, status: record.status, statusReason, agentAlive: liveness(record.agentProcess) !== 'dead', dir, supervisor: w.supervisor };
}

/** Why a parked run (--on-limit wait) is `running` without an agent: its `statusReason`. */
export function parkedReason(r: RunRecord): string | null {
  if (r.parkedUntil === null || r.status === 'done') return null;
  const p = r.onLimit;
  return `parked: rate limit, resumes at ${r.parkedUntil}${p ? ` (attempt ${p.retry} of ${p.retries})` : ''}`;
}

function uncheckable(pid: number | null): string {
  return `the ${backend().name} process backend cannot check the identity recorded for pid ${pid} (its start time is in the other backend's form)`;
}

/**
 * docs/guarantees.md, 3 and 4: liveness by identity; `unknown` when the supervisor is dead without a `done`
 * record. The record is read again after the liveness check, so a run that ended cleanly between the
 * two reads is reported `done`, never `unknown`. Pure: observing never starts a process (an `unknown`
 * run's end hooks are fired by `subagent-status --announce` only, lib/commands/announce.ts).
 */
export function observeRun(dir: string, jobs?: JobViews): Observation {
  const first = readRecord(dir);
  if (first.status === 'done') return doneObservation(dir, first);
  if (first.executor && first.executor.name !== 'local') return observeJob(dir, first, jobs ?? new JobViews(false));
  checkpoint('observe-before-liveness');
  const w1 = watcher(dir, first);
  if (w1.state !== 'dead') return watched(dir, first, w1);
  const again = readRecord(dir);
  if (again.status === 'done') return doneObservation(dir, again);
  const w2 = watcher(dir, again);
  if (w2.state !== 'dead') return watched(dir, again, w2);
  // A supervisor that died between spawning the agent and recording it leaves an agent only its
  // marker (SUBAGENT_RUN_ID in its environment) can find — where the backend reads environments.
  const agentState = liveness(again.agentProcess);
  let agentAlive = agentState !== 'dead';
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
  const alive =
    agentState === 'unchecked'
      ? `its agent may still be alive: ${uncheckable(agentPid)}`
      : agentPid !== null
        ? `its agent (pid ${agentPid}) is still alive`
        : 'processes of the run are still alive';
  return {
    record: again,
    status: 'unknown',
    statusReason: agentAlive ? `${reason}; ${alive}` : reason,
    agentAlive,
    dir,
    supervisor: w2.supervisor,
    ...(foundAgentPid !== null ? { foundAgentPid } : {}),
  };
}

/** A run placed on a job engine: liveness from the engine, one question per listing (lib/runs/placed.ts). */
function observeJob(dir: string, first: RunRecord, jobs: JobViews): Observation {
  const v = jobVerdict(first, first.executor, jobs, dir);
  if (v.ended) {
    const again = readRecord(dir);
    if (again.status === 'done') return doneObservation(dir, again);
  }
  return { record: first, status: v.status, statusReason: v.statusReason, agentAlive: v.alive, dir, supervisor: first.supervisor };
}

/** A done record is the whole truth about its run: no process is asked. */
export function doneObservation(dir: string, record: RunRecord): Observation {
  return { record, status: 'done', statusReason: null, agentAlive: false, dir, supervisor: record.supervisor };
}

export function observeLatest(registry: string, name: string, jobs?: JobViews): Observation | null {
  const run = latestRun(registry, name);
  if (run === null) return null;
  return observeChosen(runDir(registry, name, run), jobs);
}

/**
 * Observes the run at `dir`, chosen as its name's latest a moment ago. A run that ends on a limit it
 * waits out publishes its next attempt before it is recorded done (lib/supervisor/park.ts), and so does a
 * run whose queued follow-up is next (lib/supervisor/follow-up.ts: `followedUp`): so when the record read
 * says it ended so, the next run may have appeared since the choice, and then that one is the name's
 * latest — never the ended run, which would show the name terminal while it goes on.
 */
function observeChosen(dir: string, jobs?: JobViews): Observation {
  checkpoint('observe-latest-chosen');
  for (;;) {
    const observation = observeRun(dir, jobs);
    if (!mayHaveNext(observation.record)) return observation;
    const next = nextRunDir(dir, observation.record.run);
    if (!existsSync(next)) return observation;
    dir = next;
  }
}

/** A done run whose next run may have been published before its end was recorded: a parked attempt, a follow-up. */
function mayHaveNext(r: RunRecord): boolean {
  return r.status === 'done' && ((r.reason === 'rate-limit' && r.onLimit?.action === 'wait') || r.followedUp);
}

function nextRunDir(dir: string, run: number): string {
  return `${dir.slice(0, dir.lastIndexOf('/'))}/${run + 1}`;
}

export function isTerminal(status: Status): boolean {
  return status === 'done' || status === 'unknown';
}

/** A listed run, its name's usage over all its runs, and its records' stamp when the cache may keep it. */
export interface Listed {
  observation: Observation;
  usageTotal: Usage | null;
  stamp: Stamp | null;
}

/**
 * observeLatest for a name taken from the registry's own listing (one syscall fewer per name). With the
 * listing's cache (which did not hold the run), a done run's record is stamped, so that the cache can
 * keep it once it has settled.
 */
export function observeListed(registry: string, name: string, cache?: DoneCache, jobs?: JobViews): Listed | null {
  const latest = readLatestOfListed(registry, name, (dir) => observeChosen(dir, jobs));
  if (latest === null) return null;
  const observation = latest.value;
  const dir = observation.dir;
  // Taken after the read: a record changed since is younger, so not kept — the safe side.
  const slash = dir.lastIndexOf('/');
  const stamp = observation.status === 'done' ? (cache?.stamp(dir.slice(0, slash), Number(dir.slice(slash + 1))) ?? null) : null;
  return { observation, usageTotal: usageOfName(registry, observation.record), stamp };
}

/** What the concurrency queue asks of a run (lib/registry/queue.ts), answered by observing it. */
export const runProbe: RunProbe = {
  scheduled: (dir) => observeRun(dir).status === 'scheduled',
  agentAlive: (dir) => observeRun(dir).agentAlive,
};

/** The latest run of a name, observed; E_NAME_NOT_FOUND when the name does not exist. */
export function requireLatest(registry: string, name: string): Observation {
  validateName(name);
  const o = observeLatest(registry, name);
  if (!o) throw nameNotFound(name, registry);
  return o;
}
