import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { loadAdapter } from '../agents/index.js';
import { SubagentError } from '../errors.js';
import { validateName } from '../registry/names.js';
import { createName } from '../registry/store.js';
import { envValue, resolveCwd, resolveRegistry, type Context } from './common.js';
import { checkAdapterCan, launchOutput, launchSupervisor, newRecord, queueTicketFor, storeEnvOf } from './launch.js';

export interface StartOptions extends Context {
  name: string | undefined;
  prompt: Buffer;
  cli?: string | undefined;
  cwdDir?: string | undefined;
  model?: string | undefined;
  variant?: string | undefined;
  agent?: string | undefined;
  files?: string[];
  extraArgs?: string[];
  maxConcurrent?: string | undefined;
}

export const DEFAULT_CLI = 'opencode';

/** start-subagent: validate everything, publish the record, start the supervisor, return at once. */
export async function start(o: StartOptions): Promise<Record<string, unknown>> {
  const env = o.env ?? process.env;
  const callerCwd = o.cwd ?? process.cwd();
  const name = validateName(o.name);
  if (o.prompt.length === 0) throw promptRequired();
  const adapter = await loadAdapter(o.cli ?? envValue(env, 'SUBAGENT_CLI') ?? DEFAULT_CLI);
  const cwd = resolveCwd(o.cwdDir, callerCwd);
  const files = (o.files ?? []).map((f) => resolve(callerCwd, f));
  for (const f of files) {
    if (!existsSync(f)) throw new SubagentError('E_ARG_INVALID', `--file ${f} does not exist`, { file: f, hint: 'give paths of existing files (relative paths resolve against your directory)' });
  }
  checkAdapterCan(adapter, { model: o.model !== undefined, variant: o.variant !== undefined, agent: o.agent !== undefined, files: files.length > 0 }, env);
  // Environment defaults apply only where the CLI can take them; an explicit flag it cannot take is an error (above).
  const model = o.model ?? (adapter.supports.model ? envValue(env, 'SUBAGENT_MODEL', 'OPENCODE_PSA_MODEL') : undefined) ?? null;
  const variant = o.variant ?? (adapter.supports.variant ? envValue(env, 'SUBAGENT_VARIANT', 'OPENCODE_PSA_VARIANT') : undefined) ?? null;
  const registry = resolveRegistry(o);
  const queueTicket = queueTicketFor(registry, o.maxConcurrent, env);
  const record = newRecord({
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
    parent: envValue(env, 'SUBAGENT_PARENT') ?? null,
    promptBytes: o.prompt.length,
    storeEnv: storeEnvOf(adapter, env),
    queueTicket,
  });
  const dir = createName(registry, name, record, o.prompt);
  const launched = launchSupervisor(registry, dir, env, queueTicket);
  return launchOutput(registry, launched, 'new');
}

export function promptRequired(): SubagentError {
  return new SubagentError('E_PROMPT_REQUIRED', 'a non-empty prompt is required', {
    hint: 'give --prompt TEXT, --prompt-file PATH, or --prompt - with the prompt on stdin',
  });
}
