import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { loadAdapter } from '../agents/index.js';
import type { AgentAdapter } from '../agents/types.js';
import { SubagentError } from '../base/errors.js';
import { nameExists, validateName } from '../registry/names.js';
import { createName, latestRun, type Published } from '../registry/store.js';
import type { Caps, Placement, RunRecord } from '../registry/record.js';
import { locateRegistry } from '../registry/locate.js';
import { observeLatest } from '../runs/observe.js';
import { addWorktree, discardFreshWorktree, type Worktree } from '../runs/worktree.js';
import { callerOf, inRegistryOf, placeOf, refuseUntrustedHook, resolveCwd, type Context } from './context.js';
import { promptBytes } from './prompt.js';
import { DEFAULT_CLI, fromEnv, maxDepth, requestedLimit, requestedMemoryFloor } from './settings.js';
import { checkCaps, settleCaps, type CapOptions } from './caps.js';
import { checkLimitFor, placementFrom, type ExecutorOptions } from './executor.js';
import { watchFields, type WatchFields, type WatchOptions } from './run-watch.js';
import { limitPolicy, type LimitOptions } from './on-limit.js';
import { afterNames, checkDependencies, engineDependencies, type AfterOptions } from './after.js';
import type { AcpSettings, LimitPolicy } from '../registry/record.js';
import { acpSettings, type AcpOptions } from './acp.js';
import { checkAdapterCan, launchResult, launchSupervisor, newRecord, queueTicketFor, storeEnvOf, type Admission, type StartResult } from './launch.js';

export type { StartResult } from './launch.js';

/** With the spend caps (`CapOptions`: `maxCostUsd`, `maxTokens`, `maxTurns`). */
export interface StartOptions extends Context, ExecutorOptions, WatchOptions, CapOptions, LimitOptions, AfterOptions, AcpOptions {
  /** Required ([name rule](docs/contract.md#names)); undefined: E_NAME_REQUIRED. */
  name: string | undefined;
  /** Bytes are kept exactly; a string is taken as UTF-8. Empty: E_PROMPT_REQUIRED. */
  prompt: Buffer | string;
  /** opencode, claude, codex, shell; default SUBAGENT_CLI, else opencode. */
  cli?: string | undefined;
  /** The directory the agent runs in (relative: against `cwd`); default `cwd`. */
  cwdDir?: string | undefined;
  /** Default SUBAGENT_MODEL, for CLIs that take a model. */
  model?: string | undefined;
  /** Default SUBAGENT_VARIANT, for CLIs that take one. */
  variant?: string | undefined;
  /** The CLI's own named agent. */
  agent?: string | undefined;
  /** Files to attach (relative: against `cwd`). */
  files?: string[] | undefined;
  /** Appended to the agent CLI's command line, and again on every resume. */
  extraArgs?: string[] | undefined;
  /** Sets the registry's concurrency limit (0 removes it); default SUBAGENT_MAX_CONCURRENT. */
  maxConcurrent?: number | undefined;
  /** Sets the registry's free-memory floor in bytes (0 removes it); default SUBAGENT_MIN_FREE_MEMORY. */
  minFreeMemory?: number | undefined;
  /** Run in a new git worktree on branch subagents/<name>. */
  worktree?: boolean | undefined;
  /** The commit the worktree starts from (needs `worktree`). */
  base?: string | undefined;
}

/** Everything a start needs, resolved from its options and the environment before anything is written. */
interface StartSettings {
  name: string;
  prompt: Buffer;
  adapter: AgentAdapter;
  cwd: string;
  files: string[];
  model: string | null;
  variant: string | null;
  admission: Admission;
  placement: Placement;
  parent: string | null;
  depth: number;
  caps: Required<Caps>;
  env: NodeJS.ProcessEnv;
  watch: WatchFields;
  onLimit: LimitPolicy | null;
  after: string[];
  acp: AcpSettings | null;
}

/**
 * Nested orchestration: a start from inside a run (SUBAGENT_PARENT set by its supervisor) records the
 * parent and sits one level deeper; past SUBAGENT_MAX_DEPTH it is refused. The parent's depth comes
 * from SUBAGENT_DEPTH, which the supervisor exports next to SUBAGENT_PARENT, so it needs no read; only
 * without it (a run whose supervisor predates it) is the parent's record read. A depth that cannot be
 * known counts as the limit reached: the limit fails closed.
 */
function nesting(env: NodeJS.ProcessEnv, max: number): { parent: string | null; depth: number } {
  const parent = fromEnv(env, 'parent') ?? null;
  if (parent === null) return { parent: null, depth: 1 };
  const parentDepth = parentDepthOf(env, parent);
  if (parentDepth === null) {
    // details.depth stays a number (the first depth past the limit); depthKnown says it was not read.
    throw new SubagentError(
      'E_DEPTH_LIMIT',
      `starting a sub-agent from "${parent}": its nesting depth cannot be told (SUBAGENT_DEPTH is missing or not a number, and the parent's record cannot be read), so the limit counts as reached`,
      {
        parent,
        depth: Math.max(2, max + 1),
        max,
        depthKnown: false,
        hint: 'start it from the run itself (its environment holds SUBAGENT_DEPTH), or unset SUBAGENT_PARENT for a top-level run',
      },
    );
  }
  const depth = parentDepth + 1;
  if (depth > max) {
    throw new SubagentError('E_DEPTH_LIMIT', `starting a sub-agent from "${parent}" would nest ${depth} levels deep; the limit is ${max}`, {
      parent,
      depth,
      max,
      hint: 'do the work in this run instead, or raise SUBAGENT_MAX_DEPTH',
    });
  }
  return { parent, depth };
}

