import { fields, isObject, parseObject, str, type JsonObject } from '../../base/json.js';
import { attachedRun } from '../shared/attached.js';
import type { Interactive, InteractiveInput, Launch, SessionQuery } from '../types.js';
import { opencodeStoreFiles, sessionFromStore, sessionMessageIds } from './store.js';
import { OpencodeRun } from './stream.js';

/**
 * OpenCode's interactive mode (its TUI) on a session, for subagent-attach (docs/attach.md): `opencode
 * --session <id>` in the person's terminal (measured with 1.18.33). Its store is one SQLite database, not a
 * file that grows: the messages the session gained while the person was in it (those whose ids it did not
 * hold before) are written to the run's event log as the events of `opencode run --format json` that the
 * runs' reader reads (stream.ts) — `step_start`, `text`, `tool_use`, `step_finish` (its tokens and cost),
 * `reasoning` — and the person's prompts, which that stream never prints, as `user_text` events (the
 * same shape: `{type, timestamp, sessionID, part}`; the runs' reader passes them by).
 */

const SAFE_ID = /^[A-Za-z0-9_-]{1,200}$/;

/** The stream's event type of each part type of an assistant message (other parts are not the transcript's). */
const EVENT_OF: Record<string, string> = {
  'step-start': 'step_start',
  text: 'text',
  tool: 'tool_use',
  'step-finish': 'step_finish',
  reasoning: 'reasoning',
};

const USER_TEXT = 'user_text';

function launch(input: InteractiveInput): Launch {
  const args = ['--session', input.sessionId];
  if (input.model) args.push('--model', input.model);
  if (input.agent) args.push('--agent', input.agent);
  // As for its runs (launch.ts): OpenCode takes its project directory from $PWD.
  return { command: 'opencode', args, env: { PWD: input.cwd } };
}

/** When a part happened: its own times, else its message's (a step starts when its message does). */
function timeOf(part: JsonObject, info: JsonObject): number | null {
  const t = fields(part.time);
  const m = fields(info.time);
  const order = part.type === 'step-start' ? [t.start, m.created] : [t.end, t.start, m.completed, m.created];
  for (const v of order) if (typeof v === 'number') return v;
  return null;
}

/** Messages of a session (`{info, parts}`, as store.ts reads them) as the event lines of the attached run's log. */
export function sessionEvents(sessionID: string, messages: unknown[]): string[] {
  const lines: string[] = [];
  for (const msg of messages) {
    if (!isObject(msg) || !isObject(msg.info) || !Array.isArray(msg.parts)) continue;
    const info = msg.info;
    const user = str(info.role) === 'user';
    for (const part of msg.parts) {
      if (!isObject(part)) continue;
      const kind = str(part.type) ?? '';
      const type = user ? (kind === 'text' && part.synthetic !== true && part.ignored !== true ? USER_TEXT : null) : (EVENT_OF[kind] ?? null);
      if (type === null) continue;
      lines.push(JSON.stringify({ type, timestamp: timeOf(part, info), sessionID, part }));
    }
  }
  return lines;
}

/**
 * Marks the session's messages before the person is in it; the returned function reads, once they left,
 * the messages it gained as event lines. Nothing when the store does not hold the session.
 */
function gained(q: SessionQuery): () => string[] {
  const id = q.sessionId;
  if (!id || !SAFE_ID.test(id)) return () => [];
  for (const file of opencodeStoreFiles(q.storeEnv)) {
    const known = sessionMessageIds(file, id);
    if (known === null) continue;
    return () => {
      const doc = sessionFromStore(file, id);
      const messages = Array.isArray(doc?.messages) ? doc.messages : [];
      return sessionEvents(
        id,
        messages.filter((m) => !known.has(str(fields(fields(m).info).id) ?? '')),
      );
    };
  }
  return () => [];
}

/** A prompt the person typed: a `user_text` line of the log. */
function promptOf(line: string): string | null {
  if (!line.includes(`"${USER_TEXT}"`)) return null;
  const o = parseObject(line);
  if (o?.type !== USER_TEXT) return null;
  const text = str(fields(o.part).text);
  return text?.trim() ? text : null;
}

export const opencodeInteractive: Interactive = {
  launch,
  // Its store is a database (`gained` reads it), no file of lines.
  sessionFile: () => null,
  gained,
  open: (run = {}) => attachedRun('opencode', run, promptOf, (r) => new OpencodeRun(r)),
};
