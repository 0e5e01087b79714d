import { closeSync, fstatSync, openSync, readFileSync, readSync } from 'node:fs';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { loadAdapter } from '../agents/index.js';
import type { AgentAdapter, AgentRun, Launch, LaunchInput } from '../agents/types.js';
import { TEST_KNOBS, checkpoint } from '../base/checkpoint.js';
import { LineFollower } from '../base/lines.js';
import { elapsedSinceMs, nowIso, sleep } from '../base/time.js';
import { identityOf, selfIdentity, type ProcessIdentity } from '../proc/identity.js';
import { prepareSpawn, spawnWaited, type Waited } from '../proc/spawn.js';
import { firstSignalToWholeTree, stopRun } from '../proc/stop.js';
import { snapshotRun } from '../proc/tree.js';
import { PRIVATE_FILE } from '../registry/private.js';
import { enqueue, leaveQueue, newTicket, readLimit, readMemoryFloor, waitForSlot } from '../registry/queue.js';
import { cancelledChildren, type CancelRequest, type LeftoverProcess, type MemoryUse, type RunRecord } from '../registry/record.js';
import { FILES, readRecord, updateRecord } from '../registry/store.js';
import { announceEnd } from '../runs/hooks.js';
import { doneObservation, runProbe } from '../runs/observe.js';
import { skippedLines } from '../runs/transcript.js';
import { usageBefore } from '../runs/usage.js';
import { capGuard, type CapGuard, type Crossed } from './caps.js';
import { endOf, limitReset } from './end.js';
import { startDriver, type Driven } from './driven.js';
import { ENGINE_END_EXIT, askedSignal, cancelRequested, engineEndGrace, placedOnEngine } from './engine-end.js';
import type { Log } from './log.js';
import { MemoryWatch } from './memory.js';
import { cancelNext, parkUntil, publishNext, type NextAttempt } from './park.js';
import { waitForDependencies } from './after.js';
import { publishFollowUp, settleEnd } from './follow-up.js';
import { Progress } from './progress.js';
import { untilItLands } from './retry.js';
import { StallWatch, stallEnd } from './stall.js';
import { stopLeftovers } from './leftovers.js';
import { STORE_POLL_MS, storeUsageOf, type StoreUsageRead } from './store-usage.js';

/** Why the run is stopped: a cap the supervisor holds, a stall (--stall-action cancel), or a caller's cancel (SIGTERM). */
export type StopCause = { kind: 'cap'; crossed: Crossed } | { kind: 'stalled' } | { kind: 'cancel' };

/** How a run ended: cancelled before its agent started, its agent could not be started, or it exited. */
type End =
  | { kind: 'cancelled-before-start' }
  | { kind: 'dependency-failed'; error: string }
  | { kind: 'spawn-failed'; error: string }
  | {
      kind: 'exited';
      adapter: AgentAdapter;
      exit: { code: number | null; signal: string | null };
      run: AgentRun;
      skipped: number;
      /** The event log's size as read to its end: where its readers stop. */
      eventBytes: number;
      leftovers: LeftoverProcess[];
    };

/** The agent, once started: its process, its identity (null: it was gone before it could be read), and its driver when it has one. */
interface Agent {
  child: Waited;
  identity: ProcessIdentity | null;
  driven: Driven | null;
}

/** How the agent exited: its exit code, or the signal that ended it. */
type AgentExit = Awaited<Waited['exited']>;

/** A running agent as the supervisor follows it: the record, the adapter, the run it opened and where it reads the event log. */
interface Followed {
  record: RunRecord;
  adapter: AgentAdapter;
  run: AgentRun;
  follower: LineFollower;
  /** The usage from the CLI's own store, read at the end (null: the adapter keeps none there). */
  fromStore: StoreUsageRead | null;
}

