import type { Readable, Writable } from 'node:stream';
import type { AcpSettings, Caps, ChildAgent, LimitWarning, Reason, Usage } from '../registry/record.js';
import type { CliName } from './names.js';

/**
 * The adapter interface: everything the core knows of an agent CLI. One adapter per CLI, in
 * lib/agents/<cli>/ (the built-in `shell` is the one file lib/agents/shell.ts), registered in
 * lib/agents/index.ts. The core never knows a CLI's flags, events or files; docs/agents/adding.md walks
 * through adding one. This file holds the interface only; the code adapters share is in lib/agents/shared/.
 */

/** The agent CLIs, by the name `--cli` takes: the one list of them (lib/agents/names.ts). */
export { CLI_NAMES, type CliName } from './names.js';

/** What `launch` builds a run's command line from: the run's record, as start or resume made it. */
export interface LaunchInput {
  /** `new`: run 1 of a name. `resume`: a later run, which continues the session `sessionId`. */
  mode: 'new' | 'resume';
  /** The run's working directory (a real path); the supervisor starts the agent in it. */
  cwd: string;
  /** `--model` (or `SUBAGENT_MODEL`), null when not given; set only where `supports.model`. */
  model: string | null;
  /** `--variant` (or `SUBAGENT_VARIANT`: the CLI's reasoning effort or its own variant), null when not given. */
  variant: string | null;
  /** `--agent`: the CLI's own agent or profile, null when not given; kept on resume. */
  agent: string | null;
  /** `--file`, as absolute paths; empty unless `supports.files`, and on every resume. */
  files: string[];
  /** Everything after "--" on the start/resume line, verbatim. */
  extraArgs: string[];
  /** New run: the id `chooseSessionId` chose, else null. Resume: the id to resume (the record's). */
  sessionId: string | null;
  /** The run's spend caps; `launch` passes those its `caps` says are `native` to the CLI's own limits. */
  caps: Caps;
  /** `--cli acp`: the agent's command line and permission policy (the record's `acp`); null or absent for every other CLI. */
  acp?: AcpSettings | null;
}

/** How to start the agent: `launch`'s answer. */
export interface Launch {
  /** Program name looked up on PATH, or an absolute path. */
  command: string;
  /** Its arguments, verbatim (no shell); never the prompt, which is on stdin. */
  args: string[];
  /**
   * Added to the agent's environment, over the caller's and the run's `storeEnv` (the core then adds
   * the `SUBAGENT_*` variables and sets PWD to the run's cwd). The prompt always goes on stdin.
   */
  env: Record<string, string>;
}

/** A tool call in the transcript: short summaries, never whole inputs or outputs. */
export interface ToolCall {
  /** The tool's name as the CLI names it (`Bash`, `read`, `mcp:server/tool`…). */
  name: string;
  /** What it was asked (a command, a path…), capped; null when it had no input. */
  input: string | null;
  /** What it answered, capped; null when unknown (no result came, or the CLI does not say). */
  output: string | null;
  /** The CLI's word for how it ended (`completed`, `error`, `failed`, `incomplete`…), or null. */
  status: string | null;
}

/** The transcript's one shape across CLIs (`result`, `search`, `result --follow`, `--child`). */
export interface Message {
  /** `user`: a prompt (the core adds the run's own; a run emits a child's). `assistant`: words. `tool`: a tool call. */
  role: 'user' | 'assistant' | 'tool';
  /** The words; for a tool, a one-line headline (`Bash: ls -la`). */
  text: string;
  /** Set on role `tool`. */
  tool?: ToolCall;
  /** The child sub-agent this message belongs to, when the stream carries it (absent: the run itself). */
  childId?: string;
}

/**
 * What a run's event stream has said so far. The supervisor copies it into the record while the run
 * goes (a few times a second at most, when it changed) and once more at its end; readers of a finished
 * run's log (`result`, `search`) open the run again and read the same fields.
 */
