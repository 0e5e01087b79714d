// What the adapters' unit tests (test/unit/<cli>-adapter.test.ts) check a replayed run with.
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import type { Message, StreamState } from '../../lib/agents/types.js';
import type { ChildAgent } from '../../lib/registry/record.js';

/** How a captured run ended: its exit status, or the signal that killed it. */
export const exited = (code: number | null, signal: string | null = null) => ({ code, signal });

/** A failed verdict: the error in words and its reason. */
export const failed = (error: string, reason: string) => ({ outcome: 'failed', error, reason });

/** The children a run's state holds, each as [id, description, status, where the status came from]. */
export const childRows = (state: { children: ChildAgent[] }) => state.children.map((c) => [c.id, c.description, c.status, c.statusSource]);

/** Every file of `dir` is one of `covered` (a capture that nothing replays is a failure); `label` goes before its name. */
export function everyFixtureCovered(dir: string, covered: Iterable<string>, label = ''): void {
  const set = new Set(covered);
  for (const f of readdirSync(dir)) assert.ok(set.has(f), `fixture ${label}${f} has no test`);
}

/** A run that answered `text` in session `sessionId` and did nothing else: that one message, no tool call, no child, no fatal error, no line passed over. */
export function answeredOnly(state: StreamState, messages: Message[], sessionId: string, text: string): void {
  assert.equal(state.sessionId, sessionId);
  assert.deepEqual(messages, [{ role: 'assistant', text }]);
  assert.equal(state.lastAssistantText, text);
  assert.equal(state.toolUses, 0);
  assert.deepEqual(state.children, []);
  assert.equal(state.fatalError, null);
  assert.equal(state.skippedLines, 0);
}

/** A resume names its session itself (never --continue, -c or --session-id); one without a session id is refused. */
export function resumesByIdOnly(args: string[], withoutId: () => unknown): void {
  assert.ok(!args.includes('--continue') && !args.includes('-c') && !args.includes('--session-id'));
  assert.throws(withoutId, /session id/);
}

/** The answers of a replayed run (those of child `childId`, else the run's own), in order. */
export const assistantTexts = (p: { messages: Message[] }, childId?: string) =>
  p.messages.filter((m) => m.role === 'assistant' && m.childId === childId).map((m) => m.text);

/** The tool calls of a replayed run, as messages. */
export const tools = (p: { messages: Message[] }) => p.messages.filter((m) => m.role === 'tool');

/** A replayed run in session `sessionId` whose one answer is `text`. */
export function answered(p: { state: StreamState; messages: Message[] }, sessionId: string, text: string): void {
  assert.equal(p.state.sessionId, sessionId);
  assert.equal(p.state.lastAssistantText, text);
  assert.deepEqual(assistantTexts(p), [text]);
}
