import { join, dirname } from 'node:path';
import { listDir } from '../../base/dir.js';
import { fileSize, LineFollower } from '../../base/lines.js';
import { fields, num, parseObject, str } from '../../base/json.js';
import type { Usage } from '../../registry/record.js';
import type { SessionQuery, StoreUsage } from '../types.js';
import { sessionChat } from './store.js';
import { usageFromStats } from './stream.js';

/**
 * A Gemini run's token usage while it goes, from its session's chat file (measured with 0.61.0; see
 * docs/agents/gemini.md, "Usage"). The `-o stream-json` stream has tokens only in its result, when the
 * run is over; the chat gets each model response as a `type: gemini` message with its own `tokens
 * {input, output, cached, thoughts, tool, total}` the moment the response ends, before the tools it
 * asked for run (the same message is written again, same id, as its tool calls end). The CLI appends
 * to the chat, a resume to the session's own (the earlier messages again, inside one `$set`): this run's
 * messages are the top-level ones after the size the chat had when the reader was made, right before the
 * run began — or all of a chat the run itself created. Its sub-agents' chats are files of their own,
 * beside it, whose model messages count too: the result's stats (which the record keeps once it comes)
 * are the whole process's, sub-agents included, and the store's sum is the same.
 */

/** The mark of the lines read: every other line is passed by without parsing it. */
const TOKENS = '"tokens"';

/** Token counts by model message id: a message written again (its tool calls ended) counts once. */
type Counts = Map<string, Record<string, unknown>>;

/** A follower of the model messages appended to `file` from `offset` on, into `counts`. */
function messages(file: string, offset: number, counts: Counts): LineFollower {
  return new LineFollower(
    file,
    (line) => {
      if (!line.includes(TOKENS)) return;
      const m = parseObject(line);
      const id = str(m?.id);
      if (m?.type !== 'gemini' || !id || m.tokens === undefined) return;
      counts.set(`${file}\n${id}`, fields(m.tokens));
    },
    offset,
  );
}

/** The counts as ours (null: none yet), by the result's own conversion. */
function usageOf(counts: Counts): Usage | null {
  if (counts.size === 0) return null;
  const stats = { input_tokens: 0, cached: 0, output_tokens: 0, total_tokens: 0 };
  for (const t of counts.values()) {
    stats.input_tokens += num(t.input);
    stats.cached += num(t.cached);
    stats.output_tokens += num(t.output);
    stats.total_tokens += num(t.total);
  }
  return usageFromStats(stats);
}

/** The files of a directory that end with `.jsonl`, by path. */
function chatFiles(dir: string): string[] {
  return listDir(dir)
    .filter((n) => n.endsWith('.jsonl'))
    .map((n) => join(dir, n));
}

/**
 * The reader of a run's usage in its session's chats (`AgentAdapter.storeUsage`), made before the run
 * starts: the session's own chat and its sub-agents' (`<session id>/*.jsonl` beside it), each read from
 * the size it has now — a chat the run creates, from its start. A new session's chat, made by the CLI
 * once it starts, is looked for at each read until found.
 */
export function storeUsage(q: SessionQuery): StoreUsage {
  const counts: Counts = new Map();
  const followers = new Map<string, LineFollower>();
  /** The size each chat had before the run: what is there is not this run's. */
  const before = new Map<string, number>();
  let chat = sessionChat(q);
  const childDir = (file: string): string => join(dirname(file), q.sessionId ?? '');
  if (chat) for (const f of [chat, ...chatFiles(childDir(chat))]) before.set(f, fileSize(f));
  return {
    read() {
      chat ??= sessionChat(q);
      if (!chat) return null;
      for (const f of [chat, ...chatFiles(childDir(chat))]) {
        const from = before.get(f) ?? 0;
        // An earlier run's chat that this run has not touched gets no follower (nor its buffer).
        if (!followers.has(f) && fileSize(f) <= from) continue;
        const follower = followers.get(f) ?? messages(f, from, counts);
        followers.set(f, follower);
        try {
          follower.poll();
        } catch {
          /* unreadable for now: what was read so far stands */
        }
      }
      return usageOf(counts);
    },
  };
}