/** The depth of the run that is starting a sub-agent, or null when it cannot be told. */
function parentDepthOf(env: NodeJS.ProcessEnv, parent: string): number | null {
  const exported = fromEnv(env, 'depth');
  if (exported !== undefined) return /^[1-9][0-9]{0,5}$/.test(exported) ? Number(exported) : null;
  try {
    // The parent's registry is the one its supervisor exported, whatever --registry this start was given.
    const home = fromEnv(env, 'dir');
    const depth = home ? observeLatest(locateRegistry(home, env).path, validateName(parent))?.record.depth : undefined;
    return typeof depth === 'number' && Number.isInteger(depth) && depth >= 1 ? depth : null;
  } catch {
    return null;
  }
}

/** Checks every option and fills in the environment's defaults: nothing is written yet. */
async function settle(o: StartOptions): Promise<StartSettings> {
  const { env, cwd: callerCwd } = callerOf(o);
  const admission = { limit: requestedLimit(o.maxConcurrent, env), floor: requestedMemoryFloor(o.minFreeMemory, env) };
  // Read even for a top-level run: a bad value is refused where its caller sees it, not first in a nested start.
  const max = maxDepth(env);
  checkCaps(o);
  const watch = watchFields(o, env);
  const onLimit = limitPolicy(o, env);
  const name = validateName(o.name);
  const after = afterNames(o.after);
  const placement = placementFrom(o, env);
  checkLimitFor(placement, o.maxConcurrent, o.minFreeMemory);
  const prompt = promptBytes(o.prompt);
  const adapter = await loadAdapter(o.cli ?? fromEnv(env, 'cli') ?? DEFAULT_CLI);
  const cwd = resolveCwd(o.cwdDir, callerCwd);
  const files = (o.files ?? []).map((f) => resolve(callerCwd, f));
  for (const f of files) {
    if (!existsSync(f))
      throw new SubagentError('E_ARG_INVALID', `--file ${f} does not exist`, {
        file: f,
        hint: 'give paths of existing files (relative paths resolve against your directory)',
      });
  }
  if (o.base !== undefined && !o.worktree) throw new SubagentError('E_ARG_INVALID', '--base needs --worktree', { hint: 'add --worktree, or drop --base' });
  const caps = settleCaps(adapter, o);
  const acp = acpSettings(o, adapter.cli, env);
  const given = { model: o.model !== undefined, variant: o.variant !== undefined, agent: o.agent !== undefined, files: files.length > 0 };
  checkAdapterCan(adapter, given, env, adapter.programOf?.({ acp }));
  const { parent, depth } = nesting(env, max);
  // Environment defaults apply only where the CLI can take them; an explicit flag it cannot take is an error (above).
  const model = o.model ?? (adapter.supports.model ? fromEnv(env, 'model') : undefined) ?? null;
  const variant = o.variant ?? (adapter.supports.variant ? fromEnv(env, 'variant') : undefined) ?? null;
  return { name, prompt, adapter, cwd, files, model, variant, admission, placement, parent, depth, caps, env, watch, onLimit, after, acp };
}

/** start-subagent: validate everything, publish the record, start the supervisor, return at once. */
export async function start(o: StartOptions): Promise<StartResult> {
  const s = await settle(o);
  const place = placeOf(o, 'create');
  refuseUntrustedHook(place, s.watch.onEnd);
  const { registry } = place;
  return inRegistryOf(registry, async () => {
    checkDependencies(registry, s.name, s.after);
    // Writes, in this order: the limit (and ticket), the worktree, the name. A failure after the
    // worktree is made removes it again, so a refused start leaves no branch that blocks the name.
    // The registry's limit counts this machine's runs only (lib/commands/executor.ts).
    // A run that follows others asks for its ticket once they are done (lib/supervisor/after.ts): waiting,
    // it must not hold up the queue.
    const ticket = s.placement.name === 'local' ? queueTicketFor(registry, s.admission) : null;
    const queueTicket = s.after.length ? null : ticket;
    let cwd = s.cwd;
    let worktree: Worktree | null = null;
    if (o.worktree) {
      if (latestRun(registry, s.name) !== null) throw nameExists(s.name, registry);
      ({ worktree, cwd } = addWorktree(registry, s.name, cwd, o.base));
    }
    let run: Published;
    let record: RunRecord;
    try {
      record = newRecord({
        name: s.name,
        run: 1,
        cli: s.adapter.cli,
        cwd,
        model: s.model,
        variant: s.variant,
        agent: o.agent ?? null,
        files: s.files,
        extraArgs: o.extraArgs ?? [],
        sessionId: s.adapter.chooseSessionId(),
        parent: s.parent,
        depth: s.depth,
        worktree,
        promptBytes: s.prompt.length,
        storeEnv: storeEnvOf(s.adapter, s.env),
        queueTicket,
        caps: s.caps,
        executor: s.placement,
        ...s.watch,
        onLimit: s.onLimit,
        after: s.after,
        afterAny: s.after.length > 0 && o.afterAny === true,
        acp: s.acp,
      });
      run = createName(registry, s.name, record, s.prompt);
      place.adopt();
    } catch (err) {
      if (worktree) discardFreshWorktree(worktree);
      throw err;
    }
    const placed = await launchSupervisor(registry, run, s.env, queueTicket, record, engineDependencies(registry, s.after, s.placement));
    return launchResult(registry, record, placed, 'new');
  });
}
