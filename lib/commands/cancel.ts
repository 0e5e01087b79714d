import { loadAdapter } from '../agents/index.js';
import { SubagentError } from '../base/errors.js';
import { isTerminal, observeRun, type Observation } from '../runs/observe.js';
import { backend } from '../proc/backend.js';
import { isAlive, liveness, type ProcessIdentity } from '../proc/identity.js';
import { signalIdentity } from '../proc/signal.js';
import { firstSignalToWholeTree, stopRun } from '../proc/stop.js';
import { snapshotRun, stillAlive } from '../proc/tree.js';
import { leaveQueue } from '../registry/queue.js';
import { validateName } from '../registry/names.js';
import { listNames, updateRecord } from '../registry/store.js';
import type { Outcome, RunRecord, Status } from '../registry/record.js';
import { cancelJob } from './cancel-job.js';
import { recordCancelledEnd } from './cancel-end.js';
import { monotonicMs, nowIso, sleep } from '../base/time.js';
import { requireLatest } from '../runs/observe.js';
import { inRegistryOf, placeOf, type Context } from './context.js';
import { cancelGraceMs } from './settings.js';

export interface CancelOptions extends Context {
  name: string | undefined;
  /** TERM, INT or KILL (a SIG prefix is allowed); default the CLI's graceful signal. */
  signal?: string | undefined;
  /** Also cancel every run started from this one (by parent), at any depth. */
  recursive?: boolean | undefined;
}

/** What cancel resolves to (docs/schemas/cancel.schema.json). */
export interface CancelResult {
  ok: true;
  registry: string;
  name: string;
  run: number;
  /** The supervisor's pid. */
  pid: number | null;
  agentPid: number | null;
  /** TERM, INT or KILL; null when nothing was signalled (a recursive cancel of a run that had ended). */
  signalSent: string | null;
  previousStatus: Status;
  status: Status;
  outcome: Outcome | null;
  processesSignalled: number;
  /** Processes of the run still alive after the escalation (none, normally). */
  survivors: Array<{ pid: number; comm: string }>;
  /** False when the registry could not be written: the processes were signalled, the cancel is not recorded. */
  recorded?: boolean;
  warning?: string;
  /** A run placed on a job engine: its job, and what cancel did to it (docs/scaling.md). */
  job?: { id: string | null; stateBefore: string | null; state: string | null; signalled: boolean; cancelled: boolean };
  /** With `recursive`: what happened to each descendant. */
  descendants?: DescendantCancel[];
}

/** A descendant of a recursive cancel: cancelled, already ended, or an error of its own. */
export type DescendantCancel =
  | { name: string; previousStatus: Status; status: Status; outcome: Outcome | null; survivors: CancelResult['survivors']; cancelled: boolean }
  | { name: string; code: string; error: string };

const SIGNALS: Record<string, NodeJS.Signals> = { TERM: 'SIGTERM', KILL: 'SIGKILL', INT: 'SIGINT' };

export function parseSignal(value: string | undefined): NodeJS.Signals | null {
  if (value === undefined) return null;
  const key = value.toUpperCase().replace(/^SIG/, '');
  const sig = SIGNALS[key];
  if (!sig) {
    throw new SubagentError('E_SIGNAL_UNSUPPORTED', `--signal ${value} is not supported`, { signal: value, hint: 'use --signal TERM, INT or KILL' });
  }
  return sig;
}

/**
 * subagent-cancel (docs/guarantees.md, 8): record the intent, snapshot the run's whole process tree, send the
 * signal (the CLI's graceful one by default), wait a grace period, SIGTERM and then SIGKILL whatever
 * of the run remains, and make sure the end is recorded as `cancelled`.
 */
export async function cancel(o: CancelOptions): Promise<CancelResult> {
  const name = validateName(o.name);
  const signal = parseSignal(o.signal);
  const { registry, env } = placeOf(o);
  const s: CancelSettings = { registry, signal, graceMs: cancelGraceMs(env) };
  return inRegistryOf(registry, () => (o.recursive ? cancelTree(s, name) : cancelOne(s, name)));
}

/** A cancel's options, resolved at its entrance. */
interface CancelSettings {
  registry: string;
  /** As asked; null: the CLI's graceful signal. */
  signal: NodeJS.Signals | null;
  graceMs: number;
}

