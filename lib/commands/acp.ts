import { ACP_PRESETS } from '../agents/acp/presets.js';
import { SubagentError } from '../base/errors.js';
import { PERMISSION_POLICIES, type AcpSettings, type PermissionPolicy, type RunRecord } from '../registry/record.js';
import { envSetting } from './settings.js';

/**
 * `--cli acp` (docs/agents/acp.md): the agent it speaks ACP with (`--acp-command`, or
 * SUBAGENT_ACP_COMMAND: a preset's name or a command line) and the permission policy (`--permissions`),
 * checked and resolved once, as the run's `acp`. The presets are the adapter's (lib/agents/acp/presets.ts).
 */
export interface AcpOptions {
  /** A preset's name (`gemini`, `qwen`, `copilot`, `opencode`) or the agent's command line, split on blanks; default SUBAGENT_ACP_COMMAND. Start only. */
  acpCommand?: string | undefined;
  /** `approve-all`, `approve-reads` (default) or `deny`; resume: the run's. */
  permissions?: string | undefined;
}

/** The policy when none is given (docs/agents/acp.md, "Permissions"): reads are allowed, nothing else. */
export const DEFAULT_PERMISSIONS: PermissionPolicy = 'approve-reads';

/**
 * The run's `acp`: null for any CLI but acp (which refuses the options); for acp, the command (a preset's
 * or the caller's) and the policy, a resume's kept from the earlier run unless it gives another policy.
 * A resume's command is code its record names: a preset's is taken from the presets again, and a command
 * of the caller's own runs only from a registry that may run code (docs/security.md), as an `onEnd` does.
 */
export function acpSettings(o: AcpOptions, cli: string, env: NodeJS.ProcessEnv, resumed?: { last: RunRecord; trusted: boolean }): AcpSettings | null {
  const policy = o.permissions === undefined ? undefined : parsePermissions(o.permissions);
  if (cli !== 'acp') {
    const flag = o.acpCommand !== undefined ? '--acp-command' : policy !== undefined ? '--permissions' : null;
    if (flag) {
      throw new SubagentError('E_ARG_UNSUPPORTED', `${flag} is for --cli acp only`, {
        cli,
        flag,
        hint: `drop ${flag}, or use --cli acp; a native CLI takes its own permission flags after --`,
      });
    }
    return null;
  }
  const kept = resumed?.last.acp;
  if (kept) {
    const preset = kept.preset !== null ? ACP_PRESETS[kept.preset] : undefined;
    if (!preset && !resumed.trusted) {
      throw new SubagentError('E_REGISTRY_UNTRUSTED', `the agent of "${resumed.last.name}" is a command its record names, and this registry may not run code`, {
        command: kept.command,
        hint: 'name the registry with --registry (or SUBAGENT_DIR) if it is yours (docs/security.md), or start a new name',
      });
    }
    return { ...kept, command: preset ? [...preset.command] : kept.command, permissions: policy ?? kept.permissions };
  }
  const words = o.acpCommand !== undefined ? commandWords(o.acpCommand, '--acp-command') : envSetting(env, 'acpCommand', commandWords);
  if (words === undefined) {
    throw new SubagentError('E_ARG_INVALID', '--cli acp needs the agent to speak ACP with', {
      presets: Object.keys(ACP_PRESETS),
      hint: `give --acp-command ${Object.keys(ACP_PRESETS).join('|')} or --acp-command "CMD ARGS", or set SUBAGENT_ACP_COMMAND`,
    });
  }
  const preset = words.length === 1 && Object.hasOwn(ACP_PRESETS, words[0]!) ? words[0]! : null;
  return { command: preset ? [...ACP_PRESETS[preset]!.command] : words, preset, permissions: policy ?? DEFAULT_PERMISSIONS };
}

/** A command line split on blanks (no shell); one without a word is refused, naming where it came from. */
function commandWords(raw: string, source: string): string[] {
  const words = raw.trim().split(/\s+/).filter(Boolean);
  if (words.length > 0) return words;
  throw new SubagentError('E_ARG_INVALID', `${source} "${raw}" names no agent`, {
    value: raw,
    hint: `give a preset (${Object.keys(ACP_PRESETS).join(', ')}) or the agent's command line`,
  });
}

function parsePermissions(raw: string): PermissionPolicy {
  if ((PERMISSION_POLICIES as readonly string[]).includes(raw)) return raw as PermissionPolicy;
  throw new SubagentError('E_ARG_INVALID', `--permissions "${raw}" is not ${PERMISSION_POLICIES.join(', ')}`, {
    value: raw,
    hint: `give --permissions ${PERMISSION_POLICIES.join('|')} (default ${DEFAULT_PERMISSIONS})`,
  });
}
