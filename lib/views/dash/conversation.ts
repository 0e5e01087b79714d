import { join } from 'node:path';
import { loadAdapter } from '../../agents/index.js';
import type { AgentAdapter, AgentRun, Message } from '../../agents/types.js';
import { LineFollower } from '../../base/lines.js';
import { readRegular } from '../../base/regular.js';
import { FILES, latestRun, nameDir, runDir } from '../../registry/store.js';
import { isTerminal, observeRun } from '../../runs/observe.js';
import { logEnd } from '../../runs/transcript.js';

/** A message of the conversation view, with the run it belongs to. */
export interface Shown extends Message {
  run: number;
}

/** The most messages kept: a long run's oldest are let go (the whole transcript stays on disk: subagent-result). */
export const MAX_MESSAGES = 5000;

/**
 * A name's conversation as it streams, for the dashboard: the latest run's prompt and what its adapter
 * makes of the event log, read as the log grows — then, when the name is resumed, the next run's, after
 * it. The same parsing `result --follow` does (the adapters' own), read incrementally: `poll` reads only
 * what is new.
 */
export class Conversation {
  readonly messages: Shown[] = [];
  private run = 0;
  private dir = '';
  private adapter: AgentAdapter | null = null;
  private opened: AgentRun | null = null;
  private follower: LineFollower | null = null;
  private ended = false;

  constructor(
    readonly registry: string,
    readonly name: string,
  ) {}

  /** The directories whose changes may mean something new: the run's, and the name's (a next run). */
  get watched(): string[] {
    return [this.dir, nameDir(this.registry, this.name)].filter(Boolean);
  }

  get currentRun(): number {
    return this.run;
  }

  /** Opens the name's latest run and reads what it has said so far. */
  async open(): Promise<void> {
    const latest = latestRun(this.registry, this.name);
    if (latest !== null) await this.begin(latest);
  }

  /** Reads what is new; true when a message was added. */
  async poll(): Promise<boolean> {
    const before = this.messages.length;
    const shed = this.shed;
    this.readMore();
    const latest = latestRun(this.registry, this.name);
    if (latest !== null && latest > this.run) {
      this.finish();
      await this.begin(latest);
    }
    return this.messages.length !== before || this.shed !== shed;
  }

  /** How many messages were let go from the front (MAX_MESSAGES). */
  shed = 0;

  private async begin(run: number): Promise<void> {
    this.run = run;
    this.dir = runDir(this.registry, this.name, run);
    const record = observeRun(this.dir).record;
    this.adapter = await loadAdapter(record.cli);
    this.ended = false;
    this.push({ role: 'user', text: readRegular(join(this.dir, FILES.prompt)).toString('utf8') });
    if (this.adapter.stream === 'text') {
      this.opened = null;
      this.follower = new LineFollower(join(this.dir, FILES.events), (text) => this.push({ role: 'assistant', text }));
    } else {
      const opened = this.adapter.open({ onMessage: (m) => this.push(m) });
      this.opened = opened;
      this.follower = new LineFollower(join(this.dir, FILES.events), (line) => opened.line(line));
    }
    this.readMore();
  }

  private readMore(): void {
    if (!this.follower || this.ended) return;
    const now = observeRun(this.dir);
    const done = isTerminal(now.status);
    // A done run's log ends where it stood at its end (docs/states.md), as for every reader.
    if (done) this.follower.limit = logEnd(now.record);
    this.follower.poll();
    if (done) this.finish();
  }

  private finish(): void {
    if (this.ended) return;
    this.follower?.flush();
    this.opened?.end();
    this.ended = true;
  }

  private push(m: Message): void {
    this.messages.push({ ...m, run: this.run });
    if (this.messages.length > MAX_MESSAGES) {
      const over = this.messages.length - MAX_MESSAGES;
      this.messages.splice(0, over);
      this.shed += over;
    }
  }
}
