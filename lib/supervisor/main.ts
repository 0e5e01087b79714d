import { closeSync, fstatSync, openSync, readSync, watch, type FSWatcher } from 'node:fs';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { loadAdapter } from '../agents/index.js';
import { emptyState, type AgentAdapter, type StreamParser } from '../agents/types.js';
import { TEST_KNOBS, checkpoint } from '../base/checkpoint.js';
import { identityOf, selfIdentity } from '../proc/identity.js';
import { cancelledChildren, type RunRecord } from '../registry/record.js';
import { FILES, readRecord, updateRecord } from '../registry/store.js';
import { elapsedSinceMs, monotonicMs, nowIso } from '../base/time.js';
import { LineFollower } from '../base/lines.js';
import { leaveQueue, waitForSlot } from '../registry/queue.js';
import { spawnWaited, type Waited } from '../proc/spawn.js';
import { usageBefore } from '../runs/usage.js';
import { skippedLines } from '../runs/transcript.js';
import { PRIVATE_FILE } from '../registry/private.js';
import { askedSignal, cancelRequested, endedByEngine, engineEndGrace, placedOnEngine } from './engine-end.js';
import { doneObservation, runProbe } from '../runs/observe.js';
import { announceEnd } from '../runs/hooks.js';
import { StallWatch, stallEnd } from './stall.js';
import { capsOf } from '../runs/reason.js';
import { capGuard } from './caps.js';
import { STORE_POLL_MS, storeUsageOf, type StoreUsageRead } from './store-usage.js';
import { endOf } from './end.js';

/**
 * The supervisor: one detached Node process per run, the sole owner of the run while it lives.
 * record running → run the agent (prompt on stdin, stdout → events.log, stderr → stderr.log) →
 * follow the event log for progress → record done → exit.
 */
const PROGRESS_INTERVAL_MS = 250;

/** The agent, once spawned; signal handlers run between ticks, so they see it set or not, never half. */
let agent: { child: Waited; adapter: AgentAdapter } | null = null;
/** Our place in the registry's queue, when a concurrency limit applies. */
let queued: { registry: string; ticket: string; runId: string } | null = null;
/** Placed on a job engine (Slurm): a SIGTERM without a cancel is the engine ending the job (lib/supervisor/engine-end.ts). */
let onEngine = false;

function log(message: string): void {
  process.stderr.write(`${nowIso()} supervisor ${process.pid}: ${message}\n`);
}

async function main(): Promise<void> {
  const [registry, dir] = process.argv.slice(2);
  if (!registry || !dir) throw new Error('usage: supervisor <registry> <run-dir>');
  // Detached from any terminal already; these must not end the run.
  process.on('SIGHUP', () => log('ignored SIGHUP'));
  process.on('SIGINT', () => log('ignored SIGINT'));
  checkpoint('supervisor-started');

  const me = selfIdentity();
  const record = readRecord(dir);
  if (record.status !== 'scheduled' || (record.supervisor && record.supervisor.pid !== me.pid)) {
    log(`run already taken (status ${record.status}, supervisor ${record.supervisor?.pid}); exiting`);
    return;
  }
  onEngine = placedOnEngine(record);
  const adapter = await loadAdapter(record.cli);
  if (record.cancel) {
    recordEnd(dir, cancelledBeforeStart, 'done');
    checkpoint('after-done');
    return;
  }
  if (record.queueTicket) {
    queued = { registry, ticket: record.queueTicket, runId: record.runId };
    await waitForSlot(registry, record.queueTicket, record.runId, dir, me, runProbe);
    log('got a slot');
  }
  checkpoint('before-agent-spawn');
  try {
    await runAgent(registry, dir, record, adapter);
  } finally {
    if (queued) leaveQueue(queued.registry, queued.ticket, queued.runId);
  }
}

