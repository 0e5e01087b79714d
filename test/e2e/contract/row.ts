// The contract suite's table: what every agent CLI is put through (test/e2e/contract-*.test.ts) and, per
// CLI, a row of what differs — how its test gets a fake and a box, the names its tests have always had, its
// run names, its tool's name, what it answers and reports, and the checks only it can make (hooks). Each
// CLI's row is in its own file beside this one; `ROWS` (rows.ts) lists them: adding a CLI adds its file
// and its line there, and its own extras go in test/e2e/<cli>.test.ts.
import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import { requireCli, type CliName } from '../../fakes/env.js';
import type { FakeOptions, FakeRequest, FakeServer } from '../../fakes/script.js';
import { cliBox, fakeWorld, grownText, uniq, waitDone, type CliBox, type CliBoxOptions } from '../../fakes/world.js';
import { stderrTail } from '../../support/registry.js';
import { assertOk } from '../../support/run.js';

/** One contract test's world: the CLI's box and fake, and its start and wait. */
export interface Ctx {
  t: TestContext;
  cli: CliName;
  b: CliBox;
  srv: FakeServer;
  /** The start-subagent arguments that say where the row's runs work (`--cwd <project>`, or none). */
  where: string[];
  /** start-subagent --cli <cli> (in the box's project where the row says so) on `prompt`, `extra` after it; its line, asserted ok. */
  start(name: string, prompt: string, extra?: string[]): Promise<any>;
  /** Waits (without blocking the fake) until the run is done; its status entry. */
  wait(name: string): Promise<any>;
}

/**
 * How a row's test gets its world: null when the pinned CLI is missing (skipped, or failed under CI).
 * `fake`: the options of the test's own fake, for a row whose tests each have one (`worlds`); a row whose
 * tests share the file's fake (`boxed`) has none to give, and a scenario that needs them is the former's.
 */
export type Open = (t: TestContext, label: string, fake?: FakeOptions) => Promise<Ctx | null>;

/** A row whose tests share one fake for the file (`server`) and each have a box of `cliBox`; with `cwd`, runs work in the box's project (`--cwd`). */
export function boxed(cli: CliName, server: () => Promise<FakeServer>, o: CliBoxOptions & { cwd: boolean }): Open {
  return async (t, label) => {
    if (!requireCli(t, cli, o.version)) return null;
    const srv = await server();
    const b = cliBox(t, cli, `e2e-${cli}-${label}`, srv.url, o);
    const where = o.cwd ? ['--cwd', b.project] : [];
    return {
      t,
      cli,
      b,
      srv,
      where,
      start: async (name, prompt, extra = []) =>
        assertOk(b.run('start-subagent', ['--name', name, '--cli', cli, ...where, '--prompt', prompt, ...extra]), 'start'),
      wait: (name) => waitDone(b, name, t),
    };
  };
}

/** A row whose tests each have a world of their own (`fakeWorld`: its own fake, started with the options the test gives). */
export function worlds(cli: CliName): Open {
  return async (t, _label, fake = {}) => {
    const w = await fakeWorld(t, cli, fake);
    return w && { t, cli, b: w.box, srv: w.srv, where: ['--cwd', w.cwd], start: w.start, wait: w.wait };
  };
}

/** What the session scenario tells a row's hooks. */
export interface SessionRun {
  c: Ctx;
  /** The words of run 1's tool call and of run 2's answer. */
  one: string;
  two: string;
  started: any;
  a1: any;
  a2?: any;
  /** The requests that carried run 1's and run 2's prompt (`main`: the row's lookup). */
  first?: FakeRequest;
  second?: FakeRequest;
}

