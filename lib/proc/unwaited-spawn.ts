import { closeSync } from 'node:fs';
import { envPairs, spawnDirect, spawnError } from './direct-spawn.js';
import { nativeAddon } from '../native/addon.js';

export interface UnwaitedProcess {
  pid: number;
  /** Opens the gate now (see spawnUnwaited's `gated`); a no-op when there is none or it is open. */
  release(): void;
}

/**
 * How a gated child waits: a POSIX shell reads its stdin, a pipe only this process holds, until
 * end-of-file, then becomes the command (exec: same pid, same start time, so the identity recorded
 * for it stays true), with stdin from /dev/null.
 */
const GATE_SHELL = '/bin/sh';
const GATE_SCRIPT = 'read _; exec "$0" "$@" </dev/null';

/**
 * Starts a process that this one will neither wait for nor talk to (the supervisor). Through
 * posix_spawn when the addon is built — no copy of this process's memory: ~5 ms less on a start and a
 * faster exit after it (docs/design.md, "Starting a run") — else through libuv.
 *
 * `gated`: the command itself starts only once this process calls release() or exits (however it
 * ends), so a short-lived caller does not share the CPU with the child's start-up while it finishes its
 * own work. Needs stdin 'ignore'; without the addon the child starts at once.
 *
 * Either way the child gets stdio as given ('ignore' is /dev/null), cwd, exactly env, signals 1-31 at
 * their default action and none blocked (lib/native/spawn.c says what glibc does with 32 and 33), and
 * its own session when `detached`.
 */
export function spawnUnwaited(
  command: string,
  args: readonly string[],
  o: { cwd: string; env: NodeJS.ProcessEnv; stdio: ReadonlyArray<number | 'ignore'>; detached: boolean; gated?: boolean },
): UnwaitedProcess {
  const native = nativeAddon();
  if (!native) {
    const child = spawnDirect(command, args, o);
    child.unref();
    return { pid: child.pid, release: () => undefined };
  }
  const envp = envPairs(o.env);
  const stdio = [0, 1, 2].map((i) => {
    const fd = o.stdio[i] ?? 'ignore';
    return fd === 'ignore' ? -1 : fd;
  });
  const gated = o.gated === true && stdio[0] === -1;
  const [pid, gate] = gated
    ? native.spawn(GATE_SHELL, [GATE_SHELL, '-c', GATE_SCRIPT, command, ...args], envp, o.cwd, [-2, stdio[1]!, stdio[2]!], o.detached)
    : native.spawn(command, [command, ...args], envp, o.cwd, stdio, o.detached);
  if (pid <= 0) throw spawnError(gated ? GATE_SHELL : command, pid);
  let open = gate === -1;
  return {
    pid,
    release: () => {
      if (open) return;
      open = true;
      closeSync(gate);
    },
  };
}