async function runAgent(registry: string, dir: string, record: RunRecord, adapter: AgentAdapter): Promise<void> {
  let launch: ReturnType<AgentAdapter['launch']>;
  try {
    launch = adapter.launch({
      mode: record.run === 1 ? 'new' : 'resume',
      cwd: record.cwd,
      model: record.model,
      variant: record.variant,
      agent: record.agent,
      files: record.files,
      extraArgs: record.extraArgs,
      sessionId: record.sessionId,
      caps: capsOf(record),
    });
  } catch (err) {
    finish(dir, { kind: 'spawn-failed', error: `cannot launch ${record.cli}: ${(err as Error).message}` });
    return;
  }
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    // A resume reads the CLI's own store where the session lives (HOME, CODEX_HOME, …).
    ...record.storeEnv,
    ...launch.env,
    SUBAGENT_DIR: registry,
    SUBAGENT_PARENT: record.name,
    SUBAGENT_DEPTH: String(record.depth ?? 1),
    SUBAGENT_NAME: record.name,
    SUBAGENT_RUN: String(record.run),
    SUBAGENT_RUN_ID: record.runId,
  };
  for (const knob of TEST_KNOBS) delete env[knob];
  // Programs that trust $PWD over their real cwd (OpenCode) must see the run's directory.
  env.PWD = record.cwd;
  try {
    await adapter.prepare?.(env, record.cwd);
  } catch (err) {
    log(`prepare failed (the agent is started anyway): ${(err as Error).message}`);
  }
  // Before the agent starts: what its store holds now is not this run's.
  const fromStore = storeUsageOf(adapter, record);
  const stdin = openSync(join(dir, FILES.prompt), 'r');
  const stdout = openSync(join(dir, FILES.events), 'a', PRIVATE_FILE);
  const stderr = openSync(join(dir, FILES.stderr), 'a', PRIVATE_FILE);
  let child: Waited;
  try {
    child = await spawnWaited(launch.command, launch.args, { cwd: record.cwd, env, stdio: [stdin, stdout, stderr] });
    agent = { child, adapter };
  } catch (err) {
    finish(dir, { kind: 'spawn-failed', error: `cannot start ${launch.command}: ${(err as Error).message}` });
    return;
  } finally {
    closeSync(stdin);
    closeSync(stdout);
    closeSync(stderr);
  }
  const exited = child.exited;
  const identity = identityOf(child.pid);
  checkpoint('after-agent-spawn');
  const running = updateRecord(dir, (r) =>
    r.status === 'done'
      ? null
      : {
          ...r,
          status: 'running',
          supervisor: selfIdentity(),
          agentStartedAt: nowIso(),
          agentProcess: identity ? { ...identity, pgid: child.pid } : { pid: child.pid, startTime: 'gone', bootId: '', pgid: child.pid },
        },
  );
  if (running.cancel) {
    // A cancel arrived before the agent was recorded; it could not see the agent, so stop it here.
    try {
      process.kill(-child.pid, adapter.gracefulSignal);
    } catch {
      /* already gone */
    }
  }
  checkpoint('running');

  const parser = adapter.parser(undefined, { threadUsageBefore: record.run > 1 ? usageBefore(registry, record) : null });
  const follower = new LineFollower(join(dir, FILES.events), (line) => parser.line(line));
  // The caps the supervisor holds (the adapter's `stream` ones, checked whenever the stream said more; the time cap).
  const caps = capGuard({ dir, record, adapter, state: parser.state, agent: identity, log });
  // Children's ends the stream cannot tell, from the CLI's own store (Gemini: a failed sub-agent's call is a "success").
  const settle = (final: boolean): void => {
    if (!adapter.settleChildren || parser.state.children.length === 0) return;
    try {
      adapter.settleChildren(
        { sessionId: record.sessionId ?? parser.state.sessionId, cwd: record.cwd, storeEnv: record.storeEnv ?? {} },
        parser.state.children,
        final,
      );
    } catch (err) {
      log(`settling the children from the store failed: ${(err as Error).message}`);
    }
  };
  const progress = new Progress(
    dir,
    parser,
    follower,
    () => {
      settle(false);
      caps.check();
    },
    fromStore,
  );
  progress.start();
  const stall = new StallWatch(dir, record, child.pid, adapter, log);
  stall.start();
  const exit = await exited;
  if (onEngine && exit.signal !== null) await engineEndGrace(dir);
  progress.stop();
  stall.stop();
  caps.close();
  checkpoint('agent-exited');
  follower.flush();
  parser.end?.();
  settle(true);
  fromStore?.(parser.state);
  finish(dir, { kind: 'exited', adapter, exit, parser, skipped: skippedLines(parser, follower) });
}

