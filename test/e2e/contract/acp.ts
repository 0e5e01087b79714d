// The `--cli acp` rows of the contract suite (row.ts): the pinned Gemini CLI, Qwen Code and Copilot CLI in
// ACP mode (`--acp-command <preset>`), each against its CLI's fake and in a box set up as its native row's
// (the same settings, store and HOME), with `--permissions approve-all` (the scenarios' shell calls are
// the task; the permission refused is test/e2e/acp.test.ts's). No child scenario: ACP shows no
// sub-agents. Gemini's row has no session scenario: its ACP resume is broken (docs/agents/acp.md), which
// test/e2e/acp.test.ts checks, with its start → result.
import assert from 'node:assert/strict';
import { requireCli, type CliName } from '../../fakes/env.js';
import type { FakeServer } from '../../fakes/script.js';
import { bigPromptLines, cliBox, uniq, waitDone, type CliBoxOptions } from '../../fakes/world.js';
import { recordOf } from '../../support/registry.js';
import { assertOk } from '../../support/run.js';
import { server as copilotServer } from './copilot.js';
import { server as geminiServer } from './gemini.js';
import { server as qwenServer } from './qwen.js';
import { sameText, type Open, type Row } from './row.js';

/** A box of `cli`'s (as its native row's), whose runs are `--cli acp --acp-command <cli>` in its project. */
function acpBox(cli: CliName, server: () => Promise<FakeServer>, o: CliBoxOptions = {}): Open {
  return async (t, label) => {
    if (!requireCli(t, cli, o.version)) return null;
    const srv = await server();
    const b = cliBox(t, cli, `e2e-acp-${cli}-${label}`, srv.url, o);
    const where = ['--acp-command', cli, '--permissions', 'approve-all', '--cwd', b.project];
    return {
      t,
      cli,
      b,
      srv,
      where,
      start: async (name, prompt, extra = []) =>
        assertOk(b.run('start-subagent', ['--name', name, '--cli', 'acp', ...where, '--prompt', prompt, ...extra]), 'start'),
      wait: (name) => waitDone(b, name, t),
    };
  };
}

/**
 * The 300 KB prompt: it reaches the model whole, as the end of the last user text; before it, only what
 * the agent itself puts there (`before`: Qwen Code's blank lines, Copilot CLI's `<current_datetime>`).
 */
const big = (cli: string, before: RegExp = /^$/) => ({
  title: `acp ${cli}: a 300 KB prompt reaches the model byte for byte (one text block of session/prompt)`,
  tag: () => uniq('bigok'),
  prompt: (tag: string) => `${bigPromptLines(tag)}\n`,
  arrived(_c: unknown, req: any, prompt: string) {
    const got: string = req.conversation!.lastUserText.trimEnd();
    const want = prompt.trimEnd();
    assert.match(got.slice(0, got.length - want.length), before, "only the agent's own words before the prompt");
    sameText(got.slice(got.length - want.length), want);
  },
});

/** The run's record kept the agent and the policy it was started with. */
function keptAcp(c: { b: { registry: string } }, name: string, preset: string, run = 1): void {
  const acp = recordOf(c.b.registry, name, run).acp;
  assert.equal(acp.preset, preset);
  assert.equal(acp.permissions, 'approve-all');
}

const session = (cli: string, headline: string) => ({
  title: `acp ${cli}: start → done with the session the agent chose → result; resume loads the session (session/load) and continues it`,
  name: 'ac',
  tool: 'Bash',
  headline,
  sameSession: 'the resume loaded the same session',
  chosen: false,
  run1({ c }: any) {
    keptAcp(c, 'ac', cli);
  },
  run2({ c, one, second }: any) {
    keptAcp(c, 'ac', cli, 2);
    assert.ok(JSON.stringify(second.body).includes(`done: ${one}`), 'the earlier answer was sent again: the session was loaded');
  },
});

const cancel = (cli: string, command?: (marker: string) => string) => ({
  title: `acp ${cli}: cancel during a long shell tool: session/cancel, then SIGTERM to the whole tree; no process left, cancelled`,
  marker: `acp${cli}cancelmarker`,
  command,
  running: 'the shell tool running the marker command',
  procs: 2,
  procsWhy: (n: number) => `the agent and its tool carry the run marker (${n})`,
  signal: 'TERM' as const,
  signalWhy: "SIGTERM is the acp adapter's graceful signal",
  cancelled({ c }: any) {
    assert.ok(assertOk(c.b.run('result', ['--name', 'long', '--json']), 'result').lastAssistantText !== undefined, 'the cancelled run reads as any');
  },
});

export const acpGeminiRow: Row = {
  cli: 'acp',
  open: acpBox('gemini', geminiServer, { env: { SUBAGENT_CANCEL_GRACE_MS: '3000' } }),
  errors: {
    title: "acp gemini: an API error (HTTP 500) answers the prompt with an error: failed, api-error, the API's words",
    failures: () => [
      {
        name: 'e500',
        prompt: 'ERROR:500:fake upstream failure for the e2e test',
        exit: 0,
        error: /^session\/prompt: fake upstream failure for the e2e test \(HTTP 500 INTERNAL\)$/,
      },
    ],
    async end(c) {
      assert.equal((await c.wait('e500')).reason, 'api-error');
    },
  },
  cancel: cancel('gemini'),
  big: big('gemini'),
};

export const acpQwenRow: Row = {
  cli: 'acp',
  open: acpBox('qwen', qwenServer, { env: { SUBAGENT_WAIT_TIMEOUT_SEC: '300', SUBAGENT_CANCEL_GRACE_MS: '5000' } }),
  session: session('qwen', 'execute'),
  errors: {
    title: "acp qwen: an API error (HTTP 500) fails the run with the agent's words",
    failures: () => [{ name: 'e500', prompt: 'ERROR:500:fake upstream failure for the e2e test', exit: 0, error: 'fake upstream failure for the e2e test' }],
  },
  // Qwen refuses a command that starts with a long `sleep`; a loop of short ones is a long tool it runs.
  cancel: cancel('qwen', (marker) => `for i in $(seq 600); do sleep 1; done; echo ${marker}`),
  big: big('qwen', /^\n*$/),
};

export const acpCopilotRow: Row = {
  cli: 'acp',
  open: acpBox('copilot', copilotServer, { clear: /^(COPILOT_|GH_TOKEN$|GITHUB_TOKEN$)/ }),
  session: session('copilot', 'execute'),
  errors: {
    title: "acp copilot: an API error (HTTP 500) fails the run with the agent's words",
    failures: () => [{ name: 'e500', prompt: 'ERROR:500:fake upstream failure for the e2e test', exit: 0, error: 'fake upstream failure for the e2e test' }],
  },
  cancel: cancel('copilot'),
  big: big('copilot', /^<current_datetime>[^<]*<\/current_datetime>\n\n$/),
};
