import { SubagentError } from '../base/errors.js';
import { CLI_NAMES, type CliName } from './names.js';
import type { AgentAdapter } from './types.js';

export { CLI_NAMES, type CliName } from './names.js';

/**
 * Each agent CLI's adapter, by its name (lib/agents/names.ts): a new CLI is its name there and one line
 * here. Adapters load lazily: a verb pays only for the CLI it touches.
 */
const loaders: Record<CliName, () => Promise<AgentAdapter>> = {
  opencode: async () => (await import('./opencode/index.js')).opencode,
  claude: async () => (await import('./claude/index.js')).claude,
  codex: async () => (await import('./codex/index.js')).codex,
  copilot: async () => (await import('./copilot/index.js')).copilot,
  gemini: async () => (await import('./gemini/index.js')).gemini,
  qwen: async () => (await import('./qwen/index.js')).qwen,
  acp: async () => (await import('./acp/index.js')).acp,
  shell: async () => (await import('./shell.js')).shell,
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
