import type { AgentAdapter } from '../types.js';
import { drive } from './client.js';
import { launch, settingsOf } from './launch.js';
import { AcpRun } from './stream.js';

/**
 * `--cli acp`: any agent that speaks the Agent Client Protocol (docs/agents/acp.md). The supervisor is
 * the ACP client (client.ts, the adapter's `drive`), the run's reader parses the conversation it logged
 * (stream.ts, the log's shape in log.ts), the command line is the agent's (launch.ts), the agents we name
 * are presets (presets.ts), and permission requests are answered by the run's policy (permissions.ts).
 */

export const acp: AgentAdapter = {
  cli: 'acp',
  // The program is the agent's (`programOf`): this is only its name when none is known.
  program: 'acp',
  // ACP has no model, variant or agent of the client's choosing at session start, and files would be
  // resource links the agent may not read: refused rather than half-honoured.
  supports: { model: false, variant: false, agent: false, files: false },
  // ACP has no turns, and its usage is the agent's choice: Gemini and Copilot give tokens only with the
  // prompt's answer (the run is over then), Qwen each response's, OpenCode a cost. A cap that one agent
  // would hold and another silently not is refused for all (--max-time and --max-memory hold, as for any CLI).
  caps: { cost: null, tokens: null, turns: null },
  // After `session/cancel` (the driver's), the agent and its tools get the signal: every process of the run.
  gracefulSignal: 'SIGTERM',
  stream: 'ndjson',
  storeEnvKeys: ['HOME', 'XDG_CONFIG_HOME', 'XDG_DATA_HOME', 'XDG_STATE_HOME', 'GEMINI_CLI_HOME', 'QWEN_HOME', 'COPILOT_HOME'],
  // The agent chooses it (`session/new`'s answer).
  chooseSessionId: () => null,
  programOf: (input) => settingsOf(input).command[0]!,
  launch,
  open: (run) => new AcpRun(run),
  drive: (input, io) => drive(input, io, settingsOf(input).permissions),
};
