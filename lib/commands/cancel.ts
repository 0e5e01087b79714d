import { loadAdapter } from '../agents/index.js';
import { SubagentError } from '../errors.js';
import { isTerminal, observeRun, type Observation } from '../observe.js';
import { isAlive, type ProcessIdentity } from '../proc/identity.js';
import { signalAll, signalIdentity } from '../proc/signal.js';
import { snapshotRun, stillAlive, type Seen } from '../proc/tree.js';
import { validateName } from '../registry/names.js';
import { updateRecord } from '../registry/store.js';
import { monotonicMs, nowIso, sleep } from '../time.js';
import { envValue, requireLatest, resolveRegistry, type Context } from './common.js';

export interface CancelOptions extends Context {
  name: string | undefined;
  signal?: string | undefined;
}

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

function graceMs(env: NodeJS.ProcessEnv): number {
  const v = Number(envValue(env, 'SUBAGENT_CANCEL_GRACE_MS') ?? 3000);
  return Number.isFinite(v) && v >= 0 ? v : 3000;
}

/** Waits until none of `seen` is alive, or the time is up; returns what still lives. */
async function waitGone(seen: Seen[], ms: number): Promise<Seen[]> {
  const end = monotonicMs() + ms;
  let alive = stillAlive(seen);
  while (alive.length && monotonicMs() < end) {
    await sleep(20);
    alive = stillAlive(alive);
  }
  return alive;
}

/**
 * subagent-cancel (guarantee 8): record the intent, snapshot the run's whole process tree, send the
 * signal (the CLI's graceful one by default), wait a grace period, SIGTERM and then SIGKILL whatever
 * of the run remains, and make sure the end is recorded as `cancelled`.
 */
export async function cancel(o: CancelOptions): Promise<Record<string, unknown>> {
  const env = o.env ?? process.env;
  validateName(o.name);
  const asked = parseSignal(o.signal);
  const registry = resolveRegistry(o);
  const ob = requireLatest(registry, o.name!);
  const name = ob.record.name;
  const previousStatus = ob.status;
  if (ob.status === 'done' || (ob.status === 'unknown' && !ob.agentAlive)) throw notRunning(name, ob);
  const adapter = await loadAdapter(ob.record.cli);
  const signal = asked ?? adapter.gracefulSignal;

  const marked = updateRecord(ob.dir, (r) => (r.status === 'done' || r.cancel ? null : { ...r, cancel: { requestedAt: nowIso(), signal, by: process.pid } }));
  if (marked.status === 'done') throw notRunning(name, observeRun(ob.dir));

  const roots: ProcessIdentity[] = marked.agentProcess ? [marked.agentProcess] : [];
  const exclude = new Set<number>(marked.supervisor ? [marked.supervisor.pid] : []);
  const snapshot = () => snapshotRun(roots, `SUBAGENT_RUN_ID=${marked.runId}`, exclude);
  let seen = snapshot();
  let signalled = 0;

  if (!marked.agentProcess && marked.supervisor && isAlive(marked.supervisor)) {
    // Scheduled: no agent yet. The supervisor records the cancel and leaves without starting one.
    signalIdentity(marked.supervisor, 'SIGTERM');
  }
  if (seen.length) {
    if (signal === 'SIGKILL' || adapter.gracefulSignal === 'SIGTERM') signalled += signalAll(seen, signal, true);
    else if (marked.agentProcess) signalled += signalIdentity(marked.agentProcess, signal) ? 1 : 0;
    let left = await waitGone(seen, signal === 'SIGKILL' ? 1000 : graceMs(env));
    if (left.length || snapshot().length) {
      seen = [...left, ...snapshot()];
      if (signal !== 'SIGTERM' && signal !== 'SIGKILL') {
        signalAll(seen, 'SIGTERM', true);
        left = await waitGone(seen, 1000);
        seen = [...left, ...snapshot()];
      }
      signalAll(seen, 'SIGKILL', true);
      left = await waitGone(seen, 2000);
    }
  }
  const survivors = stillAlive(snapshot());
  const final = await settle(ob.dir, marked.supervisor, signal);
  const view = observeRun(ob.dir);
  return {
    ok: true,
    registry,
    name,
    run: marked.run,
    pid: marked.supervisor?.pid ?? null,
    agentPid: marked.agentProcess?.pid ?? null,
    signalSent: signal.replace(/^SIG/, ''),
    previousStatus,
    status: view.status,
    outcome: final.outcome,
    processesSignalled: Math.max(signalled, seen.length),
    survivors: survivors.map((s) => ({ pid: s.pid, comm: s.comm })),
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
      return updateRecord(dir, (r) =>
        r.status === 'done'
          ? null
          : {
              ...r,
              status: 'done',
              outcome: 'cancelled',
              exitCode: null,
              signal: null,
              finishedAt: nowIso(),
              error: `cancelled with ${signal}`,
              endReason: supervisorAlive ? 'the supervisor did not record the end in time; recorded by cancel' : 'the supervisor was gone; the end was recorded by cancel, the exit status is unknown',
            },
      );
    }
    await sleep(20);
  }
}

function notRunning(name: string, ob: Observation): SubagentError {
  return new SubagentError('E_NOT_RUNNING', `"${name}" is not running (status ${ob.status}${ob.record.outcome ? `, ${ob.record.outcome}` : ''})`, {
    name,
    status: ob.status,
    outcome: ob.record.outcome,
    hint: isTerminal(ob.status) ? 'nothing to cancel; resume-subagent starts a new run' : 'retry',
  });
}