async function cancelTree(s: CancelSettings, root: string): Promise<CancelResult> {
  const { registry } = s;
  requireLatest(registry, root);
  // The parent first (so it starts nothing new), then its descendants, level by level.
  let top: CancelResult | null = null;
  try {
    top = await cancelOne(s, root);
  } catch (err) {
    if (!(err instanceof SubagentError && err.code === 'E_NOT_RUNNING')) throw err;
  }
  const descendants: DescendantCancel[] = [];
  for (const name of descendantsOf(registry, root)) {
    try {
      const r = await cancelOne(s, name);
      descendants.push({ name, previousStatus: r.previousStatus, status: r.status, outcome: r.outcome, survivors: r.survivors, cancelled: true });
    } catch (err) {
      if (err instanceof SubagentError && err.code === 'E_NOT_RUNNING')
        descendants.push({
          name,
          previousStatus: err.details.status as Status,
          status: err.details.status as Status,
          outcome: err.details.outcome as Outcome | null,
          survivors: [],
          cancelled: false,
        });
      else if (err instanceof SubagentError) descendants.push({ name, code: err.code, error: err.message });
      else throw err;
    }
  }
  if (!top && !descendants.some((d) => 'cancelled' in d && d.cancelled)) {
    throw notRunning(root, requireLatest(registry, root));
  }
  const ob = requireLatest(registry, root);
  return {
    ...(top ?? {
      ok: true,
      registry,
      name: root,
      run: ob.record.run,
      pid: ob.supervisor?.pid ?? null,
      agentPid: ob.record.agentProcess?.pid ?? null,
      signalSent: null,
      previousStatus: ob.status,
      status: ob.status,
      outcome: ob.record.outcome,
      processesSignalled: 0,
      survivors: [],
    }),
    descendants,
  };
}

/** Names whose parent chain leads to `root`, breadth first. */
function descendantsOf(registry: string, root: string): string[] {
  const parentOf = new Map<string, string | null>();
  for (const n of listNames(registry)) {
    try {
      parentOf.set(n, requireLatest(registry, n).record.parent);
    } catch {
      /* unreadable: reported by status, skipped here */
    }
  }
  const out: string[] = [];
  let level = [root];
  while (level.length) {
    const next = [...parentOf].filter(([n, p]) => p !== null && level.includes(p) && n !== root && !out.includes(n)).map(([n]) => n);
    out.push(...next);
    level = next;
  }
  return out;
}

/** Cancels the latest run of one name: its leftovers when it is done, else the run, here or on its job engine. */
async function cancelOne(s: CancelSettings, nameArg: string): Promise<CancelResult> {
  const ob = requireLatest(s.registry, nameArg);
  const name = ob.record.name;
  if (ob.status === 'done' && ob.record.status === 'done' && stillAlive(ob.record.leftovers).length) return cancelLeftovers(s, ob);
  if (ob.status === 'done' || (ob.status === 'unknown' && !ob.agentAlive)) throw notRunning(name, ob);
  // A job-placed run's processes are on a node: the engine signals them, not this host.
  if (ob.record.executor.name === 'local') refuseUncheckable(name, [ob.supervisor, ob.record.agentProcess]);
  const adapter = await loadAdapter(ob.record.cli);
  const signal = s.signal ?? adapter.gracefulSignal;
  const intent = recordIntent(ob, signal);
  if (intent.marked.status === 'done') throw notRunning(name, observeRun(ob.dir));
  if (intent.marked.executor.name !== 'local') return cancelPlaced(s, ob, intent, signal);
  return cancelLocal(s, ob, intent, signal, adapter.gracefulSignal, adapter.drive !== undefined);
}

/** The cancel's intent in the run's record, as far as it got there. */
interface Intent {
  /** The record with the intent; as it was read, when the registry could not be written. */
  marked: RunRecord;
  /** Why the intent could not be recorded; null when it is there. */
  unrecorded: string | null;
  /** What this cancel says when another one had recorded the intent first; null when this one did. */
  earlier: string | null;
}

/**
 * Records the intent first; but a registry that cannot be written (a runaway agent filled the disk) must
 * not keep us from stopping the run: then we stop it and say the cancel is not recorded.
 */
