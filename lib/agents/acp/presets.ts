/**
 * The ACP agents `--acp-command NAME` names (docs/agents/acp.md): each its command line and what was
 * measured of it. Adding an agent that speaks ACP is one line here (or no line: `--acp-command "CMD"`).
 * `resume`: whether it offers `session/load` or `session/resume` (measured); a resume of a preset that
 * does not is refused before anything is recorded. `env`: added to the agent's environment.
 */
export interface AcpPreset {
  command: readonly string[];
  resume: boolean;
  env?: Record<string, string>;
}

export const ACP_PRESETS: Record<string, AcpPreset> = {
  // Without the variable `gemini` relaunches itself under a second Node that passes no signal on
  // (lib/agents/gemini/launch.ts). It offers loadSession, but 0.61.0's load starts the session's chat file
  // anew before it reads it, and then finds nothing to load ("No previous sessions found"): no resume.
  gemini: { command: ['gemini', '--acp'], resume: false, env: { GEMINI_CLI_NO_RELAUNCH: 'true' } },
  qwen: { command: ['qwen', '--acp'], resume: true },
  copilot: { command: ['copilot', '--acp', '--stdio'], resume: true },
  opencode: { command: ['opencode', 'acp'], resume: true },
};
