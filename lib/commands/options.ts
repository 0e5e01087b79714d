import { parseCap, type CapKey } from './caps.js';
import type { Context } from './context.js';
import { parseRetries } from './on-limit.js';
import type { StartOptions } from './start.js';
import { DEFAULT_CLI, DEFAULT_STALL_SEC, parseLimit, parseMemoryFloor, parseStallSec, variablesOf, type Setting } from './settings.js';

/**
 * The options of a start, declared once (docs/design.md, "Start options"): each with its flag, its
 * field on a `--batch` line, the environment variable that is its default, how its value is read,
 * what a resume does with it, its lines of `--help` and its row of docs/contract.md. The verbs' flag
 * specs, their `--help` option lines, the batch line parser and the contract's table are made from it.
 */
export interface StartOption {
  /** The option of the library's `start` (and `resume`) it sets; `prompt`/`promptFile` are read into its `prompt`. */
  key: OptionKey;
  /** The flag without its dashes; null: none (`args` is the `-- ARGS`). */
  flag: string | null;
  /** The value's name in `--help` and the contract (`NAME`, `USD`); absent for a switch. */
  meta?: string;
  kind: OptionKind;
  /** A switch sets this (`--stop-children` sets `keepChildren` false); default true. */
  sets?: boolean;
  /** Its fields on a batch line (`file` and `files` are one option); empty: not a field. */
  fields: readonly string[];
  /** Flags given beside `--batch` are this field's default for every line; false: one run's own (refused with `--batch`). */
  batchDefault: boolean;
  /** Where its default comes from when it is not given: the environment variable (settings.ts), then the fallback (text for the contract). */
  env: Setting | null;
  fallback: string | null;
  /** What a resume does when it is not given: `kept` (the earlier run's), `anew` (given again or not at all), `fixed` (the run's; not a flag of resume), `no` (a start's only). */
  resume: 'kept' | 'anew' | 'fixed' | 'no';
  /** Its lines of `--help` (null: the verb does not take it): the first beside the flag, the others under it. */
  startHelp: readonly string[] | null;
  resumeHelp: readonly string[] | null;
  /** Its meaning in docs/contract.md's table (markdown). */
  doc: string;
  /** A good value of its field, for a batch line's error (`"args": […]`). */
  example?: string;
}

/**
 * How a value is read: `text` verbatim; `switch` a flag without value, a boolean on a line; `list` a
 * repeatable flag, an array of strings on a line (`files`: also one string, and the `file` field); `names`
 * a repeatable flag of comma lists, a string or an array of strings on a line;
 * `limit` a concurrency limit; `floor` a free-memory floor (a size); `stall` seconds or `off`; `cap` a cap or `none`;
 * `count` a whole number (--limit-retries).
 */
export type OptionKind = 'text' | 'switch' | 'list' | 'names' | 'files' | 'limit' | 'floor' | 'stall' | 'cap' | 'count';

/** The options as the library's `start` takes them, the prompt still text (`prompt`, or `promptFile` to read). */
export type OptionValues = Partial<Omit<StartOptions, 'prompt' | keyof Context>> & { prompt?: string | undefined; promptFile?: string | undefined };

export type OptionKey = keyof OptionValues;

