import type { AgentAdapter, RunOptions } from '../types.js';
import { launch } from './launch.js';
import { childMessages } from './store.js';
import { CodexRun } from './stream.js';
import { storeUsage } from './usage.js';
import { codexInteractive } from './interactive.js';

/**
 * The `codex` CLI (OpenAI Codex 0.169; docs/agents/codex.md): the command line in launch.ts, its
 * runs (the `--json` stream, the verdict) in stream.ts, the sub-agents' rollouts of its own store in store.ts,
 * the items both of those carry in items.ts, and a run's usage from its rollout as it grows in usage.ts.
 */

/** The adapter, with its runs' Codex extras visible (`state.threadUsage`, `state.turn`). */
export interface CodexAdapter extends AgentAdapter {
  open(run?: RunOptions): CodexRun;
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
  open: (run) => new CodexRun(run, storeUsage),
  childMessages,
  interactive: codexInteractive,
};