/**
 * Copies what the stream said into the record, a few times a second at most, only when it changed.
 * inotify says when the log grew; a tick then follows at most PROGRESS_INTERVAL_MS after the last, so
 * an idle run does not wake at all. Without inotify it polls on that interval. An adapter's store usage
 * (lib/supervisor/store-usage.ts) is read at each tick, and every STORE_POLL_MS besides.
 */
class Progress {
  private timer: NodeJS.Timeout | null = null;
  private storePoll: NodeJS.Timeout | null = null;
  private watcher: FSWatcher | null = null;
  private lastTickAt = -Infinity;
  private lastWritten = '';

  constructor(
    private readonly dir: string,
    private readonly parser: StreamParser,
    private readonly follower: LineFollower,
    private readonly onRead: () => void,
    private readonly fromStore: StoreUsageRead | null,
  ) {}

  start(): void {
    if (this.fromStore) this.storePoll = setInterval(() => this.schedule(), STORE_POLL_MS);
    try {
      this.watcher = watch(join(this.dir, FILES.events), () => this.schedule());
      this.watcher.on('error', () => this.poll());
    } catch {
      this.poll();
      return;
    }
    // Output written before the watcher started must be read too.
    this.schedule();
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.storePoll) clearInterval(this.storePoll);
    this.storePoll = null;
    this.watcher?.close();
    this.watcher = null;
  }

  private schedule(): void {
    if (this.timer) return;
    const wait = Math.max(0, this.lastTickAt + PROGRESS_INTERVAL_MS - monotonicMs());
    this.timer = setTimeout(() => {
      this.timer = null;
      this.tick();
    }, wait);
  }

  private poll(): void {
    this.stop();
    // Each tick reads the store too.
    this.timer = setInterval(() => this.tick(), PROGRESS_INTERVAL_MS);
  }

  private tick(): void {
    this.lastTickAt = monotonicMs();
    const streamed = this.follower.poll() > 0;
    const stored = this.fromStore?.(this.parser.state) ?? false;
    if (!streamed && !stored) return;
    this.onRead();
    const s = this.parser.state;
    const skipped = skippedLines(this.parser, this.follower);
    const snapshot = JSON.stringify([s.sessionId, s.toolUses, s.usage, s.children, skipped]);
    const activity = s.lastActivityAt;
    if (snapshot === this.lastWritten && !activity) return;
    this.lastWritten = snapshot;
    try {
      updateRecord(this.dir, (r) => {
        if (r.status === 'done') return null;
        return {
          ...r,
          sessionId: r.sessionId ?? s.sessionId,
          toolUses: s.toolUses,
          usage: s.usage,
          children: s.children,
          skippedLines: skipped,
          lastActivityAt: activity ?? r.lastActivityAt,
          eventBytes: this.follower.position,
        };
      });
    } catch (err) {
      log(`progress update failed: ${(err as Error).message}`);
    }
  }
}

/** How a run that got past its start ended: its agent could not be started, or it exited. */
type End =
  | { kind: 'spawn-failed'; error: string }
  | { kind: 'exited'; adapter: AgentAdapter; exit: { code: number | null; signal: string | null }; parser: StreamParser; skipped: number };

/** Records the end (once: a record already done is left as it is). */
function finish(dir: string, end: End): void {
  const s = end.kind === 'exited' ? end.parser.state : null;
  const exit = end.kind === 'exited' ? end.exit : { code: null, signal: null };
  // Children the stream never ended: if the run was cancelled, the cancel stopped them (a CLI may report
  // nothing for a child it killed: Claude 2.1.331 then even ends with result/success and exit 0).
  const open = new Set((s?.children ?? []).filter((c) => c.status === 'running').map((c) => c.id));
  // The verdict first: it may settle children the stream never ended (statusSource "inferred").
  const verdict = end.kind === 'spawn-failed' ? { outcome: 'failed' as const, error: end.error, reason: null } : end.adapter.verdict(exit, s ?? emptyState());
  if (verdict.outcome === 'failed' && end.kind === 'exited' && !s?.fatalError) {
    const said = lastLine(join(dir, FILES.stderr));
    if (said) verdict.error = `${verdict.error ?? 'failed'}; stderr: ${said}`;
  }
  recordEnd(
    dir,
    (r) => {
      if (r.status === 'done') return null;
      const cancelled = r.cancel !== null;
      return {
        ...r,
        status: 'done',
        ...endOf(r, verdict, end.kind === 'exited' ? { adapter: end.adapter, state: end.parser.state } : null),
        exitCode: exit.code,
        signal: exit.signal,
        endReason: end.kind === 'spawn-failed' ? 'spawn-failed' : null,
        ...stallEnd(r),
        finishedAt: nowIso(),
        sessionId: r.sessionId ?? s?.sessionId ?? null,
        toolUses: s?.toolUses ?? r.toolUses,
        usage: s?.usage ?? r.usage,
        children: cancelled ? cancelledChildren(s?.children ?? r.children, nowIso(), open) : (s?.children ?? r.children),
        skippedLines: end.kind === 'exited' ? end.skipped : (r.skippedLines ?? 0),
        lastActivityAt: s?.lastActivityAt ?? r.lastActivityAt,
      };
    },
    'done',
  );
  checkpoint('after-done');
}

