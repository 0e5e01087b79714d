import type { ChildProcess } from 'node:child_process';
import { childProcess } from './child-process.js';

/** A process started in a session of its own, with stdio from the given fds ('ignore' is /dev/null). */
export interface SpawnOptions {
  cwd: string;
  env: NodeJS.ProcessEnv;
  stdio: readonly [number | 'ignore', number | 'ignore', number | 'ignore'];
}

/** A detached process this one will not wait for (the supervisor). */
export interface Detached {
  pid: number;
  /** Opens the gate now (see spawnDetached's `gated`); a no-op when there is none or it is open. */
  release(): void;
}

/** A child this process waits for (the agent, in its supervisor). */
export interface Waited {
  pid: number;
  exited: Promise<{ code: number | null; signal: string | null }>;
}

/**
 * How a gated child waits: a POSIX shell reads its stdin, a pipe only this process holds, until
 * end-of-file, then becomes the command (exec: same pid, same start time, so the identity recorded for
 * it stays true), with stdin from /dev/null.
 */
const GATE_SHELL = '/bin/sh';
const GATE_SCRIPT = 'read _; exec "$0" "$@" </dev/null';

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
 * Starts a process that this one will neither wait for nor talk to: its own session (setsid), nothing
 * tied to this process's terminal, not keeping this process alive.
 *
 * `gated` (stdin must be 'ignore'): the command itself starts only once this process calls release()
 * or exits, however it ends — a start command that exits right after does not share the CPU with the
 * child's start-up while it finishes its own work (docs/design.md, "Starting a run"). The gate is a
 * fast path: Without it (lib/fast-paths.ts) the command starts at once.
 */
export async function spawnDetached(command: string, args: readonly string[], o: SpawnOptions & { gated?: boolean }): Promise<Detached> {
  const gated = o.gated === true && o.stdio[0] === 'ignore';
  const child = gated
    ? childProcess().spawn(GATE_SHELL, ['-c', GATE_SCRIPT, command, ...args], { cwd: o.cwd, env: o.env, stdio: ['pipe', o.stdio[1], o.stdio[2]], detached: true })
    : childProcess().spawn(command, args, { cwd: o.cwd, env: o.env, stdio: [...o.stdio], detached: true });
  const pid = await started(child);
  child.unref();
  const gate = gated ? child.stdin : null;
  (gate as { unref?: () => void } | null)?.unref?.();
  let open = gate === null;
  return {
    pid,
    release: () => {
      if (open) return;
      open = true;
      gate!.destroy();
    },
  };
}

/** Starts a child in its own session (so its whole group can be signalled) and tells when it exits. */
export async function spawnWaited(command: string, args: readonly string[], o: SpawnOptions): Promise<Waited> {
  const child = childProcess().spawn(command, args, { cwd: o.cwd, env: o.env, stdio: [...o.stdio], detached: true });
  const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  return { pid: await started(child), exited };
}
