import { SubagentError } from '../../base/errors.js';
import type { AcpSettings } from '../../registry/record.js';
import type { Launch, LaunchInput } from '../types.js';
import { ACP_PRESETS } from './presets.js';

/**
 * The command line of a `--cli acp` run: the agent's (a preset's, or the caller's `--acp-command`), then
 * the `-- ARGS`; a preset's environment. The session is the protocol's business (client.ts): a resume
 * is refused here only for a preset measured to offer none.
 */

export function settingsOf(input: Pick<LaunchInput, 'acp'>): AcpSettings {
  if (!input.acp) throw new SubagentError('E_ARG_INVALID', 'a run of --cli acp needs its agent', { hint: 'give --acp-command NAME|CMD' });
  return input.acp;
}

export function launch(input: LaunchInput): Launch {
  const settings = settingsOf(input);
  const preset = settings.preset === null ? null : (ACP_PRESETS[settings.preset] ?? null);
  if (input.mode === 'resume') {
    if (!input.sessionId) throw new Error('acp: resume needs the session id of the earlier run');
    if (preset && !preset.resume) {
      throw new SubagentError('E_ARG_UNSUPPORTED', `the ${settings.preset} agent cannot resume a session over ACP`, {
        cli: 'acp',
        preset: settings.preset,
        hint: 'start a new name instead, or use its native --cli (docs/agents/acp.md, "Presets")',
      });
    }
  }
  const [command, ...args] = settings.command;
  return { command: command!, args: [...args, ...input.extraArgs], env: { ...preset?.env } };
}
