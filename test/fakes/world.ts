// The pieces every end-to-end test of a real agent CLI shares: a box whose environment points the pinned
// CLI at a fake model server and at nothing of the caller's (`cliBox`), a fake per file (`fileServer`) or a
// whole world per test (`fakeWorld`: its own fake, a box, async start/wait), and the helpers the tests
// read runs and requests with. The verbs run without blocking the event loop: the fake lives in the
// test's process (a spawnSync would hold its answers until the wait times out).
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, type TestContext } from 'node:test';
import { MARK_KEY, testBox, type Box } from '../support/box.js';
import { pidsWithCmdline } from '../support/procs.js';
import { recordOf, runDirPath, stderrTail } from '../support/registry.js';
import { assertOk, type RunOpts, type RunOut, type Verb } from '../support/run.js';
import { untilInRun } from '../support/wait.js';
import { startAnthropic } from './anthropic.js';
import { cliSetup, requireCli, type CliName } from './env.js';
import { startOpenAIChat } from './openai-chat.js';
import { startOpenAIResponses } from './openai-responses.js';
import { startGoogleGenAI } from './google-genai.js';
import type { FakeOptions, FakeRequest, FakeServer } from './script.js';

/** A box set up for one CLI: its runs work in `project`; `files` are the config files `cliSetup` wrote. */
export type CliBox = Box & { project: string; files: string[] };

export interface CliBoxOptions {
  /** The CLI's HOME below the box (default: the box itself). */
  home?: string;
  /** The runs' directory below the box (default `project`). */
  project?: string;
  /** Which pinned version runs (default: the first). */
  version?: string;
  /** The caller's variables dropped before the fake's environment is added (default: all of them). */
  clear?: RegExp;
  /** Our own settings over the defaults (SUBAGENT_WAIT_TIMEOUT_SEC 240). */
  env?: NodeJS.ProcessEnv;
}

/** A box (ended in `t.after`) whose every process runs `cli` against the fake at `baseUrl`. */
export function cliBox(t: Pick<TestContext, 'after'>, cli: CliName, label: string, baseUrl: string, o: CliBoxOptions = {}): CliBox {
  const box = testBox(t, label) as CliBox;
  const home = o.home ? join(box.dir, o.home) : box.dir;
  box.project = join(box.dir, o.project ?? 'project');
  mkdirSync(box.project, { recursive: true });
  const setup = cliSetup(cli, { home, baseUrl, version: o.version });
  box.files = setup.files;
  // Nothing of the caller's own setup for the CLI may leak in; then the fake's env (PATH has the pins first), and ours.
  for (const k of Object.keys(box.env)) if (!o.clear || o.clear.test(k)) delete box.env[k];
  // Generous waits: on a loaded machine one run can take well over a minute.
  Object.assign(box.env, setup.env, { SUBAGENT_DIR: box.registry, SUBAGENT_WAIT_TIMEOUT_SEC: '240', ...o.env, [MARK_KEY]: box.dir });
  // Every CLI's temporary files go under the box, removed with it, not into the shared /tmp (OpenCode's
  // runtime unpacks a 5.5 MB library there each run; Claude's tool output files would go to /tmp/claude-<uid>/).
  box.env.TMPDIR ??= join(box.dir, 'tmp');
  mkdirSync(box.env.TMPDIR, { recursive: true });
  if (cli === 'claude') box.env.CLAUDE_CODE_TMPDIR = join(box.dir, 'tmp');
  return box;
}

/** One fake for a whole test file, started when first asked for and closed in the file's `after`. */
export function fileServer(start: () => Promise<FakeServer>): () => Promise<FakeServer> {
  let srv: Promise<FakeServer> | null = null;
  after(async () => {
    await (await srv)?.close();
  });
  return () => (srv ??= start());
}

/** A label made unique to this process and call (letters and digits only). */
export function uniq(label: string): string {
  return `${label}${process.pid}x${Math.random().toString(36).slice(2, 8)}`;
}

