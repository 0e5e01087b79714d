import { SubagentError } from '../../base/errors.js';
import type { AcpSettings } from '../../registry/record.js';
import type { AgentAdapter, Launch, LaunchInput } from '../types.js';
import { drive } from './client.js';
import { ACP_PRESETS } from './presets.js';
import { AcpRun } from './stream.js';

/**
 * `--cli acp`: any agent that speaks the Agent Client Protocol (docs/agents/acp.md). The supervisor is
 * the ACP client (client.ts, the adapter's `drive`), the run's reader parses the conversation it logged
 * (stream.ts), the agents we name are presets (presets.ts), and permission requests are answered by the
 * run's policy (permissions.ts).
 */

function settingsOf(input: Pick<LaunchInput, 'acp'>): AcpSettings {
  if (!input.acp) throw new SubagentError('E_ARG_INVALID', 'a run of --cli acp needs its agent', { hint: 'give --acp-command NAME|CMD' });
  return input.acp;
}

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
  launch(input: LaunchInput): Launch {
    const settings = settingsOf(input);
    const preset = settings.preset === null ? null : (ACP_PRESETS[settings.preset] ?? null);
    if (input.mode === 'resume') {
      if (!input.sessionId) throw new Error('acp: resume needs the session id of the earlier run');
      if (preset && !preset.resume) {
        throw new SubagentError('E_ARG_UNSUPPORTED', `the ${settings.preset} agent offers no session/load or session/resume over ACP`, {
          cli: 'acp',
          preset: settings.preset,
          hint: 'start a new name instead, or use its native --cli',
        });
      }
    }
    const [command, ...args] = settings.command;
    return { command: command!, args: [...args, ...input.extraArgs], env: { ...preset?.env } };
  },
  open: (run) => new AcpRun(run),
  drive: (input, io) => drive(input, io, settingsOf(input).permissions),
};
