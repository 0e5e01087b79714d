import { existsSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { openReadOnly } from '../../base/sqlite.js';
import { listDir } from '../../base/dir.js';
import { isObject, parseObject, str, type JsonObject } from '../../base/json.js';
import type { ChildQuery, Message } from '../types.js';
import { toolPart } from './parts.js';

/**
 * OpenCode's own store: one SQLite database (`$XDG_DATA_HOME/opencode/opencode.db`, or `$OPENCODE_DB`),
 * read directly, read-only, with Node's own SQLite (a child sub-agent is a session of its own, whose
 * parent is the run's session). Never through `opencode export`: reading a child's words starts no
 * process (docs/security.md, "Reading never acts"), and OpenCode would load the run directory's own
 * configuration and plugins on the way.
 */

/**
 * What locates a run's store: the SQLite file (OPENCODE_DB, else XDG_DATA_HOME, else HOME/.local/share).
 * The config variables are recorded too (records made before the store was read directly name them).
 * Never OPENCODE_CONFIG_CONTENT: it can hold API keys, and records are plain files.
 */
export const STORE_ENV_KEYS: readonly string[] = [
  'HOME',
  'XDG_DATA_HOME',
  'OPENCODE_DB',
  'XDG_CONFIG_HOME',
  'XDG_CACHE_HOME',
  'XDG_STATE_HOME',
  'OPENCODE_CONFIG',
  'OPENCODE_CONFIG_DIR',
];

/** Messages of one exported session (`opencode export <id>`: `{info, messages:[{info, parts}]}`). */
export function exportMessages(doc: unknown, onMessage: (m: Message) => void, childId?: string): number {
  if (!isObject(doc) || !Array.isArray(doc.messages)) return 0;
  const tag = childId ? { childId } : {};
  let n = 0;
  for (const msg of doc.messages) {
    if (!isObject(msg)) continue;
    const role = isObject(msg.info) ? str(msg.info.role) : null;
    const parts = Array.isArray(msg.parts) ? msg.parts : [];
    for (const p of parts) {
      if (!isObject(p)) continue;
      if (p.type === 'text' && typeof p.text === 'string') {
        if (p.synthetic === true || p.ignored === true) continue;
        onMessage({ role: role === 'user' ? 'user' : 'assistant', text: p.text, ...tag });
        n++;
      } else if (p.type === 'tool') {
        const tp = toolPart(p);
        onMessage({ role: 'tool', text: tp.text, tool: tp.call, ...tag });
        n++;
      }
    }
  }
  return n;
}

/** The directory of a run's SQLite store (`$XDG_DATA_HOME/opencode`, default `~/.local/share/opencode`). */
export function opencodeDataDir(env: Record<string, string | undefined>): string | null {
  if (env.XDG_DATA_HOME) return join(env.XDG_DATA_HOME, 'opencode');
  if (env.HOME) return join(env.HOME, '.local', 'share', 'opencode');
  return null;
}

/**
 * The run's SQLite store files: `$OPENCODE_DB` (absolute, or relative to the data dir) when set, else
 * every `opencode*.db` of the data dir (release builds use `opencode.db`, other channels
 * `opencode-<channel>.db`), `opencode.db` first.
 */
export function opencodeStoreFiles(env: Record<string, string | undefined>): string[] {
  const data = opencodeDataDir(env);
  const db = env.OPENCODE_DB;
  if (db) {
    if (db === ':memory:') return [];
    const file = isAbsolute(db) ? db : data === null ? null : join(data, db);
    return file !== null && existsSync(file) ? [file] : [];
  }
  if (data === null) return [];
  const names = listDir(data).filter((f) => /^opencode.*\.db$/.test(f));
  names.sort((a, b) => (a === 'opencode.db' ? -1 : b === 'opencode.db' ? 1 : a < b ? -1 : a > b ? 1 : 0));
  return names.map((f) => join(data, f));
}

/** Whether the run's store exists (lib/agents/opencode/prepare.ts: made before the first run). */
export function opencodeStoreExists(env: Record<string, string | undefined>): boolean {
  return opencodeStoreFiles(env).length > 0;
}

/**
 * Session `id` out of one store file, in the shape `opencode export <id>` prints (`{info, messages:
 * [{info, parts}]}`: each row's JSON `data`, with the ids export adds), or null when the file does not
 * hold it or cannot be read (a Node without SQLite, a store of another shape).
 */
export function sessionFromStore(file: string, id: string): JsonObject | null {
  const db = openReadOnly(file);
  if (db === null) return null;
  try {
    const session = db.prepare('SELECT id, parent_id FROM session WHERE id = ?').get(id);
    if (!session) return null;
    const messages = db.prepare('SELECT id, data FROM message WHERE session_id = ? ORDER BY time_created, id').all(id);
    const parts = db.prepare('SELECT id, message_id, data FROM part WHERE session_id = ? ORDER BY message_id, id').all(id);
    const byMessage = new Map<string, JsonObject[]>();
    for (const p of parts) {
      const data = parseObject(String(p.data));
      if (!data) continue;
      const messageID = String(p.message_id);
      const part = { ...data, id: String(p.id), sessionID: id, messageID };
      const list = byMessage.get(messageID);
      if (list) list.push(part);
      else byMessage.set(messageID, [part]);
    }
    return {
      info: { id, parentID: session.parent_id ?? undefined },
      messages: messages.map((m) => ({ info: { ...(parseObject(String(m.data)) ?? {}), id: String(m.id) }, parts: byMessage.get(String(m.id)) ?? [] })),
    };
  } catch {
    return null;
  } finally {
    db.close();
  }
}

/** The ids of session `id`'s messages in one store file; null when the file does not hold the session or cannot be read. */
export function sessionMessageIds(file: string, id: string): Set<string> | null {
  const db = openReadOnly(file);
  if (db === null) return null;
  try {
    if (!db.prepare('SELECT id FROM session WHERE id = ?').get(id)) return null;
    return new Set(
      db
        .prepare('SELECT id FROM message WHERE session_id = ?')
        .all(id)
        .map((m) => String(m.id)),
    );
  } catch {
    return null;
  } finally {
    db.close();
  }
}

export async function opencodeChildMessages(q: ChildQuery, onMessage: (m: Message) => void): Promise<boolean> {
  if (!/^[A-Za-z0-9_-]+$/.test(q.childId)) return false;
  for (const file of opencodeStoreFiles(q.storeEnv)) {
    const doc = sessionFromStore(file, q.childId);
    if (!doc || !isObject(doc.info)) continue;
    // Only a sub-agent of this run's session (when we know it) is this run's child.
    if (q.sessionId && typeof doc.info.parentID === 'string' && doc.info.parentID !== q.sessionId) return false;
    exportMessages(doc, onMessage, q.childId);
    return true;
  }
  return false;
}