/**
 * `first`, then `line(0)`, `line(1)`, … each after `sep`, up to the first line that makes the text at least
 * `min` long as `size` measures it (default: UTF-8 bytes): a big prompt, built in linear time. (Joining
 * the lines again for each new one is quadratic: 4–8 s of CPU for 300 KB, with the fake's event loop held.)
 */
export function grownText(
  first: string,
  line: (i: number) => string,
  min: number,
  sep = '',
  size: (s: string) => number = (s) => Buffer.byteLength(s),
): string {
  const parts = [first];
  const gap = size(sep);
  let n = size(first);
  for (let i = 0; n < min; i++) {
    const next = line(i);
    parts.push(next);
    n += gap + size(next);
  }
  return parts.join(sep);
}

/**
 * The big prompt of the Copilot, Gemini and OpenCode 300 KB tests: `REPLY:<tag>`, then lines with quotes,
 * `$HOME`, a backslash, a tab and non-ASCII text, to at least 300 K characters; no trailing newline.
 */
export function bigPromptLines(tag: string): string {
  return grownText(
    `REPLY:${tag}`,
    (i) => `line ${i} "quoted" 'single' $HOME \\backslash\ttab ünïcødé ${'x'.repeat(i % 50)}`,
    300 * 1024,
    '\n',
    (s) => s.length,
  );
}

/** Waits (without blocking the fake) for the run to end; returns its status record, asserted done. */
export async function waitDone(b: Box, name: string, t?: { diagnostic(m: string): void }): Promise<any> {
  const j = assertOk(await b.runAsync('status', ['--wait-terminal', '--name', name]), `status --wait-terminal ${name}`);
  const a = j.agents.find((x: any) => x.name === name);
  assert.equal(a?.status, 'done', JSON.stringify(j));
  t?.diagnostic(`${name} run ${a.run}: ${a.outcome} in ${a.durationMs} ms (start-subagent to done)`);
  return a;
}

/** Starts run `big` (`start` being the rest of its start-subagent arguments) on `prompt` written to a
 * file (`--prompt-file`); returns its status once done, asserted succeeded. */
export async function startBig(b: Box, start: string[], prompt: string, t?: { diagnostic(m: string): void }): Promise<any> {
  const file = join(b.dir, 'prompt.txt');
  writeFileSync(file, prompt);
  assertOk(b.run('start-subagent', ['--name', 'big', ...start, '--prompt-file', file]), 'start');
  const a = await waitDone(b, 'big', t);
  assert.equal(a.outcome, 'succeeded', `${a.error} ${stderrTail(b.registry, 'big')}`);
  return a;
}

/** Starts run `long` of `cli` in the box's project on `TOOL:<tool>:sleep 300; echo <marker>` and waits until
 * `what` (the tool's shell, the marker in its command line) runs; returns the run's record. */
export async function startLongTool(b: CliBox, cli: CliName, marker: string, tool: string, what: string): Promise<any> {
  const cmd = `sleep 300; echo ${marker}`;
  assertOk(b.run('start-subagent', ['--name', 'long', '--cli', cli, '--cwd', b.project, '--prompt', `TOOL:${tool}:${cmd}`]), 'start');
  await untilInRun(what, runDirPath(b.registry, 'long'), () => pidsWithCmdline(marker).length > 0);
  return recordOf(b.registry, 'long');
}

/** Starts run `name` of `cli` in the box's project (`--cwd`) on `prompt`, `more` after it; start's line, asserted ok (`start <name>`). */
export function startIn(b: CliBox, cli: CliName, name: string, prompt: string, more: string[] = []): any {
  return assertOk(b.run('start-subagent', ['--name', name, '--cli', cli, '--cwd', b.project, '--prompt', prompt, ...more]), `start ${name}`);
}

/** Resumes the cancelled run `long` (session `sessionId`) with `REPLY:<uniq(label)>`; asserts it succeeded in the
 * same session with that answer (`result` labels the result's check); returns the answer. */
