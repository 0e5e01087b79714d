import type { AgentAdapter, RunOptions } from '../types.js';
import { opencodeInteractive } from './interactive.js';
import { opencodeLaunch } from './launch.js';
import { opencodePrepare } from './prepare.js';
import { opencodeChildMessages, STORE_ENV_KEYS } from './store.js';
import { OpencodeRun } from './stream.js';

/**
 * OpenCode (`opencode run --format json`, measured with 1.18.33; see docs/agents/opencode.md): the
 * command line in launch.ts, its runs (the stream, the verdict) in stream.ts, the sub-agents' sessions of its
 * own SQLite store (read directly, read-only) in store.ts, the tool parts both of those carry in parts.ts, and the
 * store's creation before a first run in prepare.ts, its TUI for subagent-attach in interactive.ts.
 */
/** The adapter, with its runs' OpenCode extras visible (`extra`: its steps, texts and refusals). */
export interface OpencodeAdapter extends AgentAdapter {
  open(run?: RunOptions): OpencodeRun;
}

export const opencode: OpencodeAdapter = {
  cli: 'opencode',
  program: 'opencode',
  supports: { model: true, variant: true, agent: true, files: true },
  // OpenCode has no limits of its own that stop a run; every step_finish reports its tokens and cost, and
  // steps (turns) are events: the supervisor holds the run to all three.
  caps: { cost: 'stream', tokens: 'stream', turns: 'stream' },
  // OpenCode dies at once on SIGTERM or SIGINT alike (no final event either way) and leaves its bash
  // tool running; the core's cancel signals every process of the run's tree, tools included.
  gracefulSignal: 'SIGTERM',
  stream: 'ndjson',
  storeEnvKeys: STORE_ENV_KEYS,
  chooseSessionId: () => null,
  launch: opencodeLaunch,
  open: (run) => new OpencodeRun(run),
  childMessages: opencodeChildMessages,
  prepare: opencodePrepare,
  interactive: opencodeInteractive,
};
