import { parseObject, type JsonObject } from '../../base/json.js';
import type { AgentRun, Exit, Message, RunOptions, StreamState, Verdict } from '../types.js';
import { inferChildren } from './children.js';
import { emptyState } from './stream.js';

/**
 * A person's turn in a CLI's own session (subagent-attach), read from the lines the CLI's store gained: the
 * CLI's reader of its store format (`inner`), the person's prompts — which a store holds but a reader of
 * the agent's side leaves out — as user messages, and a verdict from the exit status alone (an
 * interactive session has no result line: the person leaving it is its end).
 */
export class AttachedRun implements AgentRun {
  constructor(
    private readonly inner: AgentRun,
    /** The person's prompt a line of the store holds, if any. */
    private readonly promptOf: (line: string) => string | null,
    private readonly onMessage: ((m: Message) => void) | undefined,
    private readonly cli: string,
  ) {}

  get state(): StreamState {
    return this.inner.state;
  }

  line(text: string): void {
    const prompt = this.promptOf(text);
    if (prompt !== null) this.onMessage?.({ role: 'user', text: prompt });
    this.inner.line(text);
  }

  end(): void {
    this.inner.end();
  }

  verdict(exit: Exit): Verdict {
    const succeeded = exit.code === 0;
    // Sub-agents the store never ended take the session's end, marked a guess, as in any run.
    inferChildren(this.inner.state, succeeded ? 'done' : 'failed');
    if (succeeded) return { outcome: 'succeeded', error: null, reason: null };
    const how = exit.signal ? `was killed by ${exit.signal}` : `exited with status ${exit.code}`;
    return { outcome: 'failed', error: `${this.cli} ${how} in the person's session`, reason: exit.signal ? 'crashed' : 'exit-code' };
  }
}

/** Opens `inner` with the messages going through an AttachedRun (the person's prompts in their place). */
export function attachedRun(cli: string, run: RunOptions, promptOf: (line: string) => string | null, open: (run: RunOptions) => AgentRun): AgentRun {
  return new AttachedRun(open(run), promptOf, run.onMessage, cli);
}

/**
 * The reader of the records a person's turn added to a CLI's store, one JSON object a line (Gemini's
 * chat, Qwen's recording): what every such reader does — a line that is not an object is counted and
 * passed over, each transcript message it tells sets the answer and the tool count.
 */
export abstract class StoreTurnRun implements AgentRun {
  readonly state: StreamState = emptyState();

  constructor(private readonly onMessage: ((m: Message) => void) | undefined) {}

  line(text: string): void {
    if (text.trim() === '') return;
    const r = parseObject(text);
    if (r) this.record(r, text);
    else this.state.skippedLines++;
  }

  /** One record of the store. */
  protected abstract record(r: JsonObject, text: string): void;

  abstract end(): void;

  /** Tells one message of the transcript. */
  protected readonly tell = (m: Message): void => {
    if (m.role === 'assistant') this.state.lastAssistantText = m.text;
    if (m.role === 'tool') this.state.toolUses++;
    this.onMessage?.(m);
  };

  /** Not asked: an AttachedRun's verdict is the exit status's. */
  verdict(_exit: Exit): Verdict {
    return { outcome: 'succeeded', error: null, reason: null };
  }
}
