import type { AgentAdapter } from '../types.js';
import { chooseSessionId, launch } from './launch.js';
import { childMessages } from './store.js';
import { openRun } from './stream.js';
import { claudeInteractive } from './interactive.js';

/**
 * The Claude Code versions this adapter knows: measured (../shared/AGENT-CLIS.md), pinned in
 * test/clis/pins.json and proven end to end. 2.1.197 runs sub-agents in the foreground; 2.1.331 in the
 * background by default (the run's answer is then the turn after they reported). A later version is
 * driven the same way; `make test-latest` proves it before it joins this list.
 */
export const CLAUDE_KNOWN_VERSIONS = ['2.1.197', '2.1.331'] as const;

/**
 * Claude Code (`claude`, the versions above; see docs/agents/claude.md): the command line in
 * launch.ts, its runs in stream.ts (the stream-json family of lib/agents/shared/stream-json.ts, which
 * Qwen Code speaks too), the sub-agents' transcripts of its own store in store.ts.
 */
export const claude: AgentAdapter = {
  cli: 'claude',
  program: 'claude',
  supports: { model: true, variant: true, agent: true, files: false },
  // Cost and turns are its own limits; tokens the supervisor holds to the usage its assistant lines report.
  caps: { cost: 'native', tokens: 'stream', turns: 'native' },
  gracefulSignal: 'SIGINT',
  stream: 'ndjson',
  storeEnvKeys: ['HOME', 'CLAUDE_CONFIG_DIR'],
  chooseSessionId,
  launch,
  open: openRun,
  childMessages,
  interactive: claudeInteractive,
};
