import type { AgentAdapter, RunOptions } from '../types.js';
import { ChildSettler } from './children.js';
import { geminiInteractive } from './interactive.js';
import { chooseSessionId, launch } from './launch.js';
import { childMessages, STORE_ENV_KEYS, tidySession } from './store.js';
import { GeminiRun } from './stream.js';
import { storeUsage } from './usage.js';

/**
 * The Gemini CLI (`gemini -o stream-json`, measured with 0.61.0; see docs/agents/gemini.md): the command
 * line in launch.ts, its runs (the stream, the verdict) in stream.ts, the sub-agents' chat files of its own
 * store in store.ts, how its children really ended (the store's word over the stream's) in children.ts,
 * the tool calls both of those carry in tools.ts, the run's usage as it goes, from its chat, in usage.ts, and
 * its interactive mode (subagent-attach) in interactive.ts.
 */

/** The adapter, with its runs' Gemini extras visible (`state.result`, `state.lastError`). */
export interface GeminiAdapter extends AgentAdapter {
  open(run?: RunOptions): GeminiRun;
}

export const gemini: GeminiAdapter = {
  cli: 'gemini',
  program: 'gemini',
  // --model is -m. There is no flag for the main agent (sub-agents are tools the model calls, or
  // `@name` in the prompt), no reasoning-effort flag (thinking budgets are settings), and files are
  // `@path` references in the prompt, read only inside the workspace: refused rather than half-honoured.
  supports: { model: true, variant: false, agent: false, files: false },
  // It reports no cost: refused. Its stream has tokens only in the result (the run is over by then), but
  // each model response is a message with its tokens in the session's chat at once (storeUsage), which
  // the supervisor reads as the run goes: --max-tokens is held. Its model turns show in the stream,
  // which the supervisor counts for --max-turns. Its own limit
  // (model.maxSessionTurns, per process) is a setting only, with no flag or variable to pass it a run's
  // cap by: set in the user's settings it still ends a run with `max-turns`.
  caps: { cost: null, tokens: 'stream', turns: 'stream' },
  // SIGINT and SIGTERM both end the CLI at once (exit 0, no result line) and leave its shell tool
  // running in a session of its own: the core's cancel signals every process of the run, tools included.
  gracefulSignal: 'SIGTERM',
  stream: 'ndjson',
  storeEnvKeys: STORE_ENV_KEYS,
  chooseSessionId,
  launch,
  open: (run) => new GeminiRun(run, { usage: storeUsage, children: new ChildSettler() }),
  childMessages,
  interactive: geminiInteractive,
  // A resume's empty second chat of the session goes before the CLI's own clean-up takes the session with it.
  tidy: tidySession,
};
