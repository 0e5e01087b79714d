import type { AgentAdapter } from '../types.js';
import { chooseSessionId, launch } from './launch.js';
import { childMessages } from './store.js';
import { streamJsonParser, streamJsonVerdict, type StreamJsonParser } from './stream.js';

/**
 * Claude Code (`claude`, measured with 2.1.197; see docs/agents/claude.md): the command line in
 * launch.ts, the stream-json parser and verdict in stream.ts (shareable with other stream-json CLIs),
 * the sub-agents' transcripts of its own store in store.ts.
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
  parser: (onMessage): StreamJsonParser => streamJsonParser(onMessage, { cli: 'claude' }),
  verdict: (exit, state) => streamJsonVerdict('claude', exit, state),
  childMessages,
};
