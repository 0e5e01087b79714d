/**
 * The agent CLIs, by the name `--cli` takes, in the order errors and help list them. Each has its
 * adapter's loader in lib/agents/index.ts (whose type requires one for every name, and no other). Apart
 * from the loaders so that the interface (types.ts) can name them without importing the adapters.
 */
export const CLI_NAMES = ['opencode', 'claude', 'codex', 'copilot', 'gemini', 'qwen', 'acp', 'shell'] as const;
export type CliName = (typeof CLI_NAMES)[number];