/** In the order of `--help`; a batch line's fields are listed in this order too. */
export const START_OPTIONS: readonly StartOption[] = [
  {
    key: 'name',
    flag: 'name',
    meta: 'NAME',
    kind: 'text',
    fields: ['name'],
    batchDefault: false,
    env: null,
    fallback: null,
    resume: 'anew',
    startHelp: ['the run\'s name: segments of [A-Za-z0-9._-] joined by "/" (required)'],
    resumeHelp: ['the run to resume (required; it must be done or unknown with its agent dead)'],
    doc: 'required; see Names',
  },
  {
    key: 'prompt',
    flag: 'prompt',
    meta: 'TEXT',
    kind: 'text',
    fields: ['prompt'],
    batchDefault: false,
    env: null,
    fallback: null,
    resume: 'anew',
    startHelp: ['the prompt; "-" reads it from stdin (byte-exact)'],
    resumeHelp: ['the prompt; "-" reads it from stdin (byte-exact)'],
    doc: 'the prompt, or with `-` read from stdin (not on a batch line); it, `--prompt-file` or `--prompt -`: exactly one, non-empty. Stored and fed to the agent byte-exact (any size, NUL bytes and invalid UTF-8 included)',
  },
  {
    key: 'promptFile',
    flag: 'prompt-file',
    meta: 'PATH',
    kind: 'text',
    fields: ['promptFile'],
    batchDefault: false,
    env: null,
    fallback: null,
    resume: 'anew',
    startHelp: ['read the prompt from a file (byte-exact)'],
    resumeHelp: ['read the prompt from a file (byte-exact)'],
    doc: 'the prompt read from a file, byte-exact',
  },
  {
    key: 'cli',
    flag: 'cli',
    meta: 'CLI',
    kind: 'text',
    fields: ['cli'],
    batchDefault: true,
    env: 'cli',
    fallback: `\`${DEFAULT_CLI}\``,
    resume: 'fixed',
    startHelp: ['opencode (default) | claude | codex | copilot | gemini | qwen | acp | shell', '[SUBAGENT_CLI]'],
    resumeHelp: null,
    doc: '`opencode`, `claude`, `codex`, `copilot`, `gemini`, `qwen`, `acp` (any agent that speaks ACP: [agents/acp.md](agents/acp.md)), `shell`',
  },
  {
    key: 'acpCommand',
    flag: 'acp-command',
    meta: 'CMD',
    kind: 'text',
    fields: ['acpCommand'],
    batchDefault: true,
    env: 'acpCommand',
    fallback: null,
    resume: 'fixed',
    startHelp: ['with --cli acp: the agent, a preset (gemini | qwen | copilot | opencode)', 'or its command line, split on blanks  [SUBAGENT_ACP_COMMAND]'],
    resumeHelp: null,
    doc: 'with `--cli acp` (required there): a preset (`gemini`, `qwen`, `copilot`, `opencode`) or the command line of an agent that speaks ACP on stdio, split on blanks (no shell); kept by resumes. `E_ARG_INVALID` when `--cli acp` has none, `E_ARG_UNSUPPORTED` with another CLI',
  },
  {
    key: 'permissions',
    flag: 'permissions',
    meta: 'P',
    kind: 'text',
    fields: ['permissions'],
    batchDefault: true,
    env: null,
    fallback: '`approve-reads`',
    resume: 'kept',
    startHelp: ["with --cli acp: how the agent's permission requests are answered:", 'approve-reads (default) | approve-all | deny'],
    resumeHelp: ["an ACP run's policy: approve-reads | approve-all | deny (default: the run's)"],
    doc: "with `--cli acp`: how the agent's permission requests are answered — `approve-reads` (reads, searches and fetches allowed, the rest refused), `approve-all`, `deny`; every request is in the event log, and a refused one ends the run `failed`, `permission-denied` ([agents/acp.md](agents/acp.md)). `E_ARG_INVALID` for another value, `E_ARG_UNSUPPORTED` with another CLI",
  },
  {
    key: 'cwdDir',
    flag: 'cwd',
    meta: 'DIR',
    kind: 'text',
    fields: ['cwd'],
    batchDefault: true,
    env: null,
    fallback: "the caller's directory",
    resume: 'fixed',
    startHelp: ["the agent's working directory (default: here)"],
    resumeHelp: ["must be the run's own directory (a session belongs to its cwd)"],
    doc: "the agent's working directory; stored as its real path. A resume's must be the run's own (`E_CWD_MISMATCH`)",
  },
  {
    key: 'model',
    flag: 'model',
    meta: 'M',
    kind: 'text',
    fields: ['model'],
    batchDefault: true,
    env: 'model',
    fallback: null,
    resume: 'kept',
    startHelp: ['model for the agent CLI                         [SUBAGENT_MODEL]'],
    resumeHelp: ["default: the run's model"],
    doc: "mapped to the CLI's own flag (docs/agents/); `E_ARG_UNSUPPORTED` where the CLI has none. The variable applies only to CLIs that take a model",
  },
  {
    key: 'variant',
    flag: 'variant',
    meta: 'V',
    kind: 'text',
    fields: ['variant'],
    batchDefault: true,
    env: 'variant',
    fallback: null,
    resume: 'kept',
    startHelp: ['model variant / reasoning effort               [SUBAGENT_VARIANT]'],
    resumeHelp: ["default: the run's variant"],
    doc: "the model variant or reasoning effort, mapped to the CLI's own flag; `E_ARG_UNSUPPORTED` where the CLI has none. The variable applies only to CLIs that take one",
  },
  {
    key: 'agent',
    flag: 'agent',
    meta: 'A',
    kind: 'text',
    fields: ['agent'],
    batchDefault: true,
    env: null,
    fallback: null,
    resume: 'fixed',
    startHelp: ["the agent CLI's own agent / profile"],
    resumeHelp: null,
    doc: "the CLI's own named agent or profile; `E_ARG_UNSUPPORTED` where the CLI has none",
  },
  {
    key: 'files',
    flag: 'file',
    meta: 'PATH',
    kind: 'files',
    fields: ['file', 'files'],
    batchDefault: false,
    env: null,
    fallback: null,
    resume: 'no',
    startHelp: ['attach a file (repeatable; where the CLI supports it)'],
    resumeHelp: null,
    doc: 'attach a file (repeatable; on a line a string or an array), where the CLI supports it',
    example: '["a.ts", "b.ts"]',
  },
  {
    key: 'extraArgs',
    flag: null,
    kind: 'list',
    fields: ['args'],
    batchDefault: false,
    env: null,
    fallback: null,
    resume: 'kept',
    startHelp: null,
    resumeHelp: null,
    doc: 'the `-- ARGS…`: passed verbatim to the agent CLI, stored, and repeated on every resume; a resume given them replaces them',
    example: '["--permission-mode", "acceptEdits"]',
  },
  {
    key: 'worktree',
    flag: 'worktree',
    kind: 'switch',
    fields: ['worktree'],
    batchDefault: true,
    env: null,
    fallback: null,
    resume: 'fixed',
    startHelp: ['run in a new git worktree on branch subagents/NAME (under the registry)'],
    resumeHelp: null,
    doc: 'run in a new git worktree `<registry>/worktrees/<name>` on a new branch `subagents/<name>`, made from `HEAD` or `--base REF` of the repository holding `--cwd` (the agent runs in the same sub-directory of it). The record shows `worktree:{path, branch, base, repo}`; resume reuses it; it stays after the run (see docs/worktrees.md)',
  },
  {
    key: 'base',
    flag: 'base',
    meta: 'REF',
    kind: 'text',
    fields: ['base'],
    batchDefault: true,
    env: null,
    fallback: '`HEAD`',
    resume: 'no',
    startHelp: ["the worktree's starting point (default HEAD)"],
    resumeHelp: null,
    doc: "the worktree's starting point; needs `--worktree`",
  },
  {
    key: 'after',
    flag: 'after',
    meta: 'NAMES',
    kind: 'names',
    fields: ['after'],
    batchDefault: false,
    env: null,
    fallback: null,
    resume: 'anew',
    startHelp: [
      'start only once the latest run of each NAME (comma-separated; repeatable)',
      'is done and succeeded; it waits scheduled (waitingFor), and ends failed,',
      'reason dependency-failed, when one did not succeed',
    ],
    resumeHelp: ['resume only once the latest run of each NAME is done (see start-subagent --help)'],
    doc: 'the run waits, `scheduled` with `waitingFor`, until the latest run of each name (comma-separated, repeatable; on a line a string or an array; names of this registry, lines of the same batch too) is `done`; then it starts, as queued runs do. When one did not succeed it never starts: `done`, `failed`, `reason` `dependency-failed`, its `error` naming which. An unknown name (`E_NAME_NOT_FOUND`) and a cycle (`E_ARG_INVALID`, `details.cycle`) are refused. See Runs that follow runs',
    example: '"plan" or ["plan", "review"]',
  },
  {
    key: 'afterAny',
    flag: 'after-any',
    kind: 'switch',
    fields: ['afterAny'],
    batchDefault: true,
    env: null,
    fallback: null,
    resume: 'anew',
    startHelp: ['with --after: start once they are done, whatever their outcome'],
    resumeHelp: ['with --after: resume once they are done, whatever their outcome'],
    doc: 'with `--after`: the run starts once every name is `done`, whatever its outcome (never `dependency-failed`)',
  },
  {
    key: 'maxConcurrent',
    flag: 'max-concurrent',
    meta: 'N',
    kind: 'limit',
    fields: [],
    batchDefault: true,
    env: 'maxConcurrent',
    fallback: "the registry's",
    resume: 'anew',
    startHelp: [
      'at most N runs of this registry run at once; the rest wait as scheduled,',
      'queued, and start in order (0 removes the limit)  [SUBAGENT_MAX_CONCURRENT]',
    ],
    resumeHelp: [
      'at most N runs of this registry run at once; the rest wait as scheduled,',
      'queued, and start in order (0 removes the limit)  [SUBAGENT_MAX_CONCURRENT]',
    ],
    doc: "sets the registry's concurrency limit (see below); `0` removes it; refused with `--executor slurm` (and the variable does not apply to `slurm` runs)",
  },
  {
    key: 'minFreeMemory',
    flag: 'min-free-memory',
    meta: 'SIZE',
    kind: 'floor',
    fields: [],
    batchDefault: true,
    env: 'minFreeMemory',
    fallback: "the registry's",
    resume: 'anew',
    startHelp: [
      'a queued run starts only while the machine has SIZE of memory available',
      '(e.g. 4G; kept by the registry like --max-concurrent; 0 removes it)  [SUBAGENT_MIN_FREE_MEMORY]',
    ],
    resumeHelp: [
      'a queued run starts only while the machine has SIZE of memory available',
      '(e.g. 4G; kept by the registry like --max-concurrent; 0 removes it)  [SUBAGENT_MIN_FREE_MEMORY]',
    ],
    doc: "sets the registry's free-memory floor (see [memory.md](memory.md)): a run waits `scheduled`, queued in order, until the machine has that much memory available (K, M, G, T: powers of 1024); `0` removes it; refused with `--executor slurm`",
  },
  {
    key: 'executor',
    flag: 'executor',
    meta: 'E',
    kind: 'text',
    fields: ['executor'],
    batchDefault: true,
    env: 'executor',
    fallback: '`local`',
    resume: 'kept',
    startHelp: [
      "where the run's supervisor runs: local (default) | slurm (a batch job;",
      'the registry must be on a filesystem the nodes share)  [SUBAGENT_EXECUTOR]',
    ],
    resumeHelp: ["local | slurm (default: the run's own executor)"],
    doc: "where the run's supervisor runs: `local` (a detached process of this machine) or `slurm` (a batch job whose one process is the supervisor; the registry must be on a filesystem the nodes share). See [scaling.md](scaling.md)",
  },
  {
    key: 'executorArgs',
    flag: 'slurm-arg',
    meta: 'ARG',
    kind: 'list',
    fields: ['slurmArgs'],
    batchDefault: true,
    env: null,
    fallback: null,
    resume: 'kept',
    startHelp: ["one sbatch option for the run's job, whole (a partition, a time limit…;", 'repeatable; kept for resumes)'],
    resumeHelp: ["an sbatch option for the job (repeatable; default: the run's own)"],
    doc: "an `sbatch` option for the run's job, passed through (repeatable, e.g. `--slurm-arg=--partition=gpu --slurm-arg=--time=60`); `--array`, `--requeue`, `--wrap` are refused (`E_ARG_INVALID`), and so are options the cluster refuses when asked first (`sbatch --test-only`: `E_ARG_INVALID` with its words, nothing recorded)",
    example: '["--partition=gpu", "--time=30"]',
  },
  {
    key: 'stallAfterSec',
    flag: 'stall-after',
    meta: 'SEC',
    kind: 'stall',
    fields: ['stallAfter'],
    batchDefault: true,
    env: 'stallSec',
    fallback: String(DEFAULT_STALL_SEC),
    resume: 'kept',
    startHelp: [
      'report the run stalled after SEC seconds without a sign of work (output or',
      'CPU time; docs/stalls.md); default 600, 0 or off: never  [SUBAGENT_STALL_SEC]',
    ],
    resumeHelp: ['seconds without a sign of work before the run counts as stalled; 0 or off:', "never (default: the run's)"],
    doc: 'seconds without a sign of work (output, or CPU time of the agent\'s processes) before the run is reported stalled; fractions allowed; `0` or `off`: not watched ([stalls.md](stalls.md)). On a line a number, or a string as the flag takes it (`"off"`)',
  },
  {
    key: 'stallAction',
    flag: 'stall-action',
    meta: 'A',
    kind: 'text',
    fields: ['stallAction'],
    batchDefault: true,
    env: null,
    fallback: '`none`',
    resume: 'kept',
    startHelp: ['none (default: only report it) | cancel (cancel a stalled run)'],
    resumeHelp: ["none | cancel (default: the run's)"],
    doc: '`none`: only the flag; `cancel`: the supervisor cancels a stalled run (`endReason:"stalled"`). `cancel` with stalls off is `E_ARG_INVALID`; a line with `stallAfter` off does not take the default of `--batch`',
  },
  {
    key: 'onEnd',
    flag: 'on-end',
    meta: 'CMD',
    kind: 'text',
    fields: ['onEnd'],
    batchDefault: true,
    env: null,
    fallback: null,
    resume: 'kept',
    startHelp: ["run CMD (/bin/sh -c) once when the run ends, the run's status entry on stdin", '(docs/hooks.md)'],
    resumeHelp: ['the end hook (default: the run\'s; "" for none)'],
    doc: "run `CMD` with `/bin/sh -c`, once, when the run ends (`done`, or `unknown` when announced with `subagent-status --announce`), detached, with the run's status entry on stdin ([hooks.md](hooks.md)); an executable `<registry>/hooks/on-end` runs for every run as well. Only from a trusted registry ([security.md](security.md)): into one that runs no hooks, `E_REGISTRY_UNTRUSTED`. A resume given `''` drops it",
  },
  {
    key: 'keepChildren',
    flag: 'keep-children',
    kind: 'switch',
    fields: ['keepChildren'],
    batchDefault: true,
    env: null,
    fallback: null,
    resume: 'kept',
    startHelp: [
      'keep the processes the agent leaves running when it exits (default: stopped',
      '2 s after it exits, before the run is done); cancel still reaches them.',
      'Resumes keep it',
    ],
    resumeHelp: ['keep the processes the agent leaves running (see start-subagent --help);'],
    doc: 'keep what the agent leaves running when it exits (background children; the children of a crashed agent). Without it they get 2 s to end by themselves, then TERM and KILL, and only then is the run `done`. Kept processes are listed in the record\'s `leftovers` and stay reachable by `subagent-cancel` ([states.md](states.md), "A done run is final")',
  },
  {
    key: 'keepChildren',
    flag: 'stop-children',
    kind: 'switch',
    sets: false,
    fields: [],
    batchDefault: false,
    env: null,
    fallback: null,
    resume: 'kept',
    startHelp: null,
    resumeHelp: ["  or stop them (the default of a new run); default: the run's"],
    doc: "resume only: drops the earlier run's `--keep-children`",
  },
  {
    key: 'onLimit',
    flag: 'on-limit',
    meta: 'A',
    kind: 'text',
    fields: ['onLimit'],
    batchDefault: true,
    env: 'onLimit',
    fallback: '`fail`',
    resume: 'kept',
    startHelp: [
      'fail (default: a usage limit ends the run) | wait (parked until the limit',
      'resets, then resumed in its session; docs/states.md)  [SUBAGENT_ON_LIMIT]',
    ],
    resumeHelp: ["fail | wait (default: the run's)"],
    doc: '`fail`: a run that hits a usage limit ends `failed`, `reason` `rate-limit`. `wait`: when the CLI says when the limit resets (`resetsAt`), the run is *parked* — its next attempt waits, `running` with `parkedUntil`, until the reset plus a little jitter, then resumes its session with `--limit-prompt` — up to `--limit-retries` attempts in a row (see Waiting out a limit); a limit with no reset time ends the run as with `fail`',
  },
  {
    key: 'limitPrompt',
    flag: 'limit-prompt',
    meta: 'TEXT',
    kind: 'text',
    fields: ['limitPrompt'],
    batchDefault: true,
    env: null,
    fallback: 'the continuation prompt (see Waiting out a limit)',
    resume: 'kept',
    startHelp: ['with --on-limit wait: the prompt of the attempt after the reset'],
    resumeHelp: ["the prompt after a limit's reset (default: the run's)"],
    doc: "with `--on-limit wait`: the prompt an attempt after a limit's reset is resumed with (the earlier attempt's own prompt when its agent never began)",
  },
  {
    key: 'limitRetries',
    flag: 'limit-retries',
    meta: 'N',
    kind: 'count',
    fields: ['limitRetries'],
    batchDefault: true,
    env: null,
    fallback: '`3`',
    resume: 'kept',
    startHelp: ['with --on-limit wait: at most N attempts after a limit in a row (default 3)'],
    resumeHelp: ["at most N attempts after a limit in a row (default: the run's)"],
    doc: 'with `--on-limit wait`: how many attempts after a limit a name makes in a row (0–1000); the limit after the last ends the run `failed`, `rate-limit`',
  },
  ...capOptions(),
];