export interface StreamState {
  /** The CLI's session id; the record keeps the first one it gets (a resume keeps the session's). */
  sessionId: string | null;
  /** Tool calls, each counted once: the run's own, and its sub-agents' where the stream carries them. */
  toolUses: number;
  /** This run's usage (not the session's), or null when the CLI reports none. */
  usage: Usage | null;
  /** The run's own sub-agents (its children's children are not listed). */
  children: ChildAgent[];
  /**
   * Model turns so far, each a request to the model and the tools it asked for, counted as the adapter's
   * page defines (0 where the stream does not show them). Read by the supervisor for a `stream` turn cap.
   */
  turns: number;
  /**
   * The CLI's own verdict that the run failed (Claude is_error, Codex turn.failed, OpenCode error),
   * in words. When set the core does not add stderr's last line to the run's error.
   */
  fatalError: string | null;
  /** The last assistant text of the run (the "answer" `result` prints). */
  lastAssistantText: string | null;
  /** Lines that were not JSON or were torn (noise, a cut-off last line): skipped, counted. */
  skippedLines: number;
  /** When the stream last said anything (ISO time): the listing's "last activity". */
  lastActivityAt: string | null;
  /**
   * When a usage, rate or spend limit the CLI said was reached resets (ISO-8601), as the CLI said it
   * (Claude's `rate_limit_event`, Codex's rollout, a `Retry-After` the CLI passed on); null when it did
   * not say. The run's `resetsAt` when its verdict's reason is `rate-limit`.
   */
  resetsAt: string | null;
  /** The CLI's last warning of a limit near but not reached (docs/contract.md): shown, never a failure; null when none. */
  limitWarning: LimitWarning | null;
}

/** What a run is opened with (`AgentAdapter.open`). */
export interface RunOptions {
  /**
   * Receives the run's transcript as normalised messages, in order (the prompt is the core's): given by
   * the readers (`result`, `search`, `result --follow`, `--child`), not by the supervisor.
   */
  onMessage?: (m: Message) => void;
  /**
   * The usage the earlier runs of this session reported (their records' `usage`, summed), for CLIs whose
   * counters are cumulative over the session (Codex, Qwen Code): this run's usage is then the session's
   * total minus this. Only the supervisor gives it (null or absent on run 1): nothing but `usage` may
   * depend on it.
   */
  threadUsageBefore?: Usage | null;
}

/** How the agent's process ended: its exit status, or the signal that killed it. */
export interface Exit {
  /** The exit status, null when a signal ended it. */
  code: number | null;
  /** The signal's name, null when it exited. */
  signal: string | null;
}

/**
 * One run of an agent CLI as its adapter reads it, opened once per read of the run's event log (the
 * supervisor's, live; each reader's, after): it owns everything it learns, and nothing of it is kept
 * anywhere else. Lines go in, `state` is read at any time, `verdict` is asked once at the end.
 */
export interface AgentRun {
  /** What the lines so far said; the same object for the run's life (the core reads it at any time). */
  readonly state: StreamState;
  /** One line of the agent's stdout, without its newline; never throws (a bad line is `skippedLines`). */
  line(text: string): void;
  /** The stream is over: emit what is still pending (e.g. a tool call whose result never came). */
  end(): void;
  /**
   * How the run ended, from the exit status and what the stream said. Called once by the supervisor after
   * the agent exited and the whole log was read (`end` included); not called when the agent could not be
   * started. It may settle, in its own `state`, children the stream never ended (`statusSource:
   * "inferred"`). Cancels and the caps the supervisor enforces are decided by the core, which also adds
   * stderr's last line to a failure without `fatalError`, and records the children the stream left
   * running as `cancelled` when the run was cancelled.
   */
  verdict(exit: Exit): Verdict;
  /**
   * Corrects, from the CLI's own store, the ends of children the stream cannot tell apart (Gemini's stream
   * calls a sub-agent that failed a successful call), in `state.children`: a failed one becomes `failed`,
   * `statusSource: "transcript"`, with its `error`. Called by the supervisor whenever the stream said
   * more, and once with `final` after the agent exited (before the verdict). While the run goes it may
   * hold a child the stream ended as `running` until the store has recorded how it ended; `final` gives
   * it back the stream's end when the store never does.
   */
  settleChildren?(q: SessionQuery, final: boolean): void;
  /**
   * For a CLI whose stream has no token counts while the run goes but whose own store has them (Copilot:
   * none in its stream; Codex: only at the end of its turn): a reader of the run's usage there. The
   * supervisor makes it right before it starts the agent (so what the store holds then, the session's
   * earlier runs, is not counted), reads it while the run goes (when the stream says more, and every
   * second besides) and once more after the agent exited; what it reads is the run's `state.usage`, which
   * the record and a `stream` cap take — until the stream reports a usage of its own, which then stands.
   */
  storeUsage?(q: SessionQuery): StoreUsage;
  /**
   * The reason of a failure the stream cannot tell, from the line of stderr the core adds to its error
   * (the last `Error:` line, else the last line): asked only when the verdict says `crashed` and the agent
   * exited with a status. Copilot prints a sign-in failure there only, with nothing on stdout.
   */
  stderrReason?(said: string): VerdictReason | null;
}

