import { shortLine } from '../../base/json.js';
import { nowIso } from '../../base/time.js';
import type { ChildAgent } from '../../registry/record.js';
import type { CliName, StreamState } from '../types.js';

/** The longest description a child keeps: the task the stream showed it given, on one line. */
const CHILD_DESCRIPTION_MAX = 200;

/** A child the run's stream just showed starting (`running`, `statusSource: "stream"`), its task cut to one short line. */
export function runningChild(id: string, cli: CliName, task: string | null, startedAt: string = nowIso()): ChildAgent {
  const description = task === null ? null : shortLine(task, CHILD_DESCRIPTION_MAX);
  return { id, cli, description, status: 'running', statusSource: 'stream', startedAt, finishedAt: null };
}

/**
 * Children still `running` when the run (or its turn) ended take that end (`done` or `failed`), marked as
 * a guess (`statusSource: "inferred"`): for CLIs whose sub-agents live in the agent's own process. A guess
 * is never final: the stream's own word on the child that comes later (`endChild`), or the CLI's store
 * (Gemini's `settleChildren`), replaces it.
 */
export function inferChildren(state: StreamState, status: ChildAgent['status']): void {
  for (const c of state.children) {
    if (c.status !== 'running') continue;
    c.status = status;
    c.statusSource = 'inferred';
    c.finishedAt ??= nowIso();
  }
}

/**
 * The stream's own word on a child's end (`done`, `failed`…, at `at`): taken by a child still `running` and
 * by one whose end was only inferred — a CLI may report a child's end after the run's or the turn's end
 * that inferred it. An end the stream or the store already gave stands. Returns whether it was taken.
 */
export function endChild(child: ChildAgent, status: ChildAgent['status'], at: string = nowIso()): boolean {
  if (child.status !== 'running' && child.statusSource !== 'inferred') return false;
  child.status = status;
  child.statusSource = 'stream';
  child.finishedAt = at;
  return true;
}

/**
 * The child `id` of the run, made by `next` from what the stream said of it before (undefined: nothing),
 * added at the end of `state.children` or put in its place. The list is a new array each time: a copy
 * of the state taken earlier keeps what it had.
 */
export function upsertChild(state: StreamState, id: string, next: (before: ChildAgent | undefined) => ChildAgent): void {
  const i = state.children.findIndex((c) => c.id === id);
  const child = next(i >= 0 ? state.children[i] : undefined);
  const children = [...state.children];
  if (i >= 0) children[i] = child;
  else children.push(child);
  state.children = children;
}