/**
 * One run's supervision, from the record it finds `scheduled` to the end it records: the whole state of
 * the supervisor lives here, and the run is stopped in one place (`stop`, for a cap, a stall or a
 * cancel) and ends in one place (`end`). `run()` resolves with the supervisor's exit code once it may
 * leave; main.ts then exits, there and nowhere else.
 *
 * The disk may refuse any write at any moment (ENOSPC, EIO, a read-only remount): what must land — the
 * record `running`, a stop's intent, the end — is tried again until it does (lib/supervisor/retry.ts),
 * the event loop free meanwhile, so the time cap, the spend caps and the stall watch keep working.
 */
export class Supervision {
  private record: RunRecord | null = null;
  private adapter: AgentAdapter | null = null;
  private onEngine = false;
  private agent: Agent | null = null;
  /** Between asking for the agent and having it: a stop then waits for the agent to be there. */
  private spawning = false;
  /** The first stop asked for, in memory: what the end records when the intent could not be written. */
  private stopping: { cause: StopCause; request: CancelRequest } | null = null;
  private ending = false;
  /** The memory of the agent's processes, as last sampled while it ran (lib/supervisor/memory.ts). */
  private memory: MemoryUse | null = null;
  private leave!: (code: number) => void;
  private readonly left = new Promise<number>((resolve) => (this.leave = resolve));

  constructor(
    private readonly registry: string,
    private readonly dir: string,
    private readonly log: Log,
  ) {}

  /** The run's whole supervision; resolves with the exit code once the supervisor may leave. */
  run(): Promise<number> {
    this.supervise().catch((err: unknown) => {
      this.log(`fatal: ${(err as Error).stack ?? String(err)}`);
      this.leave(1);
    });
    return this.left;
  }

  /**
   * SIGTERM means "cancel" (cancel records its intent first, then signals the supervisor of a run that
   * has no agent yet, or the job's one process on a job engine). On a job engine, a SIGTERM without a
   * recorded cancel is the engine ending the job: the supervisor leaves at once (lib/supervisor/engine-end.ts).
   */
  onSigterm(): void {
    const record = this.record ?? this.readQuietly();
    if (record && placedOnEngine(record) && !cancelRequested(this.dir)) {
      this.log('SIGTERM without a cancel: the job engine is ending the job; its state says how the run ended');
      this.leave(ENGINE_END_EXIT);
      return;
    }
    this.stop({ kind: 'cancel' });
  }

  /**
   * The one stop path. The first stop wins. The supervisor's own (a cap, a stall) is recorded as the
   * run's cancel intent, unless a caller's cancel is there already; then the run's processes are stopped
   * as subagent-cancel stops them: the signal, the run's cancel grace, TERM, KILL. A run without an agent
   * yet ends here, cancelled before its start; one whose agent is being started is stopped once it is.
   */
  stop(cause: StopCause): void {
    if (this.stopping || this.ending) return;
    const signal = (cause.kind === 'cancel' && askedSignal(this.dir)) || this.adapter?.gracefulSignal || 'SIGTERM';
    const why = cause.kind === 'cap' ? cause.crossed : cause.kind === 'stalled' ? { reason: 'stalled' as const } : {};
    this.stopping = { cause, request: { requestedAt: nowIso(), signal, by: process.pid, ...why } };
    if (cause.kind === 'cap') this.log(`${cause.crossed.message}; stopping the agent`);
    if (cause.kind === 'stalled') this.log(`cancelling the run: stalled for ${this.record?.stallAfterSec} s (--stall-action cancel)`);
    if (cause.kind === 'cancel') this.log(`SIGTERM: stopping the run (${signal})`);
    if (cause.kind !== 'cancel') void this.recordIntent();
    if (this.agent) void this.stopAgent();
    else if (!this.spawning && this.record && this.adapter) void this.end({ kind: 'cancelled-before-start' });
    // Else the record or the agent is not there yet: supervise() stops the run as soon as it is.
  }

