import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { listDir } from '../../base/dir.js';
import { str } from '../../base/json.js';
import { findTranscript, readTranscript } from '../shared/transcripts.js';
import type { ChildQuery, Message } from '../types.js';
import { transcriptReader } from './transcript.js';

/**
 * Qwen Code's own store: `$QWEN_RUNTIME_DIR`, else `$QWEN_HOME`, else `$HOME/.qwen` holds
 * `projects/<project>/chats/<session>.jsonl` (the session) and
 * `projects/<project>/subagents/<session>/agent-<agent id>.jsonl` (each sub-agent's transcript, the
 * agent id being `<subagent_type>-<tool_use_id>`) with an `agent-<agent id>.meta.json` beside it
 * (`agentId`, `toolUseId`, `status`). `<project>` is the cwd with every character outside
 * `[A-Za-z0-9]` replaced by `-`. A runtime directory set in settings.json
 * (`advanced.runtimeOutputDir`) is not followed.
 */

/**
 * The store of a run: the runtime directory its environment names, resolved as Qwen resolves it (`~`
 * is the home directory, a relative path is the run's cwd's).
 */
export function qwenRuntimeDir(storeEnv: Record<string, string>, cwd = '/', fallback: NodeJS.ProcessEnv = process.env): string {
  const pick = (env: Record<string, string | undefined>): string | null => {
    const home = env.HOME || homedir();
    const dir = env.QWEN_RUNTIME_DIR || env.QWEN_HOME;
    if (dir) return resolve(cwd, dir === '~' || dir.startsWith('~/') ? join(home, dir.slice(1)) : dir);
    return env.HOME ? join(env.HOME, '.qwen') : null;
  };
  return pick(storeEnv) ?? pick(fallback) ?? join(homedir(), '.qwen');
}

/** Qwen's folder name for a project (its `sanitizeCwd`). */
export function projectDirName(cwd: string): string {
  return cwd.replace(/[^A-Za-z0-9]/g, '-');
}

const SAFE_ID = /^[A-Za-z0-9_-]{1,200}$/;

/**
 * The transcript file of child `childId` of session `sessionId`: asked by its agent id (the file's
 * name) or by its `agent` tool_use id, or by an agent id in another case (the .meta.json names both).
 */
export function findChildTranscript(q: Pick<ChildQuery, 'sessionId' | 'cwd' | 'childId' | 'storeEnv'>): string | null {
  if (!q.sessionId || !SAFE_ID.test(q.childId) || !SAFE_ID.test(q.sessionId)) return null;
  const projects = join(qwenRuntimeDir(q.storeEnv, q.cwd), 'projects');
  const own = projectDirName(q.cwd);
  const dirs = [own, ...listDir(projects).filter((p) => p !== own)].map((p) => join(projects, p, 'subagents', q.sessionId!));
  const wanted = q.childId.toLowerCase();
  return findTranscript(dirs, q.childId, (meta) => str(meta.toolUseId) === q.childId || str(meta.agentId)?.toLowerCase() === wanted);
}

/** A child's messages from its transcript in the run's store; false when there is none. */
export async function childMessages(q: ChildQuery, onMessage: (m: Message) => void): Promise<boolean> {
  return readTranscript(findChildTranscript(q), () => transcriptReader(q.childId, onMessage));
}
