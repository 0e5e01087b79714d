/**
 * Running a verb as another user (a second uid), the way an attacker or a neighbour on a shared
 * machine would: `setpriv` drops to the uid and gid with no supplementary groups. Needs root and
 * setpriv (util-linux); `secondUid` says why not when they are missing.
 */
import { chownSync } from 'node:fs';
import { join } from 'node:path';
import type { Box } from './box.js';
import { works } from './machine.js';
import { BIN } from './paths.js';
import { runProgramAsync, type RunOpts, type RunOut, type Verb } from './run.js';

/** A uid (and gid) no account uses. */
export const OTHER_UID = 4242;

/** Why a second uid cannot be had here, or null when it can. */
export function secondUidMissing(): string | null {
  if (process.getuid?.() !== 0) return 'a second uid needs root (setpriv)';
  if (!works('setpriv', ['--version'])) return 'setpriv (util-linux) is not installed';
  return null;
}

/** Hands the box (its HOME and registry) to `uid`, so that the verbs it runs own it. */
export function giveBox(b: Box, uid = OTHER_UID): void {
  chownSync(b.dir, uid, uid);
}

/** A verb of the box run as `uid`, without blocking the event loop. */
export function runAs(b: Box, verb: Verb, args: string[], opts: RunOpts = {}, uid = OTHER_UID): Promise<RunOut> {
  const setpriv = ['--reuid', String(uid), '--regid', String(uid), '--clear-groups', '--', join(BIN, verb), ...args];
  return runProgramAsync('setpriv', setpriv, { ...opts, cwd: opts.cwd ?? b.dir, env: { ...b.env, ...opts.env } });
}