/** The reasons a verdict may give; the core adds `cancelled`, `spawn-failed` and the `max-*` of the caps it holds. */
export type VerdictReason = Exclude<Reason, 'cancelled' | 'spawn-failed'>;

/** How a run ended, in the CLI's terms. */
export interface Verdict {
  /** The run's outcome unless it was cancelled (the core decides that). */
  outcome: 'succeeded' | 'failed';
  /** Why it failed, in words (null when it succeeded). */
  error: string | null;
  /**
   * Why it failed, for a program to branch on (null when it succeeded): from what the CLI itself said —
   * its error's HTTP status or words (`auth`, `rate-limit`, `api-error`: lib/base/api-error.ts), its own
   * limits (`max-turns`, `max-cost`), its permission denials — else `crashed` (killed by a signal, or
   * ended without a verdict of its own), `exit-code` (a script's own failure) or `unknown`.
   * docs/contract.md ("Reasons") says what each means.
   */
  reason: VerdictReason | null;
}

/**
 * How an adapter honours one spend cap: `native`, `launch` passes it to the CLI's own limit; `stream`,
 * the supervisor stops the run (a graceful cancel) once the figures the stream reports *while the run
 * goes* cross it; null, the CLI reports nothing to hold it to: start and resume refuse the cap
 * (`E_ARG_UNSUPPORTED`).
 */
export type CapMode = 'native' | 'stream' | null;

/** Which spend caps an adapter honours, and how (`AgentAdapter.caps`). */
export interface CapSupport {
  /** `--max-cost USD`; `stream` holds `state.usage.costUsd` to it. */
  cost: CapMode;
  /** `--max-tokens N`; `stream` holds `state.usage.totalTokens` to it (from the stream, or the store: `AgentRun.storeUsage`). */
  tokens: CapMode;
  /** `--max-turns N`; `stream` holds `state.turns` to it (from the stream, or the store: `StoreUsage.turns`). */
  turns: CapMode;
}

/** A run's session in the CLI's own store, and whose store it is. */
export interface SessionQuery {
  /** The run's session id (null when it never reported one). */
  sessionId: string | null;
  /** The run's cwd (where the CLI filed its session, for CLIs that file by project). */
  cwd: string;
  /** The environment the run had for the CLI's store (`storeEnvKeys`: HOME, CLAUDE_CONFIG_DIR, CODEX_HOME, XDG_*). */
  storeEnv: Record<string, string>;
  /**
   * The record's description of the child (the task the stream showed it given), to recognise its
   * transcript where the store names no id for it yet (a Gemini child still running). Absent: unknown.
   */
  description?: string | null;
}

/** Where to find a child sub-agent's own transcript: the parent run's session (only its children count), and the child. */
export interface ChildQuery extends SessionQuery {
  /** The child's id as the caller gave it (`--child ID`): check it before it goes into a path or argv. */
  childId: string;
}

/** One run's usage, read from the CLI's own store as the store grows (`AgentRun.storeUsage`). */
export interface StoreUsage {
  /**
   * Reads what the store gained since the last call (never the whole store again); this run's usage so
   * far, null while there is none. Never throws. `sessionId` is the run's session id as known now (the
   * record's, else the stream's): a CLI that chooses its own id (Codex) names it only once the run began.
   */
  read(sessionId?: string | null): Usage | null;
  /**
   * This run's model turns among what `read` has read (each a request to the model and the tools it
   * asked for), for a CLI whose stream does not show them (Codex); absent when the stream shows them.
   */
  turns?(): number;
}