  private async supervise(): Promise<void> {
    const { dir, registry } = this;
    checkpoint('supervisor-started');
    const me = selfIdentity();
    const record = await this.landed('reading the record', () => readRecord(dir));
    if (record.status !== 'scheduled' || (record.supervisor && record.supervisor.pid !== me.pid)) {
      this.log(`run already taken (status ${record.status}, supervisor ${record.supervisor?.pid}); exiting`);
      this.leave(0);
      return;
    }
    this.onEngine = placedOnEngine(record);
    this.adapter = await loadAdapter(record.cli);
    this.record = record;
    if (record.cancel || this.stopping) return this.end({ kind: 'cancelled-before-start' });
    if (record.parkedUntil !== null) {
      this.record = await this.parked(record);
      if (this.stopping) return;
    }
    if (record.waitingFor.length > 0) {
      prepareSpawn();
      const { failed } = await this.landed('waiting for the runs it follows', () => waitForDependencies(registry, dir, record, this.log));
      if (this.stopping) return;
      if (failed.length) return this.end({ kind: 'dependency-failed', error: `not started: ${failed.join('; ')}` });
      this.record = await this.askForSlot(record);
      if (this.stopping) return;
    }
    if (this.record.queueTicket) {
      const ticket = this.record.queueTicket;
      await this.landed('waiting for a queue slot', () => waitForSlot(registry, ticket, record.runId, dir, me, runProbe));
      if (this.stopping) return;
      this.log('got a slot');
    }
    checkpoint('before-agent-spawn');
    await this.runAgent(this.record, this.adapter);
  }

  /**
   * A parked attempt (--on-limit wait, lib/supervisor/park.ts): recorded `running` by its supervisor,
   * which waits until `parkedUntil` by the wall clock (in steps, so a machine that slept does not
   * oversleep), then takes a queue ticket when a concurrency limit or a free-memory floor is in force. A cancel meanwhile ends
   * the run at once (stop: no agent yet).
   */
  private async parked(record: RunRecord): Promise<RunRecord> {
    const me = selfIdentity();
    const running = await this.landed('recording the run parked', () =>
      updateRecord(this.dir, (r) => (r.status === 'done' ? null : { ...r, status: 'running', supervisor: me })),
    );
    if (running.cancel) this.stop({ kind: 'cancel' });
    this.log(`parked until ${record.parkedUntil}`);
    const until = Date.parse(record.parkedUntil!);
    while (!this.stopping && Date.now() < until) await sleep(Math.min(until - Date.now(), 60_000));
    return this.stopping ? running : this.askForSlot(running);
  }

  /**
   * A run that waited before asking for a slot (parked, or following others) takes its queue ticket now,
   * when a concurrency limit or a free-memory floor is in force: it held none while it waited.
   */
  private async askForSlot(record: RunRecord): Promise<RunRecord> {
    if (readLimit(this.registry) === 0 && readMemoryFloor(this.registry) === 0) return record;
    const ticket = newTicket(record.runId);
    enqueue(this.registry, ticket, this.dir);
    return this.landed('recording the queue ticket', () =>
      updateRecord(this.dir, (r) => (r.status === 'done' ? null : { ...r, queueTicket: ticket, waitingFor: [] })),
    );
  }

  /** The agent's part of the run: launched, started, recorded running, followed until it exits, and ended. */
  private async runAgent(record: RunRecord, adapter: AgentAdapter): Promise<void> {
    let launch: Launch;
    const input = launchInput(record);
    try {
      launch = adapter.launch(input);
    } catch (err) {
      return this.end({ kind: 'spawn-failed', error: `cannot launch ${record.cli}: ${(err as Error).message}` });
    }
    const env = agentEnv(this.registry, record, launch.env);
    try {
      await adapter.prepare?.(env, record.cwd);
    } catch (err) {
      this.log(`prepare failed (the agent is started anyway): ${(err as Error).message}`);
    }
    const before = record.run > 1 ? await this.landed('reading the usage before this run', () => usageBefore(this.registry, record)) : null;
    const run = adapter.open({ threadUsageBefore: before });
    // Before the agent starts: what its store holds now is not this run's.
    const fromStore = storeUsageOf(run, record);
    // Stopped while it got ready: nothing was started.
    if (this.stopping) return this.end({ kind: 'cancelled-before-start' });
    // A driven agent is given the prompt by its driver, not on stdin.
    const prompt = adapter.drive ? await this.landed('reading the prompt', () => readFileSync(join(this.dir, FILES.prompt))) : null;
    const agent = await this.spawnAgent(record, launch, env, prompt && { adapter, input, prompt });
    if (agent === null) return;
    // The caps the supervisor holds (the adapter's `stream` ones, checked whenever the stream said more; the time cap from now).
    const caps = capGuard({ record, adapter, state: run.state, stop: (crossed) => this.stop({ kind: 'cap', crossed }) });
    if (this.stopping) void this.stopAgent();
    await this.recordRunning(agent);
    const followed: Followed = { record, adapter, run, fromStore, follower: new LineFollower(join(this.dir, FILES.events), (line) => run.line(line)) };
    const exit = await this.follow(followed, agent.child, caps);
    await this.finish(followed, exit, agent);
  }

