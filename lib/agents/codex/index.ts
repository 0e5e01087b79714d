import type { AgentAdapter, Message, ParserContext } from '../types.js';
import { launch } from './launch.js';
import { childMessages } from './store.js';
import { parser, verdict, type CodexStreamParser } from './stream.js';

/**
 * The `codex` CLI (OpenAI Codex 0.169; docs/agents/codex.md): the command line in launch.ts, the
 * `--json` stream and the verdict in stream.ts, the sub-agents' rollouts of its own store in store.ts,
 * and the items both of those carry in items.ts.
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
  // No caps: Codex has no limits of its own, reports no cost, shows no model turns, and reports its
  // usage only in turn.completed, when the run (one turn) is already over.
  caps: { cost: null, tokens: null, turns: null },
  gracefulSignal: 'SIGINT',
  stream: 'ndjson',
  storeEnvKeys: ['CODEX_HOME', 'HOME'],
  chooseSessionId: () => null,
  launch,
  parser,
  verdict,
  childMessages,
};
