/**
 * Other users, for the tests that play an attacker (docs/security.md): numeric uids with no account,
 * reached as root with setpriv (real and effective uid and gid, no supplementary groups). Whoever runs
 * as one of them cannot read a root-only file nor write a directory only root may write — as on a
 * shared machine.
 */
import { spawnSync } from 'node:child_process';
import { chownSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Box } from './box.js';
import { BIN } from './paths.js';
import { runProgramAsync, type RunOpts, type RunOut, type Verb } from './run.js';

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

/** Hands the box (its HOME and registry) to `uid`, so that the verbs it runs as that user own it. */
export function giveBox(b: Box, uid = ATTACKER): void {
  chownSync(b.dir, uid, uid);
}

/** A verb of the box run as `uid`, without blocking the event loop (the box's environment, its directory). */
export function runVerbAs(b: Box, verb: Verb, args: string[], opts: RunOpts = {}, uid = ATTACKER): Promise<RunOut> {
  const setpriv = ['--reuid', String(uid), '--regid', String(uid), '--clear-groups', '--', join(BIN, verb), ...args];
  return runProgramAsync(SETPRIV, setpriv, { ...opts, cwd: opts.cwd ?? b.dir, env: { ...b.env, ...opts.env } });
}
