import { realpathSync, statSync } from 'node:fs';
import { loadAdapter } from '../agents/index.js';
import { SubagentError } from '../base/errors.js';
import { validateName } from '../registry/names.js';
import { createRun, latestRun } from '../registry/store.js';
import { observeLatest } from '../runs/observe.js';
import { callerOf, inRegistryOf, placeOf, refuseUntrustedHook, resolveCwd, trustOfPlace, type Context } from './context.js';
import { checkAdapterCan, launchResult, launchSupervisor, newRecord, queueTicketFor, storeEnvOf, type Admission, type StartResult } from './launch.js';
import { promptBytes } from './prompt.js';
import { checkCaps, settleCaps, type CapOptions } from './caps.js';
import { requestedLimit, requestedMemoryFloor } from './settings.js';
import { checkLimitFor, placementFrom, type ExecutorOptions } from './executor.js';
import { watchFields, type WatchOptions } from './run-watch.js';
import { limitPolicy, type LimitOptions } from './on-limit.js';
import { acpSettings, type AcpOptions } from './acp.js';
import { restoreWorktreeCommand } from '../runs/worktree.js';
import type { RunRecord } from '../registry/record.js';
import { afterNames, checkDependencies, engineDependencies, type AfterOptions } from './after.js';

/** With the spend caps (`CapOptions`): each not given is the earlier run's; null drops it. */
export interface ResumeOptions extends Context, ExecutorOptions, WatchOptions, CapOptions, LimitOptions, AfterOptions, Pick<AcpOptions, 'permissions'> {
  /** The run to resume: done, or unknown with its agent dead. */
  name: string | undefined;
  /** Bytes are kept exactly; a string is taken as UTF-8. Empty: E_PROMPT_REQUIRED. */
  prompt: Buffer | string;
  /** Must be the run's own directory, when given (a session belongs to its cwd). */
  cwdDir?: string | undefined;
  /** Default: the run's model. */
  model?: string | undefined;
  /** Default: the run's variant. */
  variant?: string | undefined;
  /** Replaces the agent-CLI arguments stored with the run; null or undefined: repeat them. */
  extraArgs?: string[] | null | undefined;
  /** Sets the registry's concurrency limit (0 removes it); default SUBAGENT_MAX_CONCURRENT. */
  maxConcurrent?: number | undefined;
  /** Sets the registry's free-memory floor in bytes (0 removes it); default SUBAGENT_MIN_FREE_MEMORY. */
  minFreeMemory?: number | undefined;
}

/** What resume resolves to: a start's result with `mode: "resume"`. */
export type ResumeResult = StartResult;

/** resume-subagent: a new run of a finished name, in the same session and cwd. */
export async function resume(o: ResumeOptions): Promise<ResumeResult> {
  const { env, cwd: callerCwd } = callerOf(o);
  const admission = { limit: requestedLimit(o.maxConcurrent, env), floor: requestedMemoryFloor(o.minFreeMemory, env) };
  checkCaps(o);
  const name = validateName(o.name);
  const after = afterNames(o.after);
  const prompt = promptBytes(o.prompt);
  const place = placeOf(o, 'write');
  refuseUntrustedHook(place, o.onEnd);
  const { registry } = place;
  return inRegistryOf(registry, () =>
    resumeIn(o, { registry, name, prompt, admission, env, callerCwd, adopt: place.adopt, after, trusted: trustOfPlace(place).trusted }),
  );
}

/**
 * A revive's resume (lib/commands/revive.ts): `newSession` opens the session anew, as run 1 would, with
 * the run's `files` — the session never began, so the CLI has nothing to resume.
 */
export interface Revival {
  newSession: boolean;
  files: string[];
}

/** A resume's options, checked and resolved at its entrance. */
export interface ResumeSettings {
  registry: string;
  name: string;
  prompt: Buffer;
  admission: Admission;
  env: NodeJS.ProcessEnv;
  callerCwd: string;
  /** Adopts a registry named explicitly, once the run is published (lib/registry/trust.ts). */
  adopt: () => void;
  /** Whether the registry may run code (docs/security.md): an ACP run's own agent command is code its record names. */
  trusted: boolean;
  revival?: Revival;
  /** The names the new run follows (`--after`), checked by resumeIn. */
  after?: string[];
}

/** The latest run of the name, checked resumable: it exists, has ended with its agent gone, and its directory is there (and is `--cwd`, when given). */
export function resumableRun(o: Pick<ResumeOptions, 'cwdDir'>, s: Pick<ResumeSettings, 'registry' | 'name' | 'callerCwd'>): RunRecord {
  const { registry, name, callerCwd } = s;
  const previous = observeLatest(registry, name);
  if (!previous) {
    throw new SubagentError('E_SESSION_NOT_FOUND', `no run named "${name}" was ever started in ${registry}`, {
      name,
      registry,
      hint: 'start it first with start-subagent --name ' + name,
    });
  }
  const last = previous.record;
  if (previous.status === 'scheduled' || previous.status === 'running' || previous.agentAlive) {
    throw busy(name, last.run, previous.agentAlive && previous.status === 'unknown');
  }
  if (o.cwdDir !== undefined) {
    const asked = resolveCwd(o.cwdDir, callerCwd);
    if (asked !== safeRealpath(last.cwd)) {
      throw new SubagentError('E_CWD_MISMATCH', `"${name}" runs in ${last.cwd}, not in ${asked}`, {
        name,
        cwd: last.cwd,
        asked,
        hint: 'a session belongs to its directory: omit --cwd, or start a new name for the other directory',
      });
    }
  }
  checkRunDirectory(name, last);
  return last;
}

