import { getSystemErrorName } from 'node:util';
import { internalBinding } from '../internal-binding.js';

/**
 * Starts a process through Node's process_wrap binding — the handle child_process.spawn itself wraps.
 * child_process loads net, stream, dgram and perf_hooks along with it: ~2 MB more in every supervisor,
 * and ~5 ms on the critical path of start-subagent (docs/design.md, "Starting a run"), for features
 * (pipes, IPC, events) neither the supervisor nor the start command uses. This needs only fds, a pid
 * and the exit. The binding is internal (lib/internal-binding.ts); test/cli/supervisor.test.ts would
 * fail at once on a Node without it.
 */
export interface DirectProcess {
  pid: number;
  exited: Promise<{ code: number | null; signal: string | null }>;
  /** Lets this process exit while the child still runs (the child is not waited for). */
  unref(): void;
}

interface ProcessHandle {
  pid: number;
  onexit: (code: number, signal: string) => void;
  spawn(options: object): number;
  close(): void;
  unref(): void;
}

let Process: (new () => ProcessHandle) | null = null;

export function spawnDirect(
  command: string,
  args: readonly string[],
  o: { cwd: string; env: NodeJS.ProcessEnv; stdio: ReadonlyArray<number | 'ignore'>; detached: boolean },
): DirectProcess {
  Process ??= internalBinding<{ Process: new () => ProcessHandle }>('process_wrap')?.Process ?? null;
  if (!Process) throw new Error(`spawn ${command}: this Node has no process_wrap binding`);
  const handle = new Process();
  let resolveExit: (exit: { code: number | null; signal: string | null }) => void = () => undefined;
  const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) => (resolveExit = resolve));
  handle.onexit = (code, signal) => {
    handle.close();
    resolveExit(signal ? { code: null, signal } : { code, signal: null });
  };
  const err = handle.spawn({
    file: command,
    args: [command, ...args],
    cwd: o.cwd,
    envPairs: envPairs(o.env),
    stdio: o.stdio.map((fd) => (fd === 'ignore' ? { type: 'ignore' } : { type: 'fd', fd })),
    detached: o.detached,
  });
  if (err !== 0) {
    handle.close();
    throw spawnError(command, err);
  }
  return { pid: handle.pid, exited, unref: () => handle.unref() };
}

/** An environment as the "KEY=value" strings exec takes (unset variables left out). */
export function envPairs(env: NodeJS.ProcessEnv): string[] {
  return Object.entries(env).flatMap(([k, v]) => (v === undefined ? [] : [`${k}=${v}`]));
}

/** The error child_process would throw for a spawn that failed with `errno` (negative, as libuv reports it). */
export function spawnError(command: string, errno: number): Error {
  const name = getSystemErrorName(errno);
  return Object.assign(new Error(`spawn ${command} ${name}`), { code: name, errno, syscall: `spawn ${command}`, path: command });
}