/**
 * What a driver is given (`AgentAdapter.drive`): the agent's stdin and stdout, which it holds for the
 * run's whole life, the prompt, and the run's event log to write what it says and hears.
 */
export interface DriverIo {
  /** The agent's stdin: the driver writes to it, and ends it when the agent is to exit. */
  input: Writable;
  /** The agent's stdout: nothing of it reaches the event log but what the driver writes there. */
  output: Readable;
  /** The run's prompt, byte-exact. */
  prompt: Buffer;
  /**
   * Appends one line (without its newline) to the run's event log, which the supervisor and every reader
   * parse with the adapter's `open` run: the driver writes there whatever the run's state and transcript
   * need, and nothing else is written there.
   */
  log(line: string): void;
  /** The supervisor's diagnostics (supervisor.log). */
  diag(message: string): void;
}

/** A running agent held by its driver (`AgentAdapter.drive`). */
export interface Driver {
  /**
   * Resolves once the driver is done with the agent — its turn over, its stdin ended (it is expected to
   * exit then; the supervisor stops it if it does not) — or the agent's stdout ended. Never rejects.
   */
  readonly done: Promise<void>;
  /**
   * Asks the agent to stop its turn, in its own protocol: what a cancel (a caller's, a cap's, a stall's)
   * does before its signals. Resolves once the agent answered, or could not be told.
   */
  cancel(): Promise<void>;
}