/** The caps, one option each (docs/contract.md, "Spend caps"); how they are read and held is caps.ts's. */
function capOptions(): StartOption[] {
  const cap = (key: OptionKey, flag: string, meta: string, field: string, startHelp: string[], resumeHelp: string[], doc: string): StartOption => ({
    key,
    flag,
    meta,
    kind: 'cap',
    fields: [field],
    batchDefault: true,
    env: null,
    fallback: null,
    resume: 'kept',
    startHelp,
    resumeHelp,
    doc: `${doc}; \`none\` drops one a resume would keep; on a line a number, the flag's text, or \`null\``,
  });
  const spend =
    'a spend cap (see Spend caps): past it, the run is stopped and ends `failed` with the cap as its `reason`; `E_ARG_UNSUPPORTED` where the CLI cannot be held to it';
  return [
    cap(
      'maxCostUsd',
      'max-cost',
      'USD',
      'maxCost',
      ['spend caps: past one, the run is stopped and ends failed with the cap'],
      ["spend caps (see start-subagent --help); default: the earlier run's,"],
      `US dollars above 0: ${spend}`,
    ),
    cap(
      'maxTokens',
      'max-tokens',
      'N',
      'maxTokens',
      ["  as its reason (max-cost, max-tokens, max-turns); held by the CLI's own limit"],
      ['  "none" drops one'],
      `a whole number ≥ 1 of tokens: ${spend}`,
    ),
    cap(
      'maxTurns',
      'max-turns',
      'N',
      'maxTurns',
      [
        '  or by the supervisor, per CLI (docs/agents/); E_ARG_UNSUPPORTED where the',
        '  CLI reports nothing to hold it to. Resumes keep them ("none" drops one)',
      ],
      [],
      `a whole number ≥ 1 of turns: ${spend}`,
    ),
    cap(
      'maxTimeSec',
      'max-time',
      'SEC',
      'maxTime',
      ['stop the run once its agent has run SEC seconds (wall clock; every CLI):', 'it ends failed with reason max-time. Resumes keep it ("none" drops it)'],
      ["the time cap (see start-subagent --help); default: the earlier run's"],
      'the time cap: the agent may run SEC seconds, then it is stopped and ends `failed` with `reason` `max-time` (every CLI; see Spend caps)',
    ),
    cap(
      'maxMemoryBytes',
      'max-memory',
      'SIZE',
      'maxMemory',
      [
        'stop the run once its processes hold more than SIZE of memory (RSS summed,',
        'e.g. 2G; every CLI): it ends failed with reason max-memory. Resumes keep it',
      ],
      ["the memory cap (see start-subagent --help); default: the earlier run's"],
      "the memory cap: once the resident memory of the agent's process tree (summed; K, M, G, T: powers of 1024; at least `1M`) passes SIZE, the run is stopped and ends `failed` with `reason` `max-memory` (every CLI; see [memory.md](memory.md))",
    ),
  ];
}

