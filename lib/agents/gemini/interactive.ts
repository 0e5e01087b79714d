import { fields, num, str, type JsonObject } from '../../base/json.js';
import { attachedRun, StoreTurnRun } from '../shared/attached.js';
import { resumeUuid } from '../shared/launch.js';
import type { Interactive, InteractiveInput, Launch, SessionQuery } from '../types.js';
import { Chat, chatMessage, holdsConversation, sessionChats } from './store.js';
import { usageFromStats } from './stream.js';

/**
 * The Gemini CLI's interactive mode on a session, for subagent-attach (docs/attach.md): `gemini --resume
 * <id>` in the person's terminal (measured with 0.61.0). It appends to the session's own chat file: the
 * whole conversation again in one `$set` (its messages are the earlier runs'), then each message the
 * person and the model add, as records of their own (a model message written again, same id, as its
 * tool calls end). It also starts a chat file of its own for the same session before it loads the old
 * one — in the same file when the minute is the same (its name is `session-<minute>-<id8>.jsonl`),
 * else in a new one that keeps only the CLI's context: the adapter's `tidy` (store.ts) removes that one.
 */

function launch(input: InteractiveInput): Launch {
  const args = ['--resume', resumeUuid('gemini', input.sessionId, 'session id', 'the earlier run has no Gemini session id; start a new name instead')];
  if (input.model) args.push('-m', input.model);
  // As for a run (launch.ts): without it a launcher holds the CLI and passes no signal on (a hangup, a cancel).
  return { command: 'gemini', args, env: { GEMINI_CLI_NO_RELAUNCH: 'true' } };
}

/** The session's chat: the first of its files (by name: the oldest) holding a conversation, as the CLI's own resume picks. */
function sessionFile(q: SessionQuery): string | null {
  const files = sessionChats(q);
  return files.find((f) => holdsConversation(f) === true) ?? files[0] ?? null;
}

/**
 * The person's turn, from the lines the session's chat gained: the chat rebuilt as the CLI rebuilds it,
 * and of its messages those whose first record is among these lines (a `$set` restates the earlier
 * ones). Told at the end, when the chat's last word on each message is known.
 */
class ChatTurnRun extends StoreTurnRun {
  private readonly chat = new Chat();
  /** Message ids seen so far, and those first seen as records of their own: the turn's. */
  private readonly seen = new Set<string>();
  private readonly own = new Set<string>();

  protected record(r: JsonObject): void {
    const id = str(r.id);
    if (id !== null && !this.seen.has(id)) this.own.add(id);
    if (id !== null) this.seen.add(id);
    const set = fields(r.$set);
    if (Array.isArray(set.messages)) for (const m of set.messages) this.seen.add(str(fields(m).id) ?? '');
    this.chat.apply(r);
    this.state.sessionId ??= str(r.sessionId) ?? str(set.sessionId);
  }

  end(): void {
    const s = this.state;
    const stats = { input_tokens: 0, cached: 0, output_tokens: 0, total_tokens: 0 };
    let counted = false;
    for (const m of this.chat.messages) {
      if (!this.own.has(str(m.id) ?? '')) continue;
      chatMessage(m, this.tell);
      s.lastActivityAt = str(m.timestamp) ?? s.lastActivityAt;
      if (m.type !== 'gemini') continue;
      s.turns++;
      if (m.tokens === undefined) continue;
      const t = fields(m.tokens);
      counted = true;
      stats.input_tokens += num(t.input);
      stats.cached += num(t.cached);
      stats.output_tokens += num(t.output);
      stats.total_tokens += num(t.total);
    }
    if (counted) s.usage = usageFromStats(stats);
  }
}

export const geminiInteractive: Interactive = {
  launch,
  sessionFile,
  // Its prompts are the chat's own user messages (ChatTurnRun tells them); the verdict is the exit status's.
  open: (run = {}) =>
    attachedRun(
      'gemini',
      run,
      () => null,
      (r) => new ChatTurnRun(r.onMessage),
    ),
};