  /**
   * Starts the agent on the run's files — or, when its adapter drives it (`drive`), with its stdin and
   * stdout given to the driver; null when it could not be started (the run is then ended).
   */
  private async spawnAgent(
    record: RunRecord,
    launch: Launch,
    env: NodeJS.ProcessEnv,
    drive: { adapter: AgentAdapter; input: LaunchInput; prompt: Buffer } | null,
  ): Promise<Agent | null> {
    this.spawning = true;
    const files = await this.landed('opening the run files', () => openRunFiles(this.dir));
    let child: Waited;
    try {
      child = await spawnWaited(launch.command, launch.args, { cwd: record.cwd, env, stdio: drive ? ['pipe', 'pipe', files[2]] : files });
    } catch (err) {
      this.spawning = false;
      return this.spawnFailed(`cannot start ${launch.command}: ${(err as Error).message}`);
    } finally {
      for (const fd of files) closeSync(fd);
    }
    const driven = drive && startDriver(this.dir, drive.adapter, drive.input, child, drive.prompt, this.log);
    this.agent = { child, identity: identityOf(child.pid), driven };
    this.spawning = false;
    checkpoint('after-agent-spawn');
    return this.agent;
  }

  /** The end of a run whose agent could not be started; resolves to null, what spawnAgent says then. */
  private async spawnFailed(error: string): Promise<null> {
    await this.end({ kind: 'spawn-failed', error });
    return null;
  }

  /** The record `running`, with the supervisor's and the agent's identities, written until the disk takes it. */
  private async recordRunning({ child, identity }: Agent): Promise<void> {
    const running = await this.landed('recording the run running', () =>
      updateRecord(this.dir, (r) =>
        r.status === 'done'
          ? null
          : {
              ...r,
              status: 'running',
              supervisor: selfIdentity(),
              agentStartedAt: nowIso(),
              parkedUntil: null,
              waitingFor: [],
              agentProcess: identity ? { ...identity, pgid: child.pid } : { pid: child.pid, startTime: 'gone', bootId: '', pgid: child.pid },
            },
      ),
    );
    // A cancel that arrived before the agent was recorded could not see the agent: it is stopped here.
    if (running.cancel) this.stop({ kind: 'cancel' });
    checkpoint('running');
  }

  /** Follows the running agent — its progress, its caps, its stalls, its memory — until it exits; resolves with its exit. */
  private async follow(f: Followed, child: Waited, caps: CapGuard): Promise<AgentExit> {
    const onRead = (): void => {
      this.settleChildren(f, false);
      caps.check();
    };
    const progress = new Progress(this.dir, f.run, f.follower, onRead, f.fromStore, this.log, STORE_POLL_MS);
    progress.start();
    const stall = new StallWatch(this.dir, f.record, child.pid, this.log, () => this.stop({ kind: 'stalled' }));
    stall.start();
    const memory = new MemoryWatch(this.dir, f.record, child.pid, this.log, (crossed) => this.stop({ kind: 'cap', crossed }));
    memory.start();
    const exit = await child.exited;
    if (this.onEngine && exit.signal !== null) await engineEndGrace(this.dir);
    progress.stop();
    stall.stop();
    memory.close();
    this.memory = memory.use;
    caps.close();
    checkpoint('agent-exited');
    return exit;
  }

