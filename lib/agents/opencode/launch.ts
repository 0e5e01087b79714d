import type { Launch, LaunchInput } from '../types.js';

/**
 * The command line of an OpenCode run (docs/agents/opencode.md):
 *
 *   opencode run --format json [--model M] [--agent A] [--variant V] [--session <id>] [ARGS…] [--file F…] [-- …]
 *
 * The prompt is stdin.
 */

/** Where an explicit `--` would end the options of `opencode run` (files must come before it). */
function filesAt(extraArgs: string[]): number {
  const dd = extraArgs.indexOf('--');
  return dd === -1 ? extraArgs.length : dd;
}

export function opencodeLaunch(input: LaunchInput): Launch {
  const args = ['run', '--format', 'json'];
  if (input.model) args.push('--model', input.model);
  if (input.agent) args.push('--agent', input.agent);
  if (input.variant) args.push('--variant', input.variant);
  if (input.mode === 'resume') {
    if (!input.sessionId) throw new Error('opencode: a resume needs the session id of the run it continues');
    args.push('--session', input.sessionId);
  }
  // `--file` is a yargs array: it swallows every following argument up to the next option. So the
  // files go last (or just before an explicit `--` of the user's), where they cannot eat a message.
  const at = filesAt(input.extraArgs);
  const files = input.files.flatMap((f) => ['--file', f]);
  args.push(...input.extraArgs.slice(0, at), ...files, ...input.extraArgs.slice(at));
  // OpenCode takes its project directory from $PWD when set, not from its real cwd: with the caller's
  // PWD inherited it would work on the caller's directory (measured: a run in --cwd /tmp/x snapshotted
  // and worked on /work/main instead). The supervisor starts us in the run's cwd; make PWD say so.
  return { command: 'opencode', args, env: { PWD: input.cwd } };
}