/** start → wait → result (a tool call); resume continues the same session; search sees both runs. */
export interface SessionSpec {
  title: string;
  /** The run's name. */
  name: string;
  /** More arguments of start (given the test's world), and of resume. */
  start?: (c: Ctx) => string[];
  resume?: string[];
  /** The shell tool's name in the directive (`TOOL:<tool>:echo …`), and its headline in the transcript. */
  tool: string;
  headline: string;
  /** The tool search finds item 1:1 alone (else: at least one match). */
  oneItem?: boolean;
  /** The requests are looked up without those the fake answered apart (titles). */
  main?: boolean;
  /** The message of run 2's same-session check. */
  sameSession?: string;
  /** Whether we choose the session id before launch (else the CLI does, once the stream starts). */
  chosen: boolean;
  started?(started: any): void;
  /** After run 1's checks; after run 2's; at the end. */
  run1?(x: SessionRun): void | Promise<void>;
  run2?(x: SessionRun): void | Promise<void>;
  end?(x: SessionRun, both: any): void;
}

/** What the cancel scenario tells a row's hooks. */
export interface CancelRun {
  c: Ctx;
  marker: string;
  started: any;
  runMarker: string;
  a?: any;
}

/** Cancel during a long shell tool: no process of the run is left, cancelled is recorded. */
export interface CancelSpec {
  title: string;
  /** The run's name (default `long`). */
  name?: string;
  /** The marker's label (made unique to the test). */
  marker: string;
  /** The tool's command line, holding `marker`, which runs until cancelled (default `sleep 300; echo <marker>`). */
  command?: (marker: string) => string;
  /** The shell tool's name in the directive (default `Bash`). */
  tool?: string;
  /** What the wait for the running tool says. */
  running: string;
  /** The fake of a row whose tests have their own. */
  fake?: FakeOptions;
  /** At least this many processes carry the run's marker while the tool runs; the message. */
  procs: number;
  procsWhy: (n: number) => string;
  signal: 'INT' | 'TERM';
  signalWhy?: string;
  /** Gone as soon as the run is done (else: until no process is left): the tool, the processes with the run's marker; the messages. */
  goneAtOnce?: { tool: string; marker?: string };
  /** While the tool runs (status shows it running); once cancelled; at the end. */
  during?(x: CancelRun, running: any): void;
  cancelled?(x: CancelRun): void;
  end?(x: CancelRun): void | Promise<void>;
}

/** What the child scenario's plan is: the prompt, and what the child and its parent answer. */
export interface ChildPlan {
  prompt: string;
  description: string;
  /** The child's answer (result --child). */
  answer: string;
  [word: string]: string;
}

/** A sub-agent shows in children; result --child returns its answer; search --child finds its words; other ids are no child. */
export interface ChildSpec {
  title: string;
  name: string;
  plan: () => ChildPlan;
  id: RegExp;
  idWhy?: string;
  toolUses?: [number, string?];
  /** Why result --child answers what it does, and where it read it. */
  answerWhy?: string;
  sourceWhy: string;
  /** Ids that are not the run's children beside its own session id, and the verbs asked with them. */
  madeUp: string;
  foreignVerbs?: Array<'result' | 'search'>;
  /** Right after the start; after the common child checks (the parent's answer, …); at the end. */
  started?(c: Ctx, p: ChildPlan): void | Promise<void>;
  child?(c: Ctx, p: ChildPlan, a: any, child: any): void | Promise<void>;
  end?(c: Ctx, p: ChildPlan, a: any, child: any): void | Promise<void>;
}

/** A 300 KB prompt arrives whole, byte for byte, at the model. */
export interface BigSpec {
  title: string;
  tag: () => string;
  prompt: (tag: string) => string;
  main?: boolean;
  /** What the model got, checked against `prompt` (`req`: the request that holds the tag; `a`: the run's status). */
  arrived(c: Ctx, req: FakeRequest, prompt: string, a: any): void;
}

/** Status shows the session id the CLI chose while the run still runs. */
export interface BusySpec {
  title: string;
  marker: () => string;
  tool: string;
  fake?: FakeOptions;
  /** Why start's line has no session id; what the waits say. */
  choosesWhy: string;
  running: string;
  recorded: string;
  /** The session id as the CLI's stream names it in events.log, its shape, and why status must show it. */
  reported: RegExp;
  shape: RegExp;
  reportedWhy: string;
}

