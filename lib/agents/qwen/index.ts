import type { AgentAdapter } from '../types.js';
import { chooseSessionId, launch } from './launch.js';
import { childMessages } from './store.js';
import { qwenInteractive } from './interactive.js';
import { QwenRun } from './stream.js';

/**
 * Qwen Code (`qwen`, measured with 0.24.4; see docs/agents/qwen.md): the command line in launch.ts,
 * the stream-json family's run with Qwen's options in stream.ts, the sub-agents' transcripts of its own
 * store in store.ts (their format in transcript.ts), its interactive mode (subagent-attach) in interactive.ts.
 *
 * SIGTERM is its graceful stop: `qwen` is a launcher that waits on `node cli.js`, which relaunches
 * itself; neither launcher passes a signal on, and the innermost process stops its tool and exits on
 * SIGTERM (or SIGINT). With SIGTERM, cancel signals every process of the run, the inner one included.
 */
export const qwen: AgentAdapter = {
  cli: 'qwen',
  program: 'qwen',
  supports: { model: true, variant: false, agent: false, files: false },
  // No cost in its stream; tokens (its assistant lines' usage) and turns (its model messages) are held by
  // the supervisor. Its own --max-session-turns counts the whole session, not a run: pass it in ARGS.
  caps: { cost: null, tokens: 'stream', turns: 'stream' },
  gracefulSignal: 'SIGTERM',
  stream: 'ndjson',
  storeEnvKeys: ['HOME', 'QWEN_HOME', 'QWEN_RUNTIME_DIR'],
  chooseSessionId,
  launch,
  open: (run) => new QwenRun(run),
  childMessages,
  interactive: qwenInteractive,
};