export async function resumeIn(o: ResumeOptions, s: ResumeSettings): Promise<ResumeResult> {
  const { registry, name, prompt, admission, env } = s;
  const last = resumableRun(o, s);
  // A revived run that was still waiting for the runs it follows (its supervisor died meanwhile) waits again.
  const waited = s.revival !== undefined && last.agentStartedAt === null ? last.waitingFor : [];
  const after = s.after ?? waited;
  checkDependencies(registry, name, after);
  const adapter = await loadAdapter(last.cli);
  const newSession = s.revival?.newSession === true && adapter.cli !== 'shell';
  if (adapter.cli !== 'shell' && !last.sessionId && !newSession) {
    throw new SubagentError('E_SESSION_NOT_FOUND', `"${name}" has no session id to resume (run ${last.run} never reported one)`, {
      name,
      run: last.run,
      hint: 'the earlier run probably failed before the agent opened a session; start a new name instead',
    });
  }
  const caps = settleCaps(adapter, o, last.caps);
  const acp = acpSettings(o, adapter.cli, env, { last, trusted: s.trusted });
  checkAdapterCan(adapter, { model: o.model !== undefined, variant: o.variant !== undefined }, env, adapter.programOf?.({ acp }));
  // Building the launch is pure: do it once here, so a session id the CLI cannot resume is refused
  // before a run is published, not discovered by the supervisor afterwards.
  const model = o.model ?? last.model;
  const variant = o.variant ?? last.variant;
  const extraArgs = o.extraArgs ?? last.extraArgs;
  const files = s.revival?.files ?? [];
  const sessionId = newSession ? adapter.chooseSessionId() : last.sessionId;
  adapter.launch({ mode: newSession ? 'new' : 'resume', cwd: last.cwd, model, variant, agent: last.agent, files, extraArgs, sessionId, caps, acp });
  const watch = watchFields(o, env, last);
  // A revived run is the same attempt as the one a reboot cut off: its count of attempts after a limit goes on.
  const policy = limitPolicy(o, env, last);
  const onLimit = s.revival && policy && last.onLimit ? { ...policy, retry: last.onLimit.retry } : policy;
  // The run's own executor (and its options), unless this resume names another.
  const placement = placementFrom(o, env, last.executor);
  checkLimitFor(placement, o.maxConcurrent, o.minFreeMemory);
  // The first write: every option and setting was checked above.
  // A run parked for a limit whose supervisor died (a reboot) is revived parked until its reset, with no queue
  // ticket meanwhile: its supervisor takes one at the reset (lib/supervisor/park.ts).
  const parkedUntil = s.revival && last.parkedUntil !== null && Date.parse(last.parkedUntil) > Date.now() ? last.parkedUntil : null;
  const ticket = placement.name === 'local' && parkedUntil === null ? queueTicketFor(registry, admission) : null;
  // A run that follows others asks for its ticket once they are done (lib/supervisor/after.ts).
  const queueTicket = after.length ? null : ticket;
  const fresh = newRecord({
    name,
    run: last.run + 1,
    cli: last.cli,
    cwd: last.cwd,
    model,
    variant,
    agent: last.agent,
    files,
    extraArgs,
    sessionId,
    newSession,
    parent: last.parent,
    depth: last.depth,
    worktree: last.worktree,
    promptBytes: prompt.length,
    // The session lives in the store the earlier runs used: keep it.
    storeEnv: { ...storeEnvOf(adapter, env), ...last.storeEnv },
    queueTicket,
    caps,
    executor: placement,
    ...watch,
    onLimit,
    after,
    afterAny: after.length > 0 && (waited.length > 0 ? last.afterAny : o.afterAny === true),
    acp,
  });
  const record = parkedUntil === null ? fresh : { ...fresh, parkedUntil };
  const run = createRun(registry, name, record, prompt);
  if (run === null) throw busy(name, latestRun(registry, name) ?? last.run + 1, false, true);
  s.adopt();
  const placed = await launchSupervisor(registry, run, env, queueTicket, record, engineDependencies(registry, after, placement));
  return launchResult(registry, record, placed, 'resume');
}

/**
 * A session belongs to its directory: when that is gone (a worktree removed after review, say), the
 * resume is refused before a run is published, with the way to bring the directory back.
 */
function checkRunDirectory(name: string, last: RunRecord): void {
  if (isDirectory(last.cwd)) return;
  const w = last.worktree;
  throw new SubagentError('E_CWD_INVALID', `"${name}" runs in ${last.cwd}, which no longer exists`, {
    name,
    cwd: last.cwd,
    ...(w ? { worktree: w.path, branch: w.branch, restore: restoreWorktreeCommand(w) } : {}),
    hint: w
      ? `its worktree was removed; bring it back on its branch with: ${restoreWorktreeCommand(w)} (if the branch is gone too, start a new name)`
      : 'the session belongs to that directory: recreate it, or start a new name elsewhere',
  });
}

function isDirectory(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}

export function busy(name: string, run: number, orphanAgent: boolean, lostRace = false): SubagentError {
  const why = lostRace
    ? `another resume of "${name}" started run ${run} first`
    : orphanAgent
      ? `run ${run} of "${name}" lost its supervisor but its agent is still alive`
      : `run ${run} of "${name}" is still running`;
  return new SubagentError('E_AGENT_BUSY', why, {
    name,
    run,
    hint: orphanAgent ? `cancel it first: subagent-cancel --name ${name}` : `wait for it: subagent-status --wait-terminal --name ${name}`,
  });
}

function safeRealpath(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return p;
  }
}