/** A run that fails: started on `prompt` (with `extra`), it ends failed with the exit status `exit` and an error that holds `error` (a string) or matches it. */
export interface Failure {
  name: string;
  prompt: string;
  extra?: string[];
  exit: number;
  error: string | RegExp | RegExp[];
  /** Before its start (after the runs before it started); once it is checked, the row's own checks of it. */
  before?(c: Ctx): void | Promise<void>;
  checked?(c: Ctx, a: any): void | Promise<void>;
}

/** The API's errors (an HTTP 500 among them), each run failed with the CLI's own words and exit status, and the row's other failures. */
export interface ErrorsSpec {
  title: string;
  /** The failing runs, started in this order (the one whose CLI retries longest first). */
  failures(c: Ctx): Failure[];
  /** More runs the row checks, started after them. */
  also?(c: Ctx): void | Promise<void>;
  /** The order they are checked in: failures by name and the row's own steps between them (default: the failures as started, then `end`). */
  order?: Array<string | ((c: Ctx) => void | Promise<void>)>;
  end?(c: Ctx): void | Promise<void>;
}

export interface Row {
  /** The `--cli` its runs are started with (`acp`: an agent of the pinned CLIs in ACP mode, test/e2e/contract/acp.ts). */
  cli: CliName | 'acp';
  open: Open;
  errors: ErrorsSpec;
  session?: SessionSpec;
  cancel: CancelSpec;
  /** None for a row whose protocol shows no sub-agents (`acp`). */
  child?: ChildSpec;
  big: BigSpec;
  busy?: BusySpec;
}

/** `got` is `prompt`: the same size, the same bytes. */
export function sameText(got: string, prompt: string): void {
  assert.equal(Buffer.byteLength(got), Buffer.byteLength(prompt), 'same size');
  assert.ok(got === prompt, 'same bytes');
}

/** A child told to look around that answers a word of its own (`TASK:look around:REPLY:<answer>`). */
export function lookAround(): ChildPlan {
  const answer = uniq('child-answer');
  return { prompt: `TASK:look around:REPLY:${answer}`, description: 'look around', answer };
}

/** search --child reads the child's own transcript: its prompt (`REPLY:…`) is there, the parent's (`TASK:…`) is not. */
export function searchChildPrompt(c: Ctx, name: string, child: string, why?: string): void {
  const sc = assertOk(c.b.run('search', ['--name', name, '--child', child, '--pattern', 'REPLY:']), 'search --child');
  assert.ok(sc.matches.length >= 1 && sc.matches.every((m: any) => m.role === 'user'), JSON.stringify(sc));
  assert.ok(!sc.matches.some((m: any) => m.snippet.includes('TASK:')), why ?? JSON.stringify(sc));
}

/** The 300 KB prompt Claude and Qwen are given: `REPLY:<tag>`, then lines of quotes, back-slashes, tabs, `--`, `$HOME` and non-ASCII text. */
export function bigPromptBlock(tag: string): string {
  return grownText(`REPLY:${tag}\n`, (i) => `line ${i}: ünïcödé ☃ "quotes" \\ back\\slash \t tab -- not-a-flag $HOME \`x\`\n`, 300 * 1024);
}

/**
 * Run `gone` (started with the failures) succeeded; once `forget` took its session out of the CLI's store, a
 * resume of it on `prompt` fails with the CLI's words (`error` of the run before: the whole of them, or a pattern) and `exit`;
 * the run before and the failed resume.
 */
export async function resumeLost(
  c: Ctx,
  forget: (g: any) => void,
  prompt: string,
  exit: number,
  error: (g: any) => string | RegExp,
): Promise<{ g: any; g2: any }> {
  const g = await c.wait('gone');
  assert.equal(g.outcome, 'succeeded', `${g.error} ${stderrTail(c.b.registry, 'gone')}`);
  forget(g);
  assertOk(c.b.run('resume-subagent', ['--name', 'gone', '--prompt', prompt]), 'resume gone');
  const g2 = await c.wait('gone');
  assert.equal(g2.outcome, 'failed');
  assert.equal(g2.exitCode, exit);
  const want = error(g);
  if (typeof want === 'string') assert.equal(g2.error, want);
  else assert.match(g2.error, want, g2.error);
  return { g, g2 };
}
