import { SubagentError } from '../base/errors.js';
import type { AgentAdapter, CliName } from './types.js';
import { CLI_NAMES } from './types.js';

/** Adapters load lazily: a verb pays only for the CLI it touches. */
const loaders: Record<CliName, () => Promise<AgentAdapter>> = {
  shell: async () => (await import('./shell.js')).shell,
  opencode: async () => (await import('./opencode/index.js')).opencode,
  claude: async () => (await import('./claude/index.js')).claude,
  codex: async () => (await import('./codex/index.js')).codex,
  copilot: async () => (await import('./copilot/index.js')).copilot,
  qwen: async () => (await import('./qwen/index.js')).qwen,
  gemini: async () => (await import('./gemini/index.js')).gemini,
};

export function checkCliName(cli: string): CliName {
  if (!(CLI_NAMES as readonly string[]).includes(cli)) {
    throw new SubagentError('E_CLI_UNKNOWN', `unknown agent CLI "${cli}"`, { cli, known: CLI_NAMES, hint: `use --cli ${CLI_NAMES.join('|')}` });
  }
  return cli as CliName;
}

export async function loadAdapter(cli: string): Promise<AgentAdapter> {
  return loaders[checkCliName(cli)]();
}