  /** After the agent exited: every line it wrote read, what it left running seen to, the run's end recorded. */
  private async finish(f: Followed, exit: AgentExit, agent: Agent): Promise<void> {
    const { record, adapter, run, follower } = f;
    // Every line the agent wrote (and what it left behind, until it was stopped; what it keeps writing, when
    // kept, is after the run's end) is read and parsed before the end is settled.
    const readAll = () => this.landed('reading the event log to its end', () => follower.flush());
    if (record.keepChildren) await readAll();
    const leftovers = await this.leftBehind(record, agent.identity, agent.child.pid);
    if (!record.keepChildren) await readAll();
    agent.driven?.close();
    run.end();
    this.settleChildren(f, true);
    this.tidy(f);
    try {
      f.fromStore?.(run.state);
    } catch (err) {
      this.log(`reading the usage from the store failed: ${(err as Error).message}`);
    }
    await this.end({ kind: 'exited', adapter, exit, run, skipped: skippedLines(run, follower), eventBytes: follower.position, leftovers });
  }

  /** What the CLI left in its own store that would harm the session, removed (Gemini: a resume's empty second chat). */
  private tidy({ record, run, adapter }: Followed): void {
    try {
      adapter.tidy?.({ sessionId: record.sessionId ?? run.state.sessionId, cwd: record.cwd, storeEnv: record.storeEnv });
    } catch (err) {
      this.log(`tidying the CLI's store failed: ${(err as Error).message}`);
    }
  }

  /** Children's ends the stream cannot tell, from the CLI's own store (Gemini: a failed sub-agent's call is a "success"). */
  private settleChildren({ record, run }: Followed, final: boolean): void {
    if (!run.settleChildren || run.state.children.length === 0) return;
    try {
      run.settleChildren({ sessionId: record.sessionId ?? run.state.sessionId, cwd: record.cwd, storeEnv: record.storeEnv }, final);
    } catch (err) {
      this.log(`settling the children from the store failed: ${(err as Error).message}`);
    }
  }

  /** What the run left running once its agent exited, stopped unless kept (lib/supervisor/leftovers.ts). */
  private leftBehind(record: RunRecord, agent: ProcessIdentity | null, agentPid: number): Promise<LeftoverProcess[]> {
    const waits = !this.stopping && !cancelRequested(this.dir);
    return stopLeftovers({ runId: record.runId, agent, agentPid, keep: record.keepChildren, waits, log: this.log });
  }

  /** The stop's processes: the run's tree (and what carries its marker), stopped as subagent-cancel stops them. */
  private async stopAgent(): Promise<void> {
    const agent = this.agent;
    const stopping = this.stopping;
    if (!agent || !stopping || !this.record || !this.adapter) return;
    // A driven agent is asked in its own protocol first (ACP's session/cancel), then signalled as any.
    await agent.driven?.driver.cancel();
    const roots = agent.identity ? [agent.identity] : [];
    const snapshot = () => snapshotRun(roots, `SUBAGENT_RUN_ID=${this.record!.runId}`, new Set([process.pid]));
    try {
      const seen = snapshot();
      if (seen.length === 0) return;
      const signal = stopping.request.signal as NodeJS.Signals;
      await stopRun(seen, snapshot, {
        signal,
        wholeTree: firstSignalToWholeTree(signal, this.adapter.gracefulSignal),
        agent: agent.identity,
        // The grace cancel would give (SUBAGENT_CANCEL_GRACE_MS at the run's start, in its record).
        graceMs: this.record.cancelGraceMs,
      });
    } catch (err) {
      this.log(`stopping the agent failed: ${(err as Error).message}`);
    }
  }

  /** The supervisor's own stop (a cap, a stall) as the run's cancel intent; a caller's cancel there already stays. */
  private async recordIntent(): Promise<void> {
    const request = this.stopping!.request;
    try {
      await this.landed(`recording the ${request.reason} stop`, () =>
        updateRecord(this.dir, (r) => (r.status === 'done' || r.cancel ? null : { ...r, cancel: request })),
      );
    } catch (err) {
      this.log(`the ${request.reason} stop could not be recorded: ${(err as Error).message}`);
    }
  }