function recordIntent(ob: Observation, signal: NodeJS.Signals): Intent {
  let marked = ob.record;
  let unrecorded: string | null = null;
  // Of concurrent cancels only the one that writes the intent says `recorded:true`; the others find it there.
  let wrote = false;
  try {
    // A caller's cancel also replaces the supervisor's stop at a spend cap (`cancel.reason`): the run then
    // ends cancelled, as this verb promises.
    marked = updateRecord(ob.dir, (r) => {
      if (r.status === 'done' || (r.cancel && !r.cancel.reason)) return null;
      wrote = true;
      return { ...r, cancel: { requestedAt: nowIso(), signal, by: process.pid } };
    });
  } catch (err) {
    if (!(err instanceof SubagentError && err.code === 'E_REGISTRY_UNWRITABLE')) throw err;
    unrecorded = err.message;
  }
  const earlier =
    !wrote && unrecorded === null && marked.cancel
      ? `another cancel (pid ${marked.cancel.by}) had already recorded the cancel, at ${marked.cancel.requestedAt}; this one signalled what was left of the run`
      : null;
  return { marked, unrecorded, earlier };
}

/** How long a cancel gives a driven agent to stop on its protocol's word (ACP's session/cancel, sent by its supervisor) before it signals. */
const DRIVEN_CANCEL_WAIT_MS = 2500;

/**
 * Cancel of a run on this host: the supervisor of a run with no agent yet is told (SIGTERM), and so is
 * that of a driven agent (`AgentAdapter.drive`: it asks the agent to stop in its protocol, then signals
 * it); the run's processes are stopped (the signal, the grace, TERM, KILL), and the end is seen recorded.
 */
async function cancelLocal(
  s: CancelSettings,
  ob: Observation,
  intent: Intent,
  signal: NodeJS.Signals,
  graceful: NodeJS.Signals,
  driven: boolean,
): Promise<CancelResult> {
  const { marked, earlier } = intent;
  let { unrecorded } = intent;
  const roots: ProcessIdentity[] = marked.agentProcess ? [marked.agentProcess] : [];
  const supervisor = marked.supervisor ?? ob.supervisor;
  const exclude = new Set<number>(supervisor ? [supervisor.pid] : []);
  const snapshot = () => snapshotRun(roots, `SUBAGENT_RUN_ID=${marked.runId}`, exclude);
  let seen = snapshot();
  let signalled = 0;

  if (!marked.agentProcess && supervisor && isAlive(supervisor)) {
    // Scheduled: no agent yet. The supervisor records the cancel and leaves without starting one.
    signalIdentity(supervisor, 'SIGTERM');
  } else if (driven && marked.agentProcess && supervisor && isAlive(supervisor)) {
    signalIdentity(supervisor, 'SIGTERM');
    const until = monotonicMs() + DRIVEN_CANCEL_WAIT_MS;
    while (isAlive(marked.agentProcess) && monotonicMs() < until) await sleep(50);
    seen = snapshot();
  }
  if (seen.length) {
    const wholeTree = firstSignalToWholeTree(signal, graceful);
    ({ signalled, seen } = await stopRun(seen, snapshot, { signal, wholeTree, agent: marked.agentProcess, graceMs: s.graceMs }));
  }
  const survivors = stillAlive(snapshot());
  let final: { outcome: Outcome | null } = { outcome: null };
  try {
    final = await settle(ob.dir, supervisor, signal);
  } catch (err) {
    if (!(err instanceof SubagentError && err.code === 'E_REGISTRY_UNWRITABLE')) throw err;
    unrecorded ??= err.message;
  }
  const view = observeRun(ob.dir);
  // A dead supervisor cannot give back its queue slot; once its run is done, wake the waiting ones now
  // rather than at their next backstop check.
  if (view.status === 'done' && !(supervisor && isAlive(supervisor))) leaveQueue(s.registry, marked.queueTicket, marked.runId);
  return {
    ok: true,
    registry: s.registry,
    name: ob.record.name,
    run: marked.run,
    pid: supervisor?.pid ?? null,
    agentPid: marked.agentProcess?.pid ?? null,
    signalSent: signal.replace(/^SIG/, ''),
    previousStatus: ob.status,
    status: view.status,
    outcome: final.outcome,
    processesSignalled: Math.max(signalled, seen.length),
    survivors: survivors.map((s) => ({ pid: s.pid, comm: s.comm })),
    recorded: unrecorded === null && earlier === null,
    ...(unrecorded ? { warning: `the processes were signalled, but the cancel could not be recorded: ${unrecorded}` } : earlier ? { warning: earlier } : {}),
  };
}

/**
 * Cancel of a done run whose recorded leftovers still live (kept with --keep-children, or not stopped by
 * KILL; docs/contract.md): they are stopped as a run's processes are — the signal (TERM unless asked),
 * the grace, TERM, KILL — each only while it is still the process recorded (pid + start time). The run's
 * record, done, does not change.
 */