export type Verb = 'start' | 'resume';

/** The options a verb takes as flags, in the order of its `--help`. */
export function flagOptions(verb: Verb): StartOption[] {
  return START_OPTIONS.filter((o) => o.flag !== null && (verb === 'start' ? o.startHelp : o.resumeHelp) !== null);
}

/**
 * An option's value from a verb's flag, read as its kind says (`--max-concurrent 4` is 4, `--max-cost
 * none` null); the value is the flag's text, its texts when repeatable, true for a switch given.
 */
export function flagValue(o: StartOption, value: string | string[] | true): OptionValues[OptionKey] {
  const text = typeof value === 'string' ? value : '';
  switch (o.kind) {
    case 'switch':
      return o.sets ?? true;
    case 'list':
    case 'names':
    case 'files':
      return Array.isArray(value) ? value : [text];
    case 'limit':
      return parseLimit(text, `--${o.flag}`);
    case 'floor':
      return parseMemoryFloor(text, `--${o.flag}`);
    case 'stall':
      return parseStallSec(text, `--${o.flag}`);
    case 'cap':
      return parseCap(o.key as CapKey, text);
    case 'count':
      return parseRetries(text, `--${o.flag}`);
    default:
      return text;
  }
}

/** Where `--help` puts an option's text: its flag is padded to this column. */
const HELP_COLUMN = 23;