  /**
   * The one end: the record `done` (once: a record already done is left as it is), written until the disk
   * takes it; then the end hooks, the queue slot given back, and the supervisor leaves. Inside a job it
   * stays until its hooks are done (each is bounded by its timeout): the job engine ends every process of
   * the job when its main process exits.
   */
  private async end(end: End): Promise<void> {
    if (this.ending) return;
    this.ending = true;
    const mutate = this.endOf(end);
    const next = end.kind === 'exited' ? await this.parkNext(mutate, end.run) : null;
    if (next) checkpoint('limit-next-published');
    const followed = !next && (await this.followUpNext(mutate));
    // Readers that chose this run as the latest look for the next one (lib/runs/observe.ts).
    const write = followed ? (r: RunRecord) => withFollowedUp(mutate(r)) : mutate;
    let keepers: ChildProcess[] = [];
    try {
      const ended = await this.landed('recording the end', () => updateRecord(this.dir, write, 'done'));
      if (next && ended.status === 'done' && ended.cancel) cancelNext(next, ended.cancel, this.log);
      // A run whose next attempt is parked has not ended its name: the end hooks are the last attempt's.
      else if (ended.status === 'done' && !next) keepers = announceEnd(doneObservation(this.dir, ended), 'inherited', this.log);
    } catch (err) {
      this.log(`the end could not be recorded: ${(err as Error).message}`);
    }
    checkpoint('after-done');
    // A prompt queued while the end was being recorded (its verb saw this run still running).
    if (!next) await this.followUpNext(() => null);
    const record = this.record;
    if (record?.queueTicket) leaveQueue(this.registry, record.queueTicket, record.runId);
    if (this.onEngine) {
      for (const k of keepers) k.ref();
      await Promise.all(keepers.map((k) => (k.exitCode === null && k.signalCode === null ? once(k, 'exit') : null)));
    }
    this.leave(0);
  }

  /**
   * --on-limit wait: when this end is a limit whose reset the CLI said, the run's next attempt, published
   * parked before this run is recorded done (lib/supervisor/park.ts); null when it does not wait.
   */
  private async parkNext(mutate: (r: RunRecord) => RunRecord | null, run: AgentRun): Promise<NextAttempt | null> {
    const current = this.stopping ? null : this.readQuietly();
    const ended = current ? mutate(current) : null;
    const until = ended ? parkUntil(ended) : null;
    if (ended?.status !== 'done' || until === null) return null;
    try {
      return await publishNext(this.registry, this.dir, ended, run.state, until, this.log);
    } catch (err) {
      this.log(`the next attempt could not be started; the run ends on its limit: ${(err as Error).message}`);
      return null;
    }
  }

  /**
   * A queued follow-up (resume-subagent --queue): the name's next prompt published as its next run before
   * this one is recorded done (lib/supervisor/follow-up.ts), so the name is never terminal in between.
   */
  private async followUpNext(mutate: (r: RunRecord) => RunRecord | null): Promise<boolean> {
    const current = this.readQuietly();
    // After the end is recorded, the record as it is (mutate: none).
    const ended = current?.status === 'done' ? current : current ? mutate(current) : null;
    if (ended?.status !== 'done') return false;
    // Before it is recorded: settled beside it, for whoever notices this end should this process die now.
    if (current?.status !== 'done') settleEnd(this.registry, this.dir, ended, this.log);
    checkpoint('before-follow-up');
    try {
      if (!(await publishFollowUp(this.registry, { record: ended, succeeded: ended.outcome === 'succeeded' }, this.log))) return false;
      checkpoint('follow-up-published');
      return true;
    } catch (err) {
      this.log(`the next follow-up could not be started; it stays queued: ${(err as Error).message}`);
      return false;
    }
  }

