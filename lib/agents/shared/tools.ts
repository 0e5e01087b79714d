import { capCounted, obj } from '../../base/json.js';
import type { CliName, StreamState } from '../types.js';

/**
 * Tool calls as the transcript keeps them (short, readable traces, never whole inputs or outputs), and
 * their bookkeeping in a stream: each call counted once in `toolUses`, the calls still waiting for their
 * result, emitted `incomplete` when the stream ends without it.
 */

export const INPUT_MAX = 300;
export const OUTPUT_MAX = 500;
const HEADLINE_MAX = 200;

function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, ' ⏎ ').trim();
}

/** The field that best names what a tool call does, in order of preference. */
const HEADLINE_FIELDS = ['command', 'file_path', 'notebook_path', 'path', 'pattern', 'url', 'query', 'description', 'skill', 'subject', 'to', 'prompt'];

export function toolHeadline(name: string, input: unknown): string {
  const o = obj(input);
  if (o) {
    for (const key of HEADLINE_FIELDS) {
      const v = o[key];
      if (typeof v === 'string' && v.trim()) return `${name}: ${capCounted(oneLine(v), HEADLINE_MAX)}`;
    }
  }
  return name;
}

/** What kind of tool a call is, by Claude's names unless the CLI's own are given. */
export type ToolKind = 'shell' | 'agent' | null;

export function toolInputSummary(
  name: string,
  input: unknown,
  kind: ToolKind = name === 'Bash' ? 'shell' : name === 'Agent' || name === 'Task' ? 'agent' : null,
): string | null {
  if (input === undefined || input === null) return null;
  const o = obj(input);
  if (o && kind === 'shell' && typeof o.command === 'string') return capCounted(o.command, INPUT_MAX);
  if (o && kind === 'agent' && typeof o.prompt === 'string') {
    const d = typeof o.description === 'string' ? `${o.description}: ` : '';
    return capCounted(`${d}${o.prompt}`, INPUT_MAX);
  }
  if (typeof input === 'string') return capCounted(input, INPUT_MAX);
  return capCounted(JSON.stringify(input), INPUT_MAX);
}

/**
 * The tool calls of one stream: `count` counts a call once in the run's `toolUses` (by its id; a call
 * without one is a new call each time), `open` keeps a call until `close` takes it with its result, and
 * `drain` gives the calls that never got one, in the order they were opened.
 */
export class ToolCalls<Call> {
  private readonly seen = new Set<string>();
  private readonly waiting = new Map<string, Call>();
  private anonymous = 0;

  constructor(private readonly state: StreamState) {}

  /** Counts the call `id` (null: a call the stream gave no id) unless it was counted before; its key when it is new, else null. */
  count(id: string | null): string | null {
    const key = id ?? `#${++this.anonymous}`;
    if (this.seen.has(key)) return null;
    this.seen.add(key);
    this.state.toolUses++;
    return key;
  }

  open(id: string, call: Call): void {
    this.waiting.set(id, call);
  }

  isOpen(id: string): boolean {
    return this.waiting.has(id);
  }

  get(id: string): Call | undefined {
    return this.waiting.get(id);
  }

  /** The call `id` got its result: no longer waiting. */
  close(id: string): Call | undefined {
    const call = this.waiting.get(id);
    this.waiting.delete(id);
    return call;
  }

  /** The calls still waiting (those `which` picks, else all), no longer waiting. */
  drain(which?: (call: Call) => boolean): Call[] {
    const out: Call[] = [];
    for (const [id, call] of this.waiting) {
      if (which && !which(call)) continue;
      this.waiting.delete(id);
      out.push(call);
    }
    return out;
  }
}

const DENIALS_SHOWN = 3;
/** As long as a verdict's error in words may be. */
export const VERDICT_ERROR_MAX = 1000;

/** What a run's permission denials (by tool call: what each was) say, in words: how many, the first few, and where to allow them. */
export function denialsError(cli: CliName, denials: Map<string, string>): string {
  const labels = [...denials.values()];
  const shown = labels.slice(0, DENIALS_SHOWN).join('; ') + (labels.length > DENIALS_SHOWN ? `; and ${labels.length - DENIALS_SHOWN} more` : '');
  const calls = labels.length === 1 ? '1 tool call' : `${labels.length} tool calls`;
  return capCounted(
    `${cli} was refused permission for ${calls}: ${shown} (grant what the task needs: docs/agents/${cli}.md, "Permissions")`,
    VERDICT_ERROR_MAX,
  );
}
