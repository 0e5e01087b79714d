import { spawn } from 'node:child_process';
import { closeSync, openSync, readSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import type { AgentAdapter, Exit, Interactive, Launch, SessionQuery } from '../agents/types.js';
import { fileSize, LineFollower } from '../base/lines.js';
import { elapsedSinceMs, nowIso } from '../base/time.js';
import { identityOf, selfIdentity } from '../proc/identity.js';
import { PRIVATE_FILE } from '../registry/private.js';
import type { DoneRecord, LeftoverProcess, RunRecord } from '../registry/record.js';
import { FILES, updateRecord } from '../registry/store.js';
import { skippedLines } from '../runs/transcript.js';
import { endOf } from './end.js';
import { agentEnv } from './run.js';
import { stopLeftovers } from './leftovers.js';
import { SupervisorLog } from './log.js';
import { openSupervisorLog } from './spawn.js';

/** How often, while the person is in the session, the adapter's `tidy` looks at the CLI's store. */
const TIDY_EVERY_MS = 1000;

/**
 * A person's turn in a run's session (subagent-attach, docs/attach.md), supervised by the attach process
 * itself: the run (published `scheduled`, `attached`) is recorded `running` with this process as its
 * supervisor and the CLI as its agent; the CLI's interactive mode runs in the person's terminal (stdio
 * inherited: the terminal is theirs); when they leave it, the lines the session's file gained meanwhile
 * (or, for a store that is a database, what the adapter reads the session gained: `Interactive.gained`)
 * become the run's event log, read by the adapter's interactive reader, and the run is recorded `done`.
 * A kill -9 of this process leaves the run `unknown` (its supervisor died), as any run's.
 */
export async function superviseAttached(
  registry: string,
  dir: string,
  record: RunRecord,
  adapter: AgentAdapter,
  /** The interactive mode's command, as the attach command made it (and found on PATH). */
  launch: Launch,
  screen = 1,
): Promise<DoneRecord> {
  const interactive = adapter.interactive as Interactive;
  const query = { sessionId: record.sessionId, cwd: record.cwd, storeEnv: record.storeEnv };
  // What the session holds before the person is in it: the store's own mark (a database), else the file's size.
  const gained = interactive.gained?.(query) ?? null;
  const before = gained ? null : interactive.sessionFile(query);
  const offset = before === null ? 0 : fileSize(before);
  // Recorded running with this process as its supervisor before the CLI exists: from the first moment a
  // reader can see the session, a dead attach is a dead supervisor (unknown), never a run nobody took.
  recordRunning(dir, undefined);
  const child = spawn(launch.command, launch.args, { cwd: record.cwd, env: agentEnv(registry, record, launch.env), stdio: ['inherit', screen, screen] });
  // The terminal's Ctrl-C, Ctrl-\ and Ctrl-Z are the CLI's (the whole foreground group gets them); a
  // hangup or a TERM (a cancel) is passed on to it, and the run ends when it does.
  const ignore = () => undefined;
  const pass = (signal: NodeJS.Signals) => () => child.kill(signal);
  const handlers: Array<[NodeJS.Signals, () => void]> = [
    ['SIGINT', ignore],
    ['SIGQUIT', ignore],
    ['SIGTSTP', ignore],
    ['SIGTERM', pass('SIGTERM')],
    ['SIGHUP', pass('SIGHUP')],
  ];
  for (const [s, h] of handlers) process.on(s, h);
  // What the interactive mode leaves in the CLI's store that would harm the session goes as soon as it is
  // there, not only at the end: another session may start in the project while the person is in this one.
  const tidy = tidier(adapter, query);
  const tidying = tidy ? setInterval(tidy, TIDY_EVERY_MS) : null;
  try {
    const ended = await new Promise<{ exit: Exit; failed: Error | null }>((resolve) => {
      child.once('error', (err) => resolve({ exit: { code: null, signal: null }, failed: err }));
      child.once('spawn', () => recordRunning(dir, child.pid));
      child.once('exit', (code, signal) => resolve({ exit: { code, signal }, failed: null }));
    });
    if (ended.failed) return recordSpawnFailed(dir, launch.command, ended.failed);
    // What the CLI left running stops as any run's does: Codex's TUI starts an app-server daemon that
    // keeps the thread's store open for writing, and the orchestrator's next resume would find it taken.
    const log = openSupervisorLog(dir);
    const agent = child.pid === undefined ? null : identityOf(child.pid);
    let leftovers: LeftoverProcess[] = [];
    try {
      leftovers = await stopLeftovers({
        runId: record.runId,
        agent,
        agentPid: child.pid ?? -1,
        keep: false,
        waits: true,
        log: new SupervisorLog(log.fd).write,
      });
    } finally {
      closeSync(log.fd);
    }
    tidy?.();
    const events = join(dir, FILES.events);
    let bytes: number;
    if (gained) bytes = writeLines(gained(), events);
    else {
      const file = interactive.sessionFile(query) ?? before;
      bytes = file === null ? 0 : copyGained(file, offset, events);
    }
    return recordEnd(dir, adapter, interactive, ended.exit, bytes, leftovers);
  } finally {
    if (tidying) clearInterval(tidying);
    for (const [s, h] of handlers) process.off(s, h);
  }
}

/** The adapter's `tidy` of the session's store, if it has one; never an end of the person's session: what cannot be tidied now is looked at again. */
function tidier(adapter: AgentAdapter, query: SessionQuery): (() => void) | null {
  const own = adapter.tidy;
  if (!own) return null;
  return () => {
    try {
      own(query);
    } catch {
      /* the next look, or the one after the person left */
    }
  };
}

/** The run is the person's: this process its supervisor, and once it is started (`pid`), the CLI its agent. */
function recordRunning(dir: string, pid: number | undefined): void {
  const id = pid === undefined ? null : identityOf(pid);
  try {
    updateRecord(dir, (r) =>
      r.status === 'done'
        ? null
        : {
            ...r,
            status: 'running',
            supervisor: selfIdentity(),
            agentStartedAt: pid === undefined ? r.agentStartedAt : nowIso(),
            agentProcess: id ? { ...id, pgid: id.pid } : r.agentProcess,
          },
    );
  } catch {
    // The registry could not take it now: the session goes on; its end is recorded when it ends.
  }
}

function recordSpawnFailed(dir: string, program: string, err: Error): DoneRecord {
  const verdict = { outcome: 'failed' as const, error: `${program} could not be started: ${err.message}`, reason: null };
  return updateRecord(dir, (r) =>
    r.status === 'done'
      ? null
      : {
          ...r,
          status: 'done',
          ...endOf(r, verdict, null),
          resetsAt: null,
          endReason: 'spawn-failed',
          finishedAt: nowIso(),
          elapsedMs: elapsedSinceMs(r.startedAt),
          eventBytesAtEnd: null,
          leftovers: [],
        },
  ) as DoneRecord;
}

/** Copies the whole lines `file` gained past `offset` into the run's event log; returns the log's size. */
function copyGained(file: string, offset: number, events: string): number {
  const out = openSync(events, 'a', PRIVATE_FILE);
  let written = 0;
  try {
    const input = openSync(file, 'r');
    try {
      const chunk = Buffer.allocUnsafe(256 * 1024);
      let at = offset;
      let carry = Buffer.alloc(0);
      for (;;) {
        const n = readSync(input, chunk, 0, chunk.length, at);
        if (n === 0) break;
        at += n;
        const data = Buffer.concat([carry, chunk.subarray(0, n)]);
        // A last line still being written (no newline yet) is not the run's.
        const end = data.lastIndexOf(10) + 1;
        if (end > 0) written += writeSync(out, data, 0, end);
        carry = Buffer.from(data.subarray(end));
      }
    } finally {
      closeSync(input);
    }
  } catch {
    // The session's file could not be read: the run is recorded with what the log holds (nothing).
  } finally {
    closeSync(out);
  }
  return written;
}

/** Writes `lines` as the run's event log; returns its size. */
function writeLines(lines: string[], events: string): number {
  const data = Buffer.from(lines.map((l) => `${l}\n`).join(''));
  const out = openSync(events, 'a', PRIVATE_FILE);
  try {
    return data.length ? writeSync(out, data) : 0;
  } finally {
    closeSync(out);
  }
}

function recordEnd(dir: string, adapter: AgentAdapter, interactive: Interactive, exit: Exit, bytes: number, leftovers: LeftoverProcess[]): DoneRecord {
  const run = interactive.open();
  const follower = new LineFollower(join(dir, FILES.events), (line) => run.line(line));
  follower.flush();
  run.end();
  const s = run.state;
  const verdict = run.verdict(exit);
  const done = updateRecord(dir, (r) => {
    if (r.status === 'done') return null;
    return {
      ...r,
      status: 'done',
      ...endOf(r, verdict, { adapter, state: s }),
      resetsAt: null,
      exitCode: exit.code,
      signal: exit.signal,
      endReason: null,
      finishedAt: nowIso(),
      elapsedMs: elapsedSinceMs(r.startedAt),
      sessionId: r.sessionId ?? s.sessionId,
      toolUses: s.toolUses,
      usage: s.usage,
      children: s.children,
      skippedLines: skippedLines(run, follower),
      lastActivityAt: s.lastActivityAt ?? r.lastActivityAt,
      eventBytes: bytes,
      eventBytesAtEnd: bytes,
      leftovers,
    };
  });
  return done as DoneRecord;
}
