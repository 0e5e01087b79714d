// A world for an end-to-end test of one real agent CLI: its own fake model server, a box (registry,
// HOME, the marker every process of the test carries) and an environment that points the pinned CLI at
// the fake and at nothing of the caller's. The verbs run without blocking the event loop: the fake lives
// in the test's process.
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { MARK_KEY, testBox, type Box } from '../support/box.js';
import type { RunOut, Verb } from '../support/run.js';
import { startAnthropic } from './anthropic.js';
import { cliSetup, requireCli, type CliName } from './env.js';
import { startOpenAIChat } from './openai-chat.js';
import { startOpenAIResponses } from './openai-responses.js';
import { startGoogleGenAI } from './google-genai.js';
import type { FakeOptions, FakeServer } from './script.js';

export interface World {
  cli: CliName;
  srv: FakeServer;
  box: Box;
  /** The runs' directory (a project directory, not HOME: OpenCode limits itself in a home directory). */
  cwd: string;
  /** The CLI's config files `cliSetup` wrote (OpenCode's opencode.json, Codex's config.toml). */
  files: string[];
  run(verb: Verb, args: string[]): Promise<RunOut>;
  /** start-subagent --cli <cli> --cwd <cwd>, asserted ok; its line. */
  start(name: string, prompt: string, extra?: string[]): Promise<any>;
  /** status --wait-terminal on one name; its record, asserted done. */
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
export async function fakeWorld(t: TestContext, cli: CliName, options: FakeOptions = {}): Promise<World | null> {
  if (!requireCli(t, cli)) return null;
  const srv = await START[cli](options);
  t.after(() => srv.close());
  const box = testBox(t, `e2e-${cli}`);
  const home = join(box.dir, 'home');
  const cwd = join(box.dir, 'work');
  mkdirSync(cwd, { recursive: true });
  const setup = cliSetup(cli, { home, baseUrl: srv.url });
  // The verbs (and so the supervisor and the CLI) get exactly the fake's environment, and ours.
  for (const k of Object.keys(box.env)) delete box.env[k];
  Object.assign(box.env, setup.env, {
    SUBAGENT_DIR: box.registry,
    SUBAGENT_CANCEL_GRACE_MS: '1500',
    // Generous: on a loaded machine one OpenCode run can take well over a minute.
    SUBAGENT_WAIT_TIMEOUT_SEC: '240',
    [MARK_KEY]: box.dir,
  });
  if (cli === 'claude') {
    // Claude's tool output files go under the box, not /tmp/claude-<uid>/.
    box.env.CLAUDE_CODE_TMPDIR = join(box.dir, 'tmp');
    mkdirSync(box.env.CLAUDE_CODE_TMPDIR);
  }
  const run = (verb: Verb, args: string[]) => box.runAsync(verb, args, { cwd });
  return {
    cli,
    srv,
    box,
    cwd,
    files: setup.files,
    run,
    async start(name, prompt, extra = []) {
      const s = await run('start-subagent', ['--name', name, '--cli', cli, '--cwd', cwd, '--prompt', prompt, ...extra]);
      assert.equal(s.code, 0, `start ${name}: ${s.stdout} ${s.stderr}`);
      return s.json;
    },
    async wait(name) {
      const w = await run('status', ['--name', name, '--wait-terminal']);
      assert.equal(w.code, 0, `status --wait-terminal ${name}: ${w.stdout} ${w.stderr}`);
      const a = w.json.agents[0];
      assert.equal(a?.status, 'done', w.stdout);
      return a;
    },
  };
}
