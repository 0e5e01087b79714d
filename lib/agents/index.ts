import { SubagentError } from '../base/errors.js';
import type { AgentAdapter } from './types.js';

/**
 * The agent CLIs, by the name `--cli` takes, each with its adapter's loader: a new CLI is one line here.
 * Adapters load lazily: a verb pays only for the CLI it touches.
 */
const loaders = {
  opencode: async () => (await import('./opencode/index.js')).opencode,
  claude: async () => (await import('./claude/index.js')).claude,
  codex: async () => (await import('./codex/index.js')).codex,
  copilot: async () => (await import('./copilot/index.js')).copilot,
  gemini: async () => (await import('./gemini/index.js')).gemini,
  qwen: async () => (await import('./qwen/index.js')).qwen,
  shell: async () => (await import('./shell.js')).shell,
} satisfies Record<string, () => Promise<AgentAdapter>>;

export type CliName = keyof typeof loaders;
/** The names, in the order the loaders are listed (the order errors and help list them in). */
export const CLI_NAMES: readonly CliName[] = Object.freeze(Object.keys(loaders) as CliName[]);

export function checkCliName(cli: string): CliName {
  if (!(CLI_NAMES as readonly string[]).includes(cli)) {
    throw new SubagentError('E_CLI_UNKNOWN', `unknown agent CLI "${cli}"`, { cli, known: CLI_NAMES, hint: `use --cli ${CLI_NAMES.join('|')}` });
  }
  return cli as CliName;
}

export async function loadAdapter(cli: string): Promise<AgentAdapter> {
  return loaders[checkCliName(cli)]();
}