  /** The record's change at the end (null: it is done already). */
  private endOf(end: End): (r: RunRecord) => RunRecord | null {
    // Our own stop's intent, for when it could not be written before the end.
    const own = this.stopping && this.stopping.cause.kind !== 'cancel' ? this.stopping.request : null;
    if (end.kind === 'cancelled-before-start') {
      const fallback = this.stopping?.request ?? null;
      return (r) => (r.status === 'done' ? null : cancelledBeforeStart(r, r.cancel ?? fallback));
    }
    if (end.kind === 'dependency-failed')
      return (r) => (r.status === 'done' ? null : r.cancel ? cancelledBeforeStart(r, r.cancel) : dependencyFailed(r, end.error));
    const s = end.kind === 'exited' ? end.run.state : null;
    const exit = end.kind === 'exited' ? end.exit : { code: null, signal: null };
    // Children the stream never ended: if the run was cancelled, the cancel stopped them (a CLI may report
    // nothing for a child it killed: Claude 2.1.331 then even ends with result/success and exit 0).
    const open = new Set((s?.children ?? []).filter((c) => c.status === 'running').map((c) => c.id));
    // The verdict first: it may settle children the stream never ended (statusSource "inferred").
    const verdict = end.kind === 'spawn-failed' ? { outcome: 'failed' as const, error: end.error, reason: null } : end.run.verdict(exit);
    if (verdict.outcome === 'failed' && end.kind === 'exited' && !s?.fatalError) {
      const said = lastLine(join(this.dir, FILES.stderr));
      if (said) {
        verdict.error = `${verdict.error ?? 'failed'}; stderr: ${said}`;
        if (verdict.reason === 'crashed' && exit.signal === null) verdict.reason = end.run.stderrReason?.(said) ?? 'crashed';
      }
    }
    return (current) => {
      if (current.status === 'done') return null;
      const r = current.cancel || !own ? current : { ...current, cancel: own };
      const cancelled = r.cancel !== null;
      const ended = endOf(r, verdict, end.kind === 'exited' ? { adapter: end.adapter, state: end.run.state } : null);
      return {
        ...r,
        status: 'done',
        ...ended,
        resetsAt: limitReset(ended, s),
        exitCode: exit.code,
        signal: exit.signal,
        endReason: end.kind === 'spawn-failed' ? 'spawn-failed' : null,
        ...stallEnd(r),
        finishedAt: nowIso(),
        // The duration by the monotonic clock: a wall-clock step during the run does not count.
        elapsedMs: elapsedSinceMs(r.startedAt),
        sessionId: r.sessionId ?? s?.sessionId ?? null,
        toolUses: s?.toolUses ?? r.toolUses,
        usage: s?.usage ?? r.usage,
        children: cancelled ? cancelledChildren(s?.children ?? r.children, nowIso(), { open, since: r.cancel?.requestedAt }) : (s?.children ?? r.children),
        skippedLines: end.kind === 'exited' ? end.skipped : r.skippedLines,
        lastActivityAt: s?.lastActivityAt ?? r.lastActivityAt,
        limitWarning: s ? s.limitWarning : r.limitWarning,
        ...(end.kind === 'exited' ? { eventBytes: end.eventBytes, eventBytesAtEnd: end.eventBytes } : { eventBytesAtEnd: null }),
        leftovers: end.kind === 'exited' ? end.leftovers : [],
        memory: this.memory ?? r.memory,
        parkedUntil: null,
      };
    };
  }

  /** `attempt` until the disk takes it (lib/supervisor/retry.ts). */
  private landed<T>(what: string, attempt: () => T | Promise<T>): Promise<T> {
    return untilItLands(this.dir, what, attempt, this.log);
  }

  private readQuietly(): RunRecord | null {
    try {
      return readRecord(this.dir);
    } catch {
      return null;
    }
  }
}

