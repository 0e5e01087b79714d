import { fields, parseObject, str } from '../../base/json.js';
import { nowIso } from '../../base/time.js';
import type { AgentRun, Exit, Message, RunOptions, Verdict } from '../types.js';
import { contentText, itemOf, NOT_TOOLS, toolMessage } from './items.js';
import { isContextMessage } from './store.js';
import { emptyState } from '../shared/stream.js';
import { usageFromCodex } from './stream.js';
import { addRecordUsage, type Totals } from './usage.js';

/**
 * Lines of a Codex rollout (its own store: docs/agents/codex.md) read as a run: the thread's messages
 * from its `event_msg/item_completed` items — the person's prompts, the agent's words, its tool calls —
 * and its usage from its `token_usage_record`s (each one model response's own counts). The reader of an
 * attached run (subagent-attach), whose event log is what the thread's rollout gained meanwhile; the
 * verdict is the caller's (lib/agents/shared/attached.ts).
 */
export class RolloutRun implements AgentRun {
  readonly state = emptyState();
  private totals: Totals | null = null;
  private readonly onMessage: ((m: Message) => void) | undefined;

  constructor(run: RunOptions = {}) {
    this.onMessage = run.onMessage;
  }

  line(text: string): void {
    const o = parseObject(text);
    if (!o) {
      if (text.trim() !== '') this.state.skippedLines++;
      return;
    }
    this.state.lastActivityAt = nowIso();
    const p = fields(o.payload);
    this.state.sessionId ??= str(p.thread_id) ?? str(p.id);
    if (o.type === 'token_usage_record') {
      this.totals = addRecordUsage(this.totals, p.usage);
      this.state.usage = usageFromCodex(this.totals);
      this.state.turns++;
    } else if (o.type === 'event_msg' && p.type === 'item_completed') this.item(p.item);
  }

  private item(v: unknown): void {
    const item = itemOf(v);
    if (!item) return;
    if (item.type === 'user_message') {
      const text = contentText(item.raw.content);
      if (text && !isContextMessage(text)) this.onMessage?.({ role: 'user', text });
    } else if (item.type === 'agent_message') {
      const text = str(item.raw.text) ?? contentText(item.raw.content);
      if (!text) return;
      this.state.lastAssistantText = text;
      this.onMessage?.({ role: 'assistant', text });
    } else if (!NOT_TOOLS.has(item.type)) {
      this.state.toolUses++;
      this.onMessage?.(toolMessage(item));
    }
  }

  end(): void {}

  verdict(exit: Exit): Verdict {
    return exit.code === 0 ? { outcome: 'succeeded', error: null, reason: null } : { outcome: 'failed', error: null, reason: 'exit-code' };
  }
}
