import { homedir } from 'node:os';
import { join } from 'node:path';
import { listDir } from '../../base/dir.js';
import { findTranscript, readTranscript } from '../shared/transcripts.js';
import type { ChildQuery, Message } from '../types.js';
import { openChildTranscript } from './stream.js';

/**
 * Claude Code's own store: `$CLAUDE_CONFIG_DIR` (else `$HOME/.claude`) holds
 * `projects/<project slug>/<session id>/subagents/agent-<agentId>.jsonl`, each sub-agent's transcript
 * in the stream-json format, with an `agent-<agentId>.meta.json` beside it naming its Agent tool call.
 */

/** The store: $CLAUDE_CONFIG_DIR, else $HOME/.claude, as the run had them. */
export function claudeConfigDir(storeEnv: Record<string, string>, fallback: NodeJS.ProcessEnv = process.env): string {
  if (storeEnv.CLAUDE_CONFIG_DIR) return storeEnv.CLAUDE_CONFIG_DIR;
  if (storeEnv.HOME) return join(storeEnv.HOME, '.claude');
  if (fallback.CLAUDE_CONFIG_DIR) return fallback.CLAUDE_CONFIG_DIR;
  return join(fallback.HOME || homedir(), '.claude');
}

/** Claude's project directory name for a cwd (paths whose slug passes 200 chars get a hash suffix we cannot recompute; those are found by scanning). */
export function projectSlug(cwd: string): string {
  return cwd.replace(/[^A-Za-z0-9]/g, '-');
}

const SAFE_ID = /^[A-Za-z0-9_-]{1,200}$/;

/** The sub-agent transcript file of `childId` (an agentId, or the Agent tool_use id via its .meta.json). */
export function findChildTranscript(q: Pick<ChildQuery, 'sessionId' | 'cwd' | 'childId' | 'storeEnv'>): string | null {
  if (!SAFE_ID.test(q.childId) || (q.sessionId && !SAFE_ID.test(q.sessionId))) return null;
  const projects = join(claudeConfigDir(q.storeEnv), 'projects');
  const sessionDirs: string[] = [];
  if (q.sessionId) {
    sessionDirs.push(join(projects, projectSlug(q.cwd), q.sessionId));
    for (const p of listDir(projects)) sessionDirs.push(join(projects, p, q.sessionId));
  } else {
    for (const p of listDir(projects)) for (const s of listDir(join(projects, p))) sessionDirs.push(join(projects, p, s));
  }
  // By its agentId (the file's name), else by the Agent tool_use id the .meta.json beside it names.
  return findTranscript(
    sessionDirs.map((d) => join(d, 'subagents')),
    q.childId,
    (meta) => meta.toolUseId === q.childId,
  );
}

/** A child's messages from its transcript in the run's store; false when there is none. */
export async function childMessages(q: ChildQuery, onMessage: (m: Message) => void): Promise<boolean> {
  return readTranscript(findChildTranscript(q), () => openChildTranscript(q.childId, onMessage));
}
