import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { LineFollower } from '../../base/lines.js';
import type { ChildQuery, Message } from '../types.js';
import { CopilotRun } from './stream.js';

/**
 * GitHub Copilot CLI's own store: `$COPILOT_HOME` (else `$HOME/.copilot`) holds
 * `session-state/<session id>/events.jsonl`, every persisted event of the session — its runs, resumes
 * and sub-agents (each sub-agent's events carry its `agentId`) — in the stream's own format, and
 * `session-store.db` (SQLite, not read here). The package it unpacks on first use goes to
 * `$XDG_CACHE_HOME/copilot` (not a store: nothing of a session is there).
 */

export const STORE_ENV_KEYS: readonly string[] = ['COPILOT_HOME', 'HOME'];

/** The store of a run: $COPILOT_HOME, else $HOME/.copilot, as the run had them. */
export function copilotHome(storeEnv: Record<string, string>, fallback: NodeJS.ProcessEnv = process.env): string {
  if (storeEnv.COPILOT_HOME) return storeEnv.COPILOT_HOME;
  if (storeEnv.HOME) return join(storeEnv.HOME, '.copilot');
  if (fallback.COPILOT_HOME) return fallback.COPILOT_HOME;
  return join(fallback.HOME || homedir(), '.copilot');
}

const SAFE_ID = /^[A-Za-z0-9_-]{1,200}$/;

/** A session's event log in the run's store, or null when the id could not be a session's (it goes into a path). */
export function sessionLog(storeEnv: Record<string, string>, sessionId: string | null): string | null {
  if (!sessionId || !SAFE_ID.test(sessionId)) return null;
  return join(copilotHome(storeEnv), 'session-state', sessionId, 'events.jsonl');
}

/**
 * A child's messages from its session's event log: the events carrying its agentId. False when the
 * run's session has no log there or the log has no such sub-agent.
 */
export async function childMessages(q: ChildQuery, onMessage: (m: Message) => void): Promise<boolean> {
  const file = sessionLog(q.storeEnv, q.sessionId);
  if (!file || !SAFE_ID.test(q.childId) || !existsSync(file)) return false;
  const mine: Message[] = [];
  const p = new CopilotRun({
    onMessage: (m) => {
      if (m.childId === q.childId) mine.push(m);
    },
  });
  new LineFollower(file, (line) => p.line(line)).flush();
  p.end();
  if (!mine.length && !p.state.children.some((c) => c.id === q.childId)) return false;
  for (const m of mine) onMessage(m);
  return true;
}
