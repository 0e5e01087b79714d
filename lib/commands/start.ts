import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { loadAdapter } from '../agents/index.js';
import { SubagentError } from '../base/errors.js';
import { validateName } from '../registry/names.js';
import { createName, latestRun, type Published } from '../registry/store.js';
import type { RunRecord } from '../registry/record.js';
import { locateRegistry } from '../registry/locate.js';
import { observeLatest } from '../runs/observe.js';
import { addWorktree, discardFreshWorktree, type Worktree } from '../runs/worktree.js';
import { envValue, resolveCwd, resolveRegistry, type Context } from './common.js';
import { checkAdapterCan, launchOutput, launchSupervisor, newRecord, queueTicketFor, requestedLimit, storeEnvOf } from './launch.js';

export interface StartOptions extends Context {
  name: string | undefined;
  /** Bytes are kept exactly; a string is taken as UTF-8. */
  prompt: Buffer | string;
  cli?: string | undefined;
  cwdDir?: string | undefined;
  model?: string | undefined;
  variant?: string | undefined;
  agent?: string | undefined;
  files?: string[];
  extraArgs?: string[];
  maxConcurrent?: string | undefined;
  worktree?: boolean;
  base?: string | undefined;
}

export const DEFAULT_CLI = 'opencode';
export const DEFAULT_MAX_DEPTH = 3;

/**
 * Nested orchestration: a start from inside a run (SUBAGENT_PARENT set by its supervisor) records the
 * parent and sits one level deeper; past SUBAGENT_MAX_DEPTH it is refused. The parent's depth comes
 * from SUBAGENT_DEPTH, which the supervisor exports next to SUBAGENT_PARENT, so it needs no read; only
 * without it (a run whose supervisor predates it) is the parent's record read. A depth that cannot be
 * known counts as the limit reached: the limit fails closed.
 */
function nesting(env: NodeJS.ProcessEnv): { parent: string | null; depth: number } {
  const parent = envValue(env, 'SUBAGENT_PARENT') ?? null;
  if (parent === null) return { parent: null, depth: 1 };
  const raw = envValue(env, 'SUBAGENT_MAX_DEPTH');
  const max = raw !== undefined && /^[0-9]+$/.test(raw) ? Number(raw) : DEFAULT_MAX_DEPTH;
  const parentDepth = parentDepthOf(env, parent);
  if (parentDepth === null) {
    // details.depth stays a number (the first depth past the limit); depthKnown says it was not read.
    throw new SubagentError('E_DEPTH_LIMIT', `starting a sub-agent from "${parent}": its nesting depth cannot be told (SUBAGENT_DEPTH is missing or not a number, and the parent's record cannot be read), so the limit counts as reached`, {
      parent,
      depth: Math.max(2, max + 1),
      max,
      depthKnown: false,
      hint: 'start it from the run itself (its environment holds SUBAGENT_DEPTH), or unset SUBAGENT_PARENT for a top-level run',
    });
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
  const exported = envValue(env, 'SUBAGENT_DEPTH');
  if (exported !== undefined) return /^[1-9][0-9]{0,5}$/.test(exported) ? Number(exported) : null;
  try {
    const home = envValue(env, 'SUBAGENT_DIR');
    const depth = home ? observeLatest(locateRegistry(home, env).path, validateName(parent))?.record.depth : undefined;
    return typeof depth === 'number' && Number.isInteger(depth) && depth >= 1 ? depth : null;
  } catch {
    return null;
  }
}

/** start-subagent: validate everything, publish the record, start the supervisor, return at once. */
export async function start(o: StartOptions): Promise<Record<string, unknown>> {
  const env = o.env ?? process.env;
  const callerCwd = o.cwd ?? process.cwd();
  const limit = requestedLimit(o.maxConcurrent, env);
  const name = validateName(o.name);
  const prompt = typeof o.prompt === 'string' ? Buffer.from(o.prompt, 'utf8') : o.prompt;
  if (prompt.length === 0) throw promptRequired();
  const adapter = await loadAdapter(o.cli ?? envValue(env, 'SUBAGENT_CLI') ?? DEFAULT_CLI);
  let cwd = resolveCwd(o.cwdDir, callerCwd);
  const files = (o.files ?? []).map((f) => resolve(callerCwd, f));
  for (const f of files) {
    if (!existsSync(f)) throw new SubagentError('E_ARG_INVALID', `--file ${f} does not exist`, { file: f, hint: 'give paths of existing files (relative paths resolve against your directory)' });
  }
  if (o.base !== undefined && !o.worktree) throw new SubagentError('E_ARG_INVALID', '--base needs --worktree', { hint: 'add --worktree, or drop --base' });
  checkAdapterCan(adapter, { model: o.model !== undefined, variant: o.variant !== undefined, agent: o.agent !== undefined, files: files.length > 0 }, env);
  const { parent, depth } = nesting(env);
  // Environment defaults apply only where the CLI can take them; an explicit flag it cannot take is an error (above).
  const model = o.model ?? (adapter.supports.model ? envValue(env, 'SUBAGENT_MODEL', 'OPENCODE_PSA_MODEL') : undefined) ?? null;
  const variant = o.variant ?? (adapter.supports.variant ? envValue(env, 'SUBAGENT_VARIANT', 'OPENCODE_PSA_VARIANT') : undefined) ?? null;
  const registry = resolveRegistry(o);
  // Writes, in this order: the limit (and ticket), the worktree, the name. A failure after the
  // worktree is made removes it again, so a refused start leaves no branch that blocks the name.
  const queueTicket = queueTicketFor(registry, limit);
  let worktree: Worktree | null = null;
  if (o.worktree) {
    if (latestRun(registry, name) !== null) throw nameExists(registry, name);
    ({ worktree, cwd } = addWorktree(registry, name, cwd, o.base));
  }
  let run: Published;
  let record: RunRecord;
  try {
    record = newRecord({
      name,
      run: 1,
      cli: adapter.cli,
      cwd,
      model,
      variant,
      agent: o.agent ?? null,
      files,
      extraArgs: o.extraArgs ?? [],
      sessionId: adapter.chooseSessionId(),
      parent,
      depth,
      worktree,
      promptBytes: prompt.length,
      storeEnv: storeEnvOf(adapter, env),
      queueTicket,
    });
    run = createName(registry, name, record, prompt);
  } catch (err) {
    if (worktree) discardFreshWorktree(worktree);
    throw err;
  }
  const pid = await launchSupervisor(registry, run, env, queueTicket);
  return launchOutput(registry, record, pid, 'new');
}

function nameExists(registry: string, name: string): SubagentError {
  return new SubagentError('E_NAME_EXISTS', `a run named "${name}" already exists`, { name, registry, hint: 'choose another name, or resume it with resume-subagent' });
}

export function promptRequired(): SubagentError {
  return new SubagentError('E_PROMPT_REQUIRED', 'a non-empty prompt is required', {
    hint: 'give --prompt TEXT, --prompt-file PATH, or --prompt - with the prompt on stdin',
  });
}