export async function resumeAfterCancel(b: Box, sessionId: string, label: string, t: { diagnostic(m: string): void }, result = 'result'): Promise<string> {
  const later = uniq(label);
  assertOk(b.run('resume-subagent', ['--name', 'long', '--prompt', `REPLY:${later}`]), 'resume after cancel');
  const r = await waitDone(b, 'long', t);
  assert.equal(r.outcome, 'succeeded', `${r.error} ${stderrTail(b.registry, 'long', 2)}`);
  assert.equal(r.sessionId, sessionId);
  assert.equal(assertOk(b.run('result', ['--name', 'long', '--json']), result).lastAssistantText, later);
  return later;
}

/** Model requests whose last user text holds `needle`; with `main`, not the ones the fake answered apart (titles, classifiers). */
export function requestsWith(s: FakeServer, needle: string, { main = false } = {}): FakeRequest[] {
  return s.modelRequests().filter((r) => !(main && r.source === 'aux') && (r.conversation?.lastUserText ?? '').includes(needle));
}

/** The text blocks of the user messages of a request (Anthropic or chat completions), in order. */
export function userTexts(r: FakeRequest): string[] {
  const out: string[] = [];
  for (const m of ((r.body as any)?.messages ?? []) as any[]) {
    if (m.role !== 'user') continue;
    if (typeof m.content === 'string') out.push(m.content);
    else for (const part of m.content ?? []) if (part.type === 'text') out.push(part.text);
  }
  return out;
}

/** The distinct transcript items (run:index) a search matched (one item can match several times). */
export function items(search: any): string[] {
  return [...new Set<string>(search.matches.map((m: any) => `${m.run}:${m.index}`))];
}

export interface World {
  cli: CliName;
  srv: FakeServer;
  box: CliBox;
  /** The runs' directory (a project directory, not HOME: OpenCode limits itself in a home directory). */
  cwd: string;
  /** The CLI's config files `cliSetup` wrote (OpenCode's opencode.json, Codex's config.toml). */
  files: string[];
  run(verb: Verb, args: string[], opts?: RunOpts): Promise<RunOut>;
  /** start-subagent --cli <cli> --cwd <cwd>, asserted ok; its line. */
  start(name: string, prompt: string, extra?: string[]): Promise<any>;
  /** status --wait-terminal on one name; its record, asserted the only one and done. */
  wait(name: string): Promise<any>;
}

const START: Record<CliName, (o: FakeOptions) => Promise<FakeServer>> = {
  claude: startAnthropic,
  codex: startOpenAIResponses,
  copilot: startOpenAIChat,
  gemini: startGoogleGenAI,
  opencode: startOpenAIChat,
  qwen: startOpenAIChat,
};

/** A world for `cli`, or null (the test is skipped, or failed under CI) when the pinned CLI is missing. */
/** The fake model server `cli` talks to, started with `options`. */
export function startFake(cli: CliName, options: FakeOptions = {}): Promise<FakeServer> {
  return START[cli](options);
}

export async function fakeWorld(t: TestContext, cli: CliName, options: FakeOptions = {}): Promise<World | null> {
  if (!requireCli(t, cli)) return null;
  const srv = await START[cli](options);
  t.after(() => srv.close());
  const box = cliBox(t, cli, `e2e-${cli}`, srv.url, { home: 'home', project: 'work', env: { SUBAGENT_CANCEL_GRACE_MS: '1500' } });
  const cwd = box.project;
  const run = (verb: Verb, args: string[], opts: RunOpts = {}) => box.runAsync(verb, args, { cwd, ...opts });
  return {
    cli,
    srv,
    box,
    cwd,
    files: box.files,
    run,
    async start(name, prompt, extra = []) {
      const s = await run('start-subagent', ['--name', name, '--cli', cli, '--cwd', cwd, '--prompt', prompt, ...extra]);
      assert.equal(s.code, 0, `start ${name}: ${s.stdout} ${s.stderr}`);
      return s.json;
    },
    async wait(name) {
      const w = await run('status', ['--name', name, '--wait-terminal']);
      assert.equal(w.code, 0, `status --wait-terminal ${name}: ${w.stdout} ${w.stderr}`);
      assert.equal(w.json.agents.length, 1, w.stdout);
      const a = w.json.agents[0];
      assert.equal(a?.status, 'done', w.stdout);
      return a;
    },
  };
}
