import type { ChildProcessByStdio } from 'node:child_process';
import { existsSync } from 'node:fs';
import type { Readable } from 'node:stream';
import { isAbsolute, join } from 'node:path';
import { childProcess } from '../../proc/child-process.js';
import { listDir } from '../../base/dir.js';
import { isObject, parseObject, str, type JsonObject } from '../../base/json.js';
import type { ChildQuery, Message } from '../types.js';
import { toolPart } from './parts.js';

/**
 * OpenCode's own store: one SQLite database (`$XDG_DATA_HOME/opencode/opencode.db`, or `$OPENCODE_DB`),
 * read through `opencode export <session id>` (a child sub-agent is a session of its own, whose parent is
 * the run's session).
 */

/** `opencode export` of one child: give up after this long, and never read more than this. */
const EXPORT_TIMEOUT_MS = 60_000;
const EXPORT_MAX_BYTES = 64 * 1024 * 1024;

/**
 * What locates a run's store for `opencode export`: the SQLite file (OPENCODE_DB, else XDG_DATA_HOME, else
 * HOME/.local/share) and the config export loads on the way (so it sees what the run saw). Never
 * OPENCODE_CONFIG_CONTENT: it can hold API keys, and records are plain files.
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
 * Whether the run's store exists: `$OPENCODE_DB` (absolute, or relative to the data dir) when set, else
 * an `opencode*.db` in the data dir (release builds use `opencode.db`, other channels `opencode-<ch>.db`).
 */
export function opencodeStoreExists(env: Record<string, string | undefined>): boolean {
  const data = opencodeDataDir(env);
  const db = env.OPENCODE_DB;
  if (db) {
    if (db === ':memory:') return false;
    if (isAbsolute(db)) return existsSync(db);
    return data !== null && existsSync(join(data, db));
  }
  if (data === null) return false;
  return listDir(data).some((f) => /^opencode.*\.db$/.test(f));
}

/** Runs `opencode export <id>` with the run's store env; resolves its stdout, or null when it failed. */
function runExport(id: string, q: ChildQuery): Promise<string | null> {
  return new Promise((resolve) => {
    // The run's store, not the caller's: a store variable the run did not have must not leak in.
    const env: NodeJS.ProcessEnv = { ...process.env };
    for (const k of STORE_ENV_KEYS) delete env[k];
    Object.assign(env, q.storeEnv);
    const cwd = existsSync(q.cwd) ? q.cwd : undefined;
    // OpenCode believes $PWD over its real cwd (see launch.ts).
    if (cwd) env.PWD = cwd;
    else delete env.PWD;
    let child: ChildProcessByStdio<null, Readable, null>;
    try {
      // stdin ignored: without an id `export` would open an interactive picker (we always pass one).
      child = childProcess().spawn('opencode', ['export', id], { cwd, env, stdio: ['ignore', 'pipe', 'ignore'] });
    } catch {
      resolve(null);
      return;
    }
    const chunks: Buffer[] = [];
    let bytes = 0;
    let done = false;
    const end = (v: string | null): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      resolve(v);
    };
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      end(null);
    }, EXPORT_TIMEOUT_MS);
    child.stdout.on('data', (c: Buffer) => {
      bytes += c.length;
      if (bytes > EXPORT_MAX_BYTES) {
        child.kill('SIGKILL');
        end(null);
        return;
      }
      chunks.push(c);
    });
    child.on('error', () => end(null));
    child.on('close', (code) => end(code === 0 ? Buffer.concat(chunks).toString('utf8') : null));
  });
}

/** The JSON document in export's stdout (it is the whole stdout today; tolerate a line of noise first). */
function parseExport(out: string): JsonObject | null {
  const doc = parseObject(out);
  if (doc) return doc;
  const at = out.indexOf('\n{');
  return at === -1 ? null : parseObject(out.slice(at + 1));
}

/**
 * The child's exported session, or null. Tried twice by the caller: export (a whole OpenCode start, ~500 MB)
 * failed once in a run of the suite on a loaded machine where it had just succeeded for the same child,
 * and a failed export shows the stream's short answer instead of the child's transcript.
 */
async function exportedSession(q: ChildQuery): Promise<{ doc: JsonObject; info: JsonObject } | null> {
  const out = await runExport(q.childId, q);
  const doc = out === null ? null : parseExport(out);
  return doc && isObject(doc.info) ? { doc, info: doc.info } : null;
}

export async function opencodeChildMessages(q: ChildQuery, onMessage: (m: Message) => void): Promise<boolean> {
  // Never let `export` create an empty store where the run had none.
  if (!opencodeStoreExists(q.storeEnv)) return false;
  if (!/^[A-Za-z0-9_-]+$/.test(q.childId)) return false;
  const session = (await exportedSession(q)) ?? (await exportedSession(q));
  if (!session) return false;
  // Only a sub-agent of this run's session (when we know it) is this run's child.
  if (q.sessionId && typeof session.info.parentID === 'string' && session.info.parentID !== q.sessionId) return false;
  exportMessages(session.doc, onMessage, q.childId);
  return true;
}
