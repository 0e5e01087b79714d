import { parseObject, type JsonObject } from '../base/json.js';
import type { ChildAgent, Usage } from '../registry/record.js';

/**
 * One adapter per agent CLI (lib/agents/<cli>/, or the one file lib/agents/shell.ts). Adding a CLI is
 * adding one folder whose index.ts exports an `AgentAdapter`, and one line in lib/agents/index.ts. The core never knows a CLI's flags or events.
 */
export type CliName = 'opencode' | 'claude' | 'codex' | 'shell';
export const CLI_NAMES: readonly CliName[] = ['opencode', 'claude', 'codex', 'shell'];

export interface LaunchInput {
  mode: 'new' | 'resume';
  cwd: string;
  runDir: string;
  model: string | null;
  variant: string | null;
  agent: string | null;
  /** Absolute paths. */
  files: string[];
  /** Everything after "--" on the start/resume line, verbatim. */
  extraArgs: string[];
  /** New run: the id we chose (when the CLI lets us choose), else null. Resume: the id to resume. */
  sessionId: string | null;
}

export interface Launch {
  /** Program name looked up on PATH, or an absolute path. */
  command: string;
  args: string[];
  /** Added to the supervisor's environment. The prompt always goes on stdin. */
  env: Record<string, string>;
}

export interface ToolCall {
  name: string;
  /** Short summaries, never whole outputs. */
  input: string | null;
  output: string | null;
  status: string | null;
}

/** The transcript's one shape across CLIs. */
export interface Message {
  role: 'user' | 'assistant' | 'tool';
  text: string;
  tool?: ToolCall;
  /** The child sub-agent this message belongs to, when the stream carries it. */
  childId?: string;
}

/** What a run's event stream has said so far; the supervisor copies it into the record. */
export interface StreamState {
  sessionId: string | null;
  toolUses: number;
  usage: Usage | null;
  children: ChildAgent[];
  /** The CLI's own verdict that the run failed (Claude is_error, Codex turn.failed, OpenCode error). */
  fatalError: string | null;
  /** The last assistant text of the run (the "answer"). */
  lastAssistantText: string | null;
  /** Lines that were not JSON or were torn (noise, a cut-off last line): skipped, counted. */
  skippedLines: number;
  lastActivityAt: string | null;
}

export interface StreamParser {
  /** One line of the agent's stdout, without its newline. */
  line(text: string): void;
  /** The stream is over: emit what is still pending (e.g. a tool call whose result never came). */
  end?(): void;
  readonly state: StreamState;
}

/** What the core knows that a parser may need. */
export interface ParserContext {
  /** The usage the earlier runs of this session reported (for CLIs whose counters are cumulative). */
  threadUsageBefore?: Usage | null;
}

export interface Verdict {
  outcome: 'succeeded' | 'failed';
  error: string | null;
}

/** Where to find a child sub-agent's own transcript, and whose store to read it from. */
export interface ChildQuery {
  /** The parent run's record fields the adapter needs. */
  sessionId: string | null;
  cwd: string;
  runDir: string;
  childId: string;
  /** The environment the run had for the CLI's store (HOME, CLAUDE_CONFIG_DIR, CODEX_HOME, XDG_*). */
  storeEnv: Record<string, string>;
}

export interface AgentAdapter {
  readonly cli: CliName;
  /** The program that must be on PATH (E_CMD_MISSING otherwise). */
  readonly program: string;
  /** Which of our options the CLI can honour; any other given is E_ARG_UNSUPPORTED. */
  readonly supports: { model: boolean; variant: boolean; agent: boolean; files: boolean; resume: boolean };
  /** The signal that makes this CLI stop gracefully (tools killed, transcript closed). */
  readonly gracefulSignal: NodeJS.Signals;
  /** 'text': stdout is the answer itself (shell). 'ndjson': one JSON event per line. */
  readonly stream: 'text' | 'ndjson';
  /** A session id we choose before launch (Claude's --session-id), or null when the CLI chooses. */
  chooseSessionId(): string | null;
  launch(input: LaunchInput): Launch;
  /** `onMessage` receives the normalised transcript messages in order (prompts are added by the core). */
  parser(onMessage?: (m: Message) => void, context?: ParserContext): StreamParser;
  /** How a run ended, from the exit status and what the stream said. Cancels are decided by the core. */
  verdict(exit: { code: number | null; signal: string | null }, state: StreamState): Verdict;
  /** Environment variables that locate the CLI's own transcript store; recorded with each run. */
  readonly storeEnvKeys: readonly string[];
  /**
   * Streams a child sub-agent's messages from the CLI's own transcript store, for `--child` when the
   * event stream does not carry the child's words. Resolves false when the store has no such child.
   */
  childMessages?(q: ChildQuery, onMessage: (m: Message) => void): Promise<boolean>;
  /**
   * Runs in the supervisor right before the agent is spawned, with the agent's environment: one-time
   * set-up the CLI does not do safely itself (OpenCode creates its database without a lock).
   */
  prepare?(env: NodeJS.ProcessEnv, cwd: string): Promise<void>;
}

export function emptyState(): StreamState {
  return { sessionId: null, toolUses: 0, usage: null, children: [], fatalError: null, lastAssistantText: null, skippedLines: 0, lastActivityAt: null };
}

/**
 * The event on one line of an `ndjson` stream: a JSON object with a string `type`. Null for a blank line,
 * and for any other line, which is counted in `state.skippedLines` (noise the CLI printed, a torn line).
 */
export function eventOf(text: string, state: StreamState): JsonObject | null {
  if (text.trim() === '') return null;
  const ev = parseObject(text);
  if (ev && typeof ev.type === 'string') return ev;
  state.skippedLines++;
  return null;
}
