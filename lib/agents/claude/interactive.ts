import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { listDir } from '../../base/dir.js';
import { obj, parseObject, str } from '../../base/json.js';
import { attachedRun } from '../shared/attached.js';
import type { Interactive, InteractiveInput, Launch, SessionQuery } from '../types.js';
import { claudeConfigDir, projectSlug } from './store.js';
import { openRun } from './stream.js';

/**
 * Claude Code's interactive mode on a session, for subagent-attach (docs/attach.md): `claude --resume <id>`
 * in the person's terminal. What happens there is appended to the session's transcript,
 * `$CLAUDE_CONFIG_DIR/projects/<project slug>/<id>.jsonl`, in the stream-json format the runs' own reader
 * reads (measured with 2.1.197); the person's prompts are its `user` lines with a string content.
 */

const SAFE_ID = /^[A-Za-z0-9_-]{1,200}$/;

function launch(input: InteractiveInput): Launch {
  const args = ['--resume', input.sessionId];
  if (input.model) args.push('--model', input.model);
  if (input.agent) args.push('--agent', input.agent);
  return { command: 'claude', args, env: {} };
}

function sessionFile(q: SessionQuery): string | null {
  if (!q.sessionId || !SAFE_ID.test(q.sessionId)) return null;
  const projects = join(claudeConfigDir(q.storeEnv), 'projects');
  const name = `${q.sessionId}.jsonl`;
  const own = join(projects, projectSlug(q.cwd), name);
  if (existsSync(own)) return own;
  // A project whose slug Claude cut and hashed (paths over 200 characters): found by the session's file.
  const dir = listDir(projects).find((p) => existsSync(join(projects, p, name)));
  return dir === undefined ? null : join(projects, dir, name);
}

/** A prompt the person typed: a `user` line of the main thread whose content is a string (not a command's echo). */
function promptOf(line: string): string | null {
  if (!line.includes('"type":"user"')) return null;
  const o = parseObject(line);
  const message = obj(o?.message);
  if (o?.type !== 'user' || o.isMeta === true || o.isSidechain === true || !message) return null;
  const text = str(message.content);
  if (text === null || !text.trim() || /^<(command-|local-command-)/.test(text.trimStart())) return null;
  return text.replace(/\n+$/, '');
}

export const claudeInteractive: Interactive = {
  launch,
  sessionFile,
  open: (run = {}) => attachedRun('claude', run, promptOf, openRun),
};
