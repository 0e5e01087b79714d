// OpenCode's row of the contract suite (row.ts): the real pinned OpenCode (1.18.33) against the fake
// chat-completions server (test/fakes/openai-chat.ts). Each test has its own sandbox: registry, HOME and
// XDG dirs (so its own opencode.db), and its runs work in a project directory (not HOME: OpenCode limits
// itself in a home directory). Its extras: test/e2e/opencode.test.ts.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startOpenAIChat } from '../../fakes/openai-chat.js';
import { bigPromptLines, fileServer, resumeAfterCancel, uniq } from '../../fakes/world.js';
import { assertOk } from '../../support/run.js';
import { boxed, lookAround, sameText, searchChildPrompt, type Row } from './row.js';

export const server = fileServer(startOpenAIChat);

export const opencodeBox = boxed('opencode', server, { cwd: true, clear: /^(OPENCODE|XDG_)/ });

const SES = /^ses_[A-Za-z0-9]+$/;

/** The content of the file the session test attaches (--file). */
let attached = '';

export const opencodeRow: Row = {
  cli: 'opencode',
  open: opencodeBox,
  session: {
    title: 'start → wait → result; resume continues the same session; search sees both runs; tool calls are transcript tools; --file and --model reach the CLI',
    name: 'oc',
    start(c) {
      attached = uniq('attached-file-content');
      const file = join(c.b.dir, 'notes.txt');
      writeFileSync(file, `${attached}\n`);
      return ['--model', 'fake/fake-model', '--file', file];
    },
    tool: 'bash',
    headline: 'bash',
    main: true,
    sameSession: 'the resume stays in the same OpenCode session',
    chosen: false,
    started(started) {
      assert.equal(started.model, 'fake/fake-model');
      assert.equal(started.sessionId, null, 'OpenCode chooses its session id; it is known once the stream starts');
    },
    run1({ c, a1, first }) {
      assert.match(a1.sessionId, SES);
      assert.ok(a1.usage && a1.usage.totalTokens > 0 && a1.usage.inputTokens > 0, JSON.stringify(a1.usage));
      assert.equal(a1.usage.costUsd, 0);
      // What the fake saw: the prompt from stdin, the attached file, the model asked for.
      assert.equal(first!.conversation?.model, 'fake-model');
      // OpenCode works in --cwd (it believes $PWD, which the adapter sets; the test process's PWD is elsewhere).
      assert.ok(first!.conversation?.system.includes(`Working directory: ${c.b.project}\n`), "OpenCode worked in the run's cwd");
      assert.ok(JSON.stringify(first!.body).includes(attached), 'the --file content reached the model');
    },
    run2({ one, second }) {
      // The second request carried the first turn: its prompt, tool call and answer.
      const history = JSON.stringify(second!.body);
      assert.ok(history.includes(`TOOL:bash:echo ${one}`), 'the earlier prompt was sent again');
      assert.ok(history.includes(`done: ${one}`), 'the earlier answer was sent again');
    },
    end(_x, both) {
      const roles = new Set(both.matches.map((m: any) => m.role));
      for (const role of ['user', 'assistant', 'tool']) assert.ok(roles.has(role), `a ${role} match: ${JSON.stringify(both.matches)}`);
    },
  },
  cancel: {
    title: 'cancel during a long bash tool leaves no process of the run',
    marker: 'oc-cancel-marker',
    tool: 'bash',
    running: 'the bash tool running the marker command',
    procs: 2,
    procsWhy: () => 'opencode and its tool carry the run marker',
    signal: 'TERM',
    signalWhy: "SIGTERM is OpenCode's graceful signal",
    goneAtOnce: { tool: 'the orphan-prone bash tool is gone', marker: 'no process carries the run marker' },
    // The killed session can be resumed: OpenCode keeps what it had written.
    end: async ({ c, a }) => void (await resumeAfterCancel(c.b, a.sessionId, 'after-cancel', c.t)),
  },
  busy: {
    title: 'status shows the session id while the run is still running',
    marker: () => uniq('oc-busy-marker'),
    tool: 'bash',
    choosesWhy: 'OpenCode chooses its session id',
    running: 'the bash tool running the marker command',
    recorded: 'the record to hold the session id',
    reported: /"sessionID":"([^"]+)"/,
    shape: SES,
    reportedWhy: "the sessionID of OpenCode's events",
  },
  child: {
    title: 'a sub-agent (task tool) is listed in children, and result --child reads its answer from the OpenCode store',
    name: 'parent',
    plan: lookAround,
    id: /^ses_/,
    sourceWhy: "read from the run's own SQLite store",
    madeUp: 'ses_0000000000000000000000000',
    foreignVerbs: ['result', 'search'],
    child(c, p, _a, child) {
      assert.equal(assertOk(c.b.run('result', ['--name', 'parent', '--json']), 'result').lastAssistantText, `done: ${p.answer}`);
      const read = c.b.run('result', ['--name', 'parent', '--child', child.id, '--json']);
      assert.equal(read.stderr, '', "nothing on stderr: node:sqlite's experimental warning is kept off it");
    },
    end: (c, _p, _a, child) => searchChildPrompt(c, 'parent', child.id),
  },
  big: {
    title: 'a 300 KB prompt reaches the model byte for byte (stdin, never argv)',
    tag: () => uniq('big-ok'),
    prompt: (tag) => `${bigPromptLines(tag)}\n`,
    main: true,
    arrived: (_c, req, prompt) => sameText(req.conversation!.lastUserText, prompt),
  },
};
