import { listFollowUps } from '../registry/follow-ups.js';
import type { ChildProcess } from 'node:child_process';
import { accessSync, closeSync, constants, openSync, statSync, writeSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { TEST_KNOBS } from '../base/checkpoint.js';
import { nowIso } from '../base/time.js';
import { childProcess } from '../proc/child-process.js';
import { PRIVATE_FILE } from '../registry/private.js';
import { resetsAtOf } from '../registry/record.js';
import { trustOf, unsafeReason, type Found } from '../registry/trust.js';
import { entryOf } from './entry.js';
import type { Observation } from './observe.js';
import { usageOfName } from './usage.js';

/**
 * End hooks (docs/hooks.md): when a run reaches `done` or `unknown`, its own `--on-end` command and the
 * registry's executable `hooks/on-end` each run once, detached, with the run as `status` reports it on
 * stdin. Fired only by whoever records an end (the supervisor, or a cancel that recorded it) and, for a
 * run whose supervisor died (`unknown`), only by `subagent-status --announce` — never by merely reading
 * a run — and only from a trusted registry, along paths only its owner can write (docs/security.md).
 * `on-end.json`, created with O_EXCL, makes it exactly once.
 */

export const HOOK_FILES = {
  /** The claim, and the input every hook reads on stdin: the run's status entry as JSON. */
  input: 'on-end.json',
  /** What the run's own --on-end printed. */
  runLog: 'on-end.log',
  /** What the registry's hooks/on-end printed for this run. */
  registryLog: 'registry-on-end.log',
} as const;

/** The registry's hook for every run: `<registry>/hooks/on-end`, when it is an executable file. */
export const REGISTRY_HOOK = join('hooks', 'on-end');

/**
 * The hook's keeper, in the hook's own session and process group (it is started with setsid): a
 * watchdog that ends the whole group after the timeout (TERM, KILL 2 s later), the hook with the input
 * as stdin, and when the hook exits its status in the log and an end to whatever it left in its group.
 * $1 timeout in seconds, $2 the input file, $3 the command.
 */
const KEEPER = `( trap '' TERM; sleep "$1"; printf '[subagents] still running after %s s: stopped (TERM, then KILL 2 s later)\\n' "$1"; kill -s TERM 0; sleep 2; kill -s KILL 0 ) &
/bin/sh -c "$3" < "$2" &
wait $!
printf '[subagents] exited with status %s\\n' "$?"
kill -s KILL 0`;

/** Variables of the noticing process that describe a run of its own, not the one that ended. */
const NOT_HANDED_ON = ['SUBAGENT_RUN_ID', 'SUBAGENT_PARENT', 'SUBAGENT_DEPTH', ...TEST_KNOBS];

/**
 * Fires the end hooks of a run seen `done` or `unknown`, unless they were fired already. Never throws
 * and never waits: a hook's trouble is in its log, never the caller's. Returns the hooks' keepers,
 * unref'd: a caller whose end would end them too (a supervisor inside a job, whose processes the job
 * engine kills when it exits) refs them to stay until they are done.
 */
export function announceEnd(o: Observation, found: Found, report: (why: string) => void = () => undefined): ChildProcess[] {
  const keepers: ChildProcess[] = [];
  if (o.status !== 'done' && o.status !== 'unknown') return keepers;
  try {
    const registry = dirname(dirname(dirname(o.dir)));
    const r = o.record;
    const hooks: Array<{ command: string; log: string }> = [];
    if (typeof r.onEnd === 'string' && r.onEnd !== '') hooks.push({ command: r.onEnd, log: HOOK_FILES.runLog });
    const shared = join(registry, REGISTRY_HOOK);
    const hasShared = isExecutableFile(shared);
    if (hooks.length === 0 && !hasShared) return keepers;
    const refused = refusal(registry, o.dir, found);
    if (refused) {
      report(`the end hooks of ${r.name} (run ${r.run}) were not run: ${refused}`);
      return keepers;
    }
    const sharedUnsafe = hasShared ? registryHookUnsafe(registry) : null;
    if (sharedUnsafe) report(`${shared} was not run: ${sharedUnsafe}`);
    else if (hasShared) hooks.push({ command: quote(shared), log: HOOK_FILES.registryLog });
    if (hooks.length === 0) return keepers;
    const input = join(o.dir, HOOK_FILES.input);
    let fd: number;
    try {
      fd = openSync(input, 'wx', PRIVATE_FILE);
    } catch {
      return keepers; // fired already (or the run's directory cannot be written: then nobody can)
    }
    try {
      const entry = entryOf(o, { usageTotal: usageOfName(registry, r), queued: false, queuePosition: null, queuedPrompts: listFollowUps(registry, r.name) });
      writeSync(fd, JSON.stringify(entry) + '\n');
    } finally {
      closeSync(fd);
    }
    const env: NodeJS.ProcessEnv = { ...process.env };
    for (const k of NOT_HANDED_ON) delete env[k];
    Object.assign(env, {
      SUBAGENT_NAME: r.name,
      SUBAGENT_STATUS: o.status,
      SUBAGENT_OUTCOME: o.status === 'done' ? (r.outcome ?? '') : '',
      SUBAGENT_REASON: o.status === 'done' ? (r.reason ?? '') : '',
      // When a rate-limit resets, for a hook that would start the run again then; empty when unknown.
      SUBAGENT_RESETS_AT: resetsAtOf(r) ?? '',
      SUBAGENT_RUN: String(r.run),
      SUBAGENT_DIR: registry,
      SUBAGENT_RUN_DIR: o.dir,
      SUBAGENT_HOOK_INPUT: input,
    });
    const timeout = String(r.hookTimeoutSec);
    const cwd = isDirectory(r.cwd) ? r.cwd : o.dir;
    for (const h of hooks) keepers.push(start(h.command, join(o.dir, h.log), [timeout, input], cwd, env));
  } catch {
    /* a hook never changes what the caller does */
  }
  return keepers;
}

function start(command: string, logPath: string, args: string[], cwd: string, env: NodeJS.ProcessEnv): ChildProcess {
  const log = openSync(logPath, 'a', PRIVATE_FILE);
  try {
    writeSync(log, `[subagents] ${nowIso()} on-end: ${command}\n`);
    const child = childProcess().spawn('/bin/sh', ['-c', KEEPER, 'subagents-on-end', ...args, command], {
      cwd,
      env,
      stdio: ['ignore', log, log],
      detached: true,
    });
    child.on('error', () => undefined);
    child.unref();
    return child;
  } finally {
    closeSync(log);
  }
}

/**
 * Why no hook of this run may run, or null: the registry is not trusted, or a directory on the way to
 * the run's (agents/, its name, the run) is a symlink, another user's, or writable by others. Checked
 * only here, when something is about to run: a listing pays nothing for it.
 */
function refusal(registry: string, dir: string, found: Found): string | null {
  const trust = trustOf(registry, found);
  if (!trust.trusted) return `${trust.reason} (${trust.hint})`;
  const uid = process.getuid?.();
  if (uid === undefined) return null;
  for (const p of [join(registry, 'agents'), dirname(dir), dir]) {
    const why = unsafeReason(p, 'dir', uid);
    if (why) return why;
  }
  return null;
}

/** The registry's hook runs only when it and hooks/ are the owner's own, and only the owner may write them (a symlink is not followed). */
function registryHookUnsafe(registry: string): string | null {
  const uid = process.getuid?.();
  if (uid === undefined) return null;
  return unsafeReason(join(registry, 'hooks'), 'dir', uid) ?? unsafeReason(join(registry, REGISTRY_HOOK), 'file', uid);
}

function isExecutableFile(path: string): boolean {
  try {
    if (!statSync(path).isFile()) return false;
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/** A path as one word of /bin/sh. */
function quote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}