/** One agent CLI, as the core drives it. */
export interface AgentAdapter {
  /** The name `--cli` takes and the record keeps; the adapter's key in lib/agents/index.ts. */
  readonly cli: CliName;
  /**
   * The program that must be on PATH: start and resume look it up before anything is recorded
   * (`E_CMD_MISSING` otherwise).
   */
  readonly program: string;
  /**
   * Which of our options the CLI can honour. Start and resume refuse any other given with
   * `E_ARG_UNSUPPORTED` before anything is recorded; start applies `SUBAGENT_MODEL` / `SUBAGENT_VARIANT`
   * only where the CLI takes them. (Every CLI resumes: a session it cannot resume is refused by `launch`.)
   */
  readonly supports: { model: boolean; variant: boolean; agent: boolean; files: boolean };
  /**
   * Which spend caps (`--max-cost`, `--max-tokens`, `--max-turns`) the CLI can be held to, and how
   * (`CapMode`). Start and resume refuse a cap that is null here with `E_ARG_UNSUPPORTED` before anything
   * is recorded; `native` ones reach `launch` in `LaunchInput.caps`; the supervisor enforces `stream` ones.
   */
  readonly caps: CapSupport;
  /**
   * The signal that makes this CLI stop gracefully (tools killed, transcript closed): what `cancel` sends
   * by default, and what the supervisor passes to the agent's group when it is told to cancel. With
   * `SIGTERM` cancel signals every process of the run; with any other, only the agent, which is trusted
   * to stop its own tools (then TERM/KILL for what is left after the grace).
   */
  readonly gracefulSignal: NodeJS.Signals;
  /**
   * `ndjson`: stdout is one JSON event per line, read by the run `open` returns. `text`: stdout is the
   * answer itself (shell): `result` prints its tail and `search` reads it line by line; the run then
   * only marks activity and gives `result --follow` its lines.
   */
  readonly stream: 'text' | 'ndjson';
  /**
   * Environment variables that locate the CLI's own store (sessions, transcripts). Start records their
   * values (the caller's) in the run's `storeEnv` and resume keeps the earlier run's; the supervisor sets
   * them in the agent's environment, so a resume finds its session, and `childMessages` reads that store.
   */
  readonly storeEnvKeys: readonly string[];
  /**
   * A session id chosen before launch (Claude's --session-id), or null when the CLI chooses its own.
   * Start calls it once per name (run 1); the id is in start's output and the record at once.
   */
  chooseSessionId(): string | null;
  /**
   * The command line of a run. Called by the supervisor right before it starts the agent, and by resume
   * before it publishes the run (so a session the CLI cannot resume is refused then): pure, no I/O.
   * Throws when the run cannot be launched (a `SubagentError` to give the caller its code; a resume
   * without a usable session id).
   */
  launch(input: LaunchInput): Launch;
  /**
   * Opens one run for reading its event log (`AgentRun`): the supervisor opens each run it supervises
   * (with `threadUsageBefore`) and feeds it the log as it grows; `result`, `search`, `result --follow`
   * and `--child` open their own (with `onMessage`) to read the transcript.
   */
  open(run?: RunOptions): AgentRun;
  /**
   * Streams a child sub-agent's messages from the CLI's own transcript store, for `result --child` and
   * `search --child` when the event stream does not carry the child's words. Resolves false when the
   * store has no such child of this run; the core then shows what the parent's stream said of it.
   */
  childMessages?(q: ChildQuery, onMessage: (m: Message) => void): Promise<boolean>;
  /**
   * For an agent that is a peer the run talks with for its whole life (`--cli acp`), instead of a program
   * fed the prompt on stdin whose stdout is the event log: the supervisor starts `launch`'s command with
   * pipes for stdin and stdout (stderr still to the run's file) and gives them to the driver it makes
   * here; the event log is what the driver writes (`DriverIo.log`). Absent: the prompt is the agent's
   * stdin and its stdout the event log.
   */
  drive?(input: LaunchInput, io: DriverIo): Driver;
  /**
   * The program a run starts, when it is not always `program` (`--cli acp`: its agent's): start and
   * resume look this one up on PATH instead.
   */
  programOf?(input: Pick<LaunchInput, 'acp'>): string;
  /**
   * Runs in the supervisor right before the agent is started (the run is still `scheduled`), with the
   * agent's environment and cwd: one-time set-up the CLI does not do safely itself (OpenCode creates its
   * database without a lock). A failure is logged and the agent is started anyway.
   */
  prepare?(env: NodeJS.ProcessEnv, cwd: string): Promise<void>;
  /**
   * Removes what the CLI leaves in its own store that would harm the session (Gemini's empty second chat
   * file of a resumed session, which its own clean-up deletes with the session's chat): called by the
   * supervisor once the agent of a run exited, and by subagent-attach every second while the person is
   * in the session and once after. Never throws. Absent: nothing to remove.
   */
  tidy?(q: SessionQuery): void;
  /**
   * The CLI's own interactive mode, for `subagent-attach` (docs/attach.md): a person steps into a run's
   * session in their terminal, and what they do there becomes the next run of the name. Absent: the CLI
   * has no interactive resume we drive (attach is `E_ARG_UNSUPPORTED`).
   */
  interactive?: Interactive;
}

/** What `Interactive.launch` is given: the session to open, where. */
export interface InteractiveInput {
  /** The run's session (the record's `sessionId`). */
  sessionId: string;
  /** The run's directory, where the CLI is started. */
  cwd: string;
  /** The run's `--model`, null when it had none. */
  model: string | null;
  /** The run's `--agent` (Claude Code, Copilot, OpenCode), null or absent when it had none. */
  agent?: string | null;
}

/**
 * A CLI's interactive mode on a session. Its TUI writes nothing we read on stdout: what the person and the
 * agent said is read afterwards from the CLI's own store, where the session's file grew.
 */
export interface Interactive {
  /** The command that opens the session in the person's terminal. Pure. */
  launch(input: InteractiveInput): Launch;
  /** The file of the CLI's own store the session's events are appended to; null when there is none. */
  sessionFile(q: SessionQuery): string | null;
  /**
   * For a store that is not a file of appended lines (OpenCode's SQLite database): called before the CLI
   * starts, it marks what the session holds; what it returns, called once the person left, gives what the
   * session gained since, as lines of the format `open` reads. When present, the attached run's event log
   * is those lines, and `sessionFile` is not read.
   */
  gained?(q: SessionQuery): () => string[];
  /**
   * Opens a run over lines of that file: an attached run's event log holds the lines it gained while the
   * person was in it. Its messages include the person's prompts; its verdict is the exit status's.
   */
  open(run?: RunOptions): AgentRun;
}