async function cancelLeftovers(s: CancelSettings, ob: Observation): Promise<CancelResult> {
  const r = ob.record;
  const signal = s.signal ?? 'SIGTERM';
  const recorded = r.status === 'done' ? r.leftovers : [];
  const snapshot = () => stillAlive(recorded);
  const { signalled, seen } = await stopRun(snapshot(), snapshot, { signal, wholeTree: true, agent: null, graceMs: s.graceMs });
  return {
    ok: true,
    registry: s.registry,
    name: r.name,
    run: r.run,
    pid: r.supervisor?.pid ?? null,
    agentPid: r.agentProcess?.pid ?? null,
    signalSent: signal.replace(/^SIG/, ''),
    previousStatus: 'done',
    status: 'done',
    outcome: r.outcome,
    processesSignalled: Math.max(signalled, seen.length),
    survivors: stillAlive(recorded).map((p) => ({ pid: p.pid, comm: p.comm })),
  };
}

/** Cancel of a run placed on a job engine: through the engine, checked by the job's state (cancel-job.ts). */
async function cancelPlaced(s: CancelSettings, ob: Observation, intent: Intent, signal: string): Promise<CancelResult> {
  const { marked, unrecorded, earlier } = intent;
  const job = await cancelJob(ob.dir, marked, signal, s.graceMs);
  const view = observeRun(ob.dir);
  const warning = [unrecorded && `the cancel could not be recorded: ${unrecorded}`, earlier, job.warning].filter(Boolean).join('; ');
  return {
    ok: true,
    registry: s.registry,
    name: marked.name,
    run: marked.run,
    pid: view.record.supervisor?.pid ?? null,
    agentPid: view.record.agentProcess?.pid ?? null,
    signalSent: signal.replace(/^SIG/, ''),
    previousStatus: ob.status,
    status: view.status,
    outcome: view.status === 'done' ? view.record.outcome : null,
    processesSignalled: job.signalled || job.jobCancelled ? 1 : 0,
    survivors: [],
    recorded: unrecorded === null && earlier === null,
    job: { id: view.record.executor.jobId, stateBefore: job.before, state: job.after, signalled: job.signalled, cancelled: job.jobCancelled },
    ...(warning ? { warning } : {}),
  };
}

/**
 * Gives the supervisor a moment to record the end (it sees the agent exit and the cancel intent). A
 * supervisor that is dead cannot: then the cancel records the end itself, with the exit unknown.
 */
async function settle(dir: string, supervisor: ProcessIdentity | null, signal: string) {
  const end = monotonicMs() + 5000;
  for (;;) {
    const ob = observeRun(dir);
    if (ob.status === 'done') return ob.record;
    const supervisorAlive = supervisor !== null && isAlive(supervisor);
    if (!supervisorAlive || monotonicMs() > end) {
      return recordCancelledEnd(
        dir,
        signal,
        supervisorAlive
          ? 'the supervisor did not record the end in time; recorded by cancel'
          : 'the supervisor was gone; the end was recorded by cancel, the exit status is unknown',
      );
    }
    await sleep(20);
  }
}

/**
 * A process whose identity this backend cannot check (recorded by the other backend) gets no signal,
 * and nothing else of its run does either: the cancel is refused before anything is recorded.
 */
function refuseUncheckable(name: string, ids: Array<ProcessIdentity | null>): void {
  const id = ids.find((i) => i && liveness(i) === 'unchecked');
  if (!id) return;
  const b = backend().name;
  throw new SubagentError(
    'E_IDENTITY_UNCHECKABLE',
    `the ${b} process backend cannot check that pid ${id.pid} is still the process "${name}" recorded (start time "${id.startTime}" is in another backend's form); nothing was signalled`,
    {
      name,
      pid: id.pid,
      startTime: id.startTime,
      backend: b,
      hint:
        b === 'ps'
          ? 'cancel it with the backend that started it: unset SUBAGENT_PROC_BACKEND (or set it to linux)'
          : 'cancel it with the backend that started it: SUBAGENT_PROC_BACKEND=ps',
    },
  );
}

function notRunning(name: string, ob: Observation): SubagentError {
  return new SubagentError('E_NOT_RUNNING', `"${name}" is not running (status ${ob.status}${ob.record.outcome ? `, ${ob.record.outcome}` : ''})`, {
    name,
    status: ob.status,
    outcome: ob.record.outcome,
    hint: isTerminal(ob.status) ? 'nothing to cancel; resume-subagent starts a new run' : 'retry',
  });
}