/** The option lines of a verb's `--help`. */
export function helpLines(verb: Verb): string {
  const out: string[] = [];
  for (const o of flagOptions(verb)) {
    const [first = '', ...rest] = (verb === 'start' ? o.startHelp : o.resumeHelp)!;
    const head = `  --${o.flag}${o.meta ? ` ${o.meta}` : ''}`;
    out.push(first === '' ? head : `${head.padEnd(HELP_COLUMN - 1)} ${first}`);
    for (const line of rest) out.push(' '.repeat(HELP_COLUMN) + line);
  }
  return out.join('\n');
}

/** The fields a batch line may hold, in order. */
export const BATCH_FIELDS: readonly string[] = START_OPTIONS.flatMap((o) => o.fields);

const RESUME_TEXT: Record<StartOption['resume'], string> = {
  kept: "the earlier run's unless given",
  anew: 'given anew',
  fixed: "the run's",
  no: '—',
};

/** docs/contract.md's table of the options of start-subagent (and resume-subagent), made from START_OPTIONS. */
export function optionsTable(): string {
  const rows = ['| flag | batch line | default | resume | meaning |', '|---|---|---|---|---|'];
  for (const o of START_OPTIONS) {
    // The flag alone: its value's name is in the synopsis above the table.
    const flag = o.flag === null ? '`-- ARGS…`' : `\`--${o.flag}\``;
    const fields = o.fields.length ? o.fields.map((f) => `\`${f}\``).join(', ') : '—';
    const byDefault = [
      ...(o.env
        ? [
            variablesOf(o.env)
              .map((v) => `\`${v}\``)
              .join(' (') + (variablesOf(o.env).length > 1 ? ')' : ''),
          ]
        : []),
      ...(o.fallback ? [o.fallback] : []),
    ];
    rows.push(`| ${flag} | ${fields} | ${byDefault.length ? byDefault.join(', else ') : '—'} | ${RESUME_TEXT[o.resume]} | ${o.doc} |`);
  }
  return rows.join('\n');
}
