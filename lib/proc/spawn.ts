import type { ChildProcess } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import { childProcess } from './child-process.js';

/** A process started in a session of its own, with stdio from the given fds ('ignore' is /dev/null). */
export interface SpawnOptions {
  cwd: string;
  env: NodeJS.ProcessEnv;
  stdio: readonly [number | 'ignore', number | 'ignore', number | 'ignore'];
}

/** As `SpawnOptions`, stdin and stdout possibly pipes to this process (an agent its supervisor talks with). */
export interface WaitedOptions {
  cwd: string;
  env: NodeJS.ProcessEnv;
  stdio: readonly [number | 'ignore' | 'pipe', number | 'ignore' | 'pipe', number | 'ignore'];
}

/** A child this process waits for (the agent, in its supervisor). */
export interface Waited {
  pid: number;
  exited: Promise<{ code: number | null; signal: string | null }>;
  /** Its stdin and stdout, when they are pipes; else null. */
  stdin: Writable | null;
  stdout: Readable | null;
}

/**
 * The child's pid once it runs. child_process knows at once whether the spawn worked (the pid is set)
 * but reports a failure only later, as an 'error' event: then this rejects with that error (`spawn X
 * ENOENT`). On success it resolves without waiting for an event, so a caller's `await` yields to no
 * signal handler between the spawn and its next statement (the supervisor relies on that).
 */
async function started(child: ChildProcess): Promise<number> {
  if (child.pid === undefined) return new Promise((_, reject) => child.once('error', reject));
  child.on('error', () => undefined);
  return child.pid;
}

/**
 * Starts a process that this one will neither wait for nor talk to (the supervisor): its own session
 * (setsid), nothing tied to this process's terminal, not keeping this process alive. Returns its pid.
 */
export async function spawnDetached(command: string, args: readonly string[], o: SpawnOptions): Promise<number> {
  const child = childProcess().spawn(command, args, { cwd: o.cwd, env: o.env, stdio: [...o.stdio], detached: true });
  const pid = await started(child);
  child.unref();
  return pid;
}

/**
 * Loads what a spawn needs ahead of it, for a process with time to spare before a spawn that must be
 * quick (a supervisor waiting for the runs its run follows: its agent starts the moment they end).
 */
export function prepareSpawn(): void {
  childProcess();
}

/** Starts a child in its own session (so its whole group can be signalled) and tells when it exits. */
export async function spawnWaited(command: string, args: readonly string[], o: WaitedOptions): Promise<Waited> {
  const child = childProcess().spawn(command, args, { cwd: o.cwd, env: o.env, stdio: [...o.stdio], detached: true });
  const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  return { pid: await started(child), exited, stdin: child.stdin, stdout: child.stdout };
}
