import type { AgentAdapter, RunOptions } from '../types.js';
import { copilotInteractive } from './interactive.js';
import { chooseSessionId, launch } from './launch.js';
import { childMessages, STORE_ENV_KEYS } from './store.js';
import { CopilotRun } from './stream.js';
import { storeUsage } from './usage.js';

/**
 * GitHub Copilot CLI (`copilot`, `@github/copilot`, measured with 1.0.102; see docs/agents/copilot.md):
 * the command line in launch.ts, its runs (the `--output-format json` stream, the verdict) in stream.ts, the
 * sessions' event logs of its own store in store.ts, a run's token usage from its session's log in usage.ts,
 * its interactive mode for subagent-attach in interactive.ts.
 */
/** The adapter, with its runs' Copilot extras visible (`ending`: how the stream says the run ended). */
export interface CopilotAdapter extends AgentAdapter {
  open(run?: RunOptions): CopilotRun;
}

export const copilot: CopilotAdapter = {
  cli: 'copilot',
  program: 'copilot',
  // --variant is --reasoning-effort and --agent a custom agent (~/.copilot/agents, .github/agents);
  // --attachment takes images and PDFs only, so --file is refused rather than half-honoured.
  supports: { model: true, variant: true, agent: true, files: false },
  // No limits of its own. No cost anywhere (BYOK); no tokens in its stream, but each model call is a
  // usage record in its store (storeUsage), which the supervisor reads as the run goes. Its turns are
  // events (assistant.turn_start), which the supervisor counts.
  caps: { cost: null, tokens: 'stream', turns: 'stream' },
  // The npm `copilot` is a loader that runs the native binary and dies on any signal without passing
  // it on. With SIGTERM, cancel signals every process of the run: the native binary aborts its turn and
  // ends its tools (it treats SIGTERM as SIGINT), and each tool gets the signal too.
  gracefulSignal: 'SIGTERM',
  stream: 'ndjson',
  storeEnvKeys: STORE_ENV_KEYS,
  chooseSessionId,
  launch,
  open: (run) => new CopilotRun(run, storeUsage),
  childMessages,
  interactive: copilotInteractive,
};