/**
 * Records the end (`mutate` returns a done record, or null when one is there) and fires the end hooks.
 * Inside a job the supervisor stays until its hooks are done (each is bounded by its timeout): the job
 * engine ends every process of the job when its main process exits.
 */
function recordEnd(dir: string, mutate: (r: RunRecord) => RunRecord | null, label?: string): ChildProcess[] {
  // The duration by the monotonic clock, with the end: a wall-clock step during the run does not count.
  const ended = updateRecord(
    dir,
    (r) => {
      const next = mutate(r);
      return next?.status === 'done' ? { ...next, elapsedMs: elapsedSinceMs(next.startedAt) } : next;
    },
    label,
  );
  if (ended.status !== 'done') return [];
  const keepers = announceEnd(doneObservation(dir, ended));
  if (onEngine) for (const k of keepers) k.ref();
  return keepers;
}

/**
 * The end of a run cancelled before its agent was started — by a cancel seen at start-up, or by SIGTERM
 * while it waited for a queue slot. The one way this end is written.
 */
function cancelledBeforeStart(r: RunRecord): RunRecord | null {
  if (r.status === 'done') return null;
  const now = nowIso();
  return {
    ...r,
    status: 'done',
    outcome: 'cancelled',
    reason: 'cancelled',
    exitCode: null,
    signal: null,
    error: 'cancelled before the agent started',
    endReason: 'cancelled-before-start',
    finishedAt: now,
    cancel: r.cancel ?? { requestedAt: now, signal: 'SIGTERM', by: 0 },
  };
}

/** The last non-empty line of a file (read from its last 4 KiB), capped at 300 characters. */
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
  } finally {
    closeSync(fd);
  }
}

/**
 * SIGTERM to the supervisor means "cancel". Before the agent exists: record the cancel and leave.
 * After: pass the signal the cancel asked for (`cancel --signal INT`; by default the CLI's graceful one)
 * to the agent's group and let the normal end be recorded. On a job engine this is the only way the
 * asked signal reaches the agent: cancel signals the job's one process, this one.
 */
process.on('SIGTERM', () => {
  const dir = process.argv[3];
  if (onEngine && dir && !cancelRequested(dir)) endedByEngine(log);
  if (agent) {
    const signal = (dir && askedSignal(dir)) || agent.adapter.gracefulSignal;
    log(`SIGTERM: stopping the agent (${signal})`);
    try {
      process.kill(-agent.child.pid, signal);
    } catch {
      /* already gone */
    }
    return;
  }
  if (!dir) process.exit(0);
  try {
    const keepers = recordEnd(dir, cancelledBeforeStart);
    if (queued) leaveQueue(queued.registry, queued.ticket, queued.runId);
    // Inside a job, the job's end would end the hooks too: leave when they are done (they are bounded).
    if (!onEngine) process.exit(0);
    void Promise.all(keepers.map((k) => (k.exitCode === null && k.signalCode === null ? once(k, 'exit') : null))).then(() => process.exit(0));
  } catch (err) {
    log(`SIGTERM handling failed: ${(err as Error).message}`);
    process.exit(1);
  }
});

main().catch((err) => {
  log(`fatal: ${(err as Error).stack ?? String(err)}`);
  process.exitCode = 1;
});
