/**
 * Other users, for the tests that play an attacker (docs/security.md): numeric uids with no account,
 * reached as root with setpriv (real and effective uid and gid, no supplementary groups). Whoever runs
 * as one of them cannot read a root-only file nor write a directory only root may write — as on a
 * shared machine.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

/** The user who plants things. */
export const ATTACKER = 4242;
/** A non-root user who runs the verbs, where root's powers would hide what ownership means. */
export const VICTIM = 4343;

const SETPRIV = '/usr/bin/setpriv';

/** Why other users cannot be played here, or null when they can (root, with setpriv). */
export function noOtherUsers(): string | null {
  if (process.getuid?.() !== 0) return 'playing another user needs root (setpriv --reuid)';
  if (!existsSync(SETPRIV)) return 'playing another user needs setpriv (util-linux)';
  return null;
}

/** Runs a program as `uid`, to its end; its status, stdout and stderr. */
export function runAs(uid: number, file: string, args: string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv } = {}) {
  const r = spawnSync(SETPRIV, ['--reuid', String(uid), '--regid', String(uid), '--clear-groups', file, ...args], {
    cwd: opts.cwd ?? '/',
    env: opts.env ?? process.env,
    encoding: 'utf8',
    timeout: 120_000,
  });
  if (r.error) throw r.error;
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** A shell script as `uid`, which must succeed. */
export function shAs(uid: number, script: string, cwd = '/'): void {
  const r = runAs(uid, '/bin/sh', ['-c', script], { cwd });
  if (r.code !== 0) throw new Error(`as uid ${uid}: ${script}: exit ${r.code}: ${r.stderr}`);
}