/** What the adapter is asked to launch: a new session for run 1 (or a run that opens its session anew), else a resume of the run's session. */
function launchInput(record: RunRecord): LaunchInput {
  return {
    mode: record.run === 1 || record.newSession ? 'new' : 'resume',
    cwd: record.cwd,
    model: record.model,
    variant: record.variant,
    agent: record.agent,
    files: record.files,
    extraArgs: record.extraArgs,
    sessionId: record.sessionId,
    caps: record.caps,
    acp: record.acp,
  };
}

/** The agent's environment: the caller's, the CLI's store and the adapter's additions, and the run's own SUBAGENT_* (no test knob). */
export function agentEnv(registry: string, record: RunRecord, launchEnv: Launch['env']): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    // A resume reads the CLI's own store where the session lives (HOME, CODEX_HOME, …).
    ...record.storeEnv,
    ...launchEnv,
    SUBAGENT_DIR: registry,
    SUBAGENT_PARENT: record.name,
    SUBAGENT_DEPTH: String(record.depth),
    SUBAGENT_NAME: record.name,
    SUBAGENT_RUN: String(record.run),
    SUBAGENT_RUN_ID: record.runId,
  };
  for (const knob of TEST_KNOBS) delete env[knob];
  // Programs that trust $PWD over their real cwd (OpenCode) must see the run's directory.
  env.PWD = record.cwd;
  return env;
}

/** The agent's stdin (the prompt), stdout (the event log) and stderr, opened for the spawn. */
function openRunFiles(dir: string): [number, number, number] {
  const opened: number[] = [];
  try {
    opened.push(openSync(join(dir, FILES.prompt), 'r'));
    opened.push(openSync(join(dir, FILES.events), 'a', PRIVATE_FILE));
    opened.push(openSync(join(dir, FILES.stderr), 'a', PRIVATE_FILE));
    return opened as [number, number, number];
  } catch (err) {
    for (const fd of opened) closeSync(fd);
    throw err;
  }
}

/**
 * The end of a run cancelled before its agent was started — by a cancel seen at start-up, or by SIGTERM
 * while it waited for a queue slot or for the runs it follows. The one way this end is written.
 */
function cancelledBeforeStart(r: RunRecord, cancel: CancelRequest | null): RunRecord {
  const now = nowIso();
  return {
    ...notStarted(r, now),
    outcome: 'cancelled',
    reason: 'cancelled',
    error: 'cancelled before the agent started',
    endReason: 'cancelled-before-start',
    cancel: cancel ?? { requestedAt: now, signal: 'SIGTERM', by: 0 },
  };
}

/** An end whose follow-up was published before it was recorded (null: none to write). */
function withFollowedUp(r: RunRecord | null): RunRecord | null {
  return r && { ...r, followedUp: true };
}

/** The end of a run that follows others (--after) one of which did not succeed: it never starts. */
function dependencyFailed(r: RunRecord, error: string): RunRecord {
  return { ...notStarted(r, nowIso()), outcome: 'failed', reason: 'dependency-failed', error, endReason: null };
}

/** The fields of an end whose agent never started. */
function notStarted(r: RunRecord, now: string) {
  return {
    ...r,
    status: 'done' as const,
    exitCode: null,
    signal: null,
    resetsAt: null,
    parkedUntil: null,
    waitingFor: [],
    finishedAt: now,
    elapsedMs: null,
    eventBytesAtEnd: null,
    leftovers: [],
  };
}

/** The last non-empty line of a file (read from its last 4 KiB), capped at 300 characters; null when it cannot be read. */
function lastLine(path: string): string | null {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return null;
  }
  try {
    const size = fstatSync(fd).size;
    const buf = Buffer.alloc(Math.min(size, 4096));
    readSync(fd, buf, 0, buf.length, size - buf.length);
    // Colour escapes out (some CLIs colour even with NO_COLOR); an "Error:" line says more than the last one.
    const lines = buf
      .toString('utf8')
      .replace(/\x1b\[[0-9;?]*[ -/]*[@-~]/g, '')
      .split('\n')
      .map((l) => l.trim())
      .filter(Boolean);
    const line = [...lines].reverse().find((l) => /^error\b/i.test(l)) ?? lines.pop();
    return line ? line.slice(0, 300) : null;
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
}
