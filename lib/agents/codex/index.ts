import type { AgentAdapter, Message, ParserContext } from '../types.js';
import { launch } from './launch.js';
import { childMessages } from './store.js';
import { parser, verdict, type CodexStreamParser } from './stream.js';
import { storeUsage } from './usage.js';

/**
 * The `codex` CLI (OpenAI Codex 0.169; docs/agents/codex.md): the command line in launch.ts, the
 * `--json` stream and the verdict in stream.ts, the sub-agents' rollouts of its own store in store.ts,
 * the items both of those carry in items.ts, and a run's usage from its rollout as it grows in usage.ts.
 */

/** The adapter, with the parser's Codex extras visible (`state.threadUsage`, `state.turn`, `end()`). */
export interface CodexAdapter extends AgentAdapter {
  parser(onMessage?: (m: Message) => void, context?: ParserContext): CodexStreamParser;
}

export const codex: CodexAdapter = {
  cli: 'codex',
  program: 'codex',
  // --variant is the reasoning effort; there is no per-run agent flag (profiles are config layers:
  // pass `-- -p NAME`), and `-i` takes images only, so --file is refused rather than half-honoured.
  supports: { model: true, variant: true, agent: false, files: false },
  // Codex has no limits of its own and reports no cost. Its stream reports usage only in turn.completed,
  // when the run (one turn) is over, and shows no model turns; but each model response is a usage record
  // in its rollout at once (storeUsage), which the supervisor reads as the run goes: its tokens for
  // --max-tokens, and its count (one a model turn: StoreUsage.turns) for --max-turns.
  caps: { cost: null, tokens: 'stream', turns: 'stream' },
  gracefulSignal: 'SIGINT',
  stream: 'ndjson',
  storeEnvKeys: ['CODEX_HOME', 'HOME'],
  chooseSessionId: () => null,
  launch,
  parser,
  verdict,
  childMessages,
  storeUsage,
};
