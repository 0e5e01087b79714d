// OpenCode's row of the contract suite (row.ts): the real pinned OpenCode (1.18.33) against the fake
// chat-completions server (test/fakes/openai-chat.ts). Each test has its own sandbox: registry, HOME and
// XDG dirs (so its own opencode.db), and its runs work in a project directory (not HOME: OpenCode limits
// itself in a home directory). Its extras: test/e2e/opencode.test.ts.
//
// OpenCode retries 5xx/429 silently (5 retries, 2 s doubling back-off, ~60 s) and no setting of its own
// shortens that; it does honour the server's `retry-after-ms` header, which the fake sends as 0 on every
// error status, so an HTTP 500 fails within seconds here.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startOpenAIChat } from '../../fakes/openai-chat.js';
import { bigPromptLines, fileServer, requestsWith, resumeAfterCancel, uniq } from '../../fakes/world.js';
import { recordOf, runDirPath } from '../../support/registry.js';
import { untilInRun } from '../../support/wait.js';
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
  errors: {
    title: 'an API error (HTTP 400, and HTTP 500 after its retries) is outcome failed with the error; a permission auto-reject (exit 0, no answer) too',
    failures: () => [
      {
        name: 'e400',
        prompt: 'ERROR:400:fake bad request for the e2e test',
        exit: 1,
        error: /APIError: fake bad request for the e2e test \(HTTP 400\)/,
        checked: (_c, e) => assert.match(e.sessionId ?? '', /^ses_/, 'the session id comes with the error event'),
      },
      {
        name: 'denied',
        // OpenCode creates its database on first use with no lock of its own: two first runs at once in a new
        // store race and one exits 1 ("Failed query: CREATE TABLE …"). The second run starts once the first has
        // a session, i.e. once the store exists (opencode.prepare() fixes this when the supervisor calls it).
        // (untilInRun: OpenCode's boot took over 60 s on the loaded shared machine.)
        before: (c) => untilInRun('the first run to open a session', runDirPath(c.b.registry, 'e400'), () => recordOf(c.b.registry, 'e400').sessionId),
        // Reading a file outside the project asks for a permission; headless OpenCode rejects it and exits 0:
        // the run gave no answer.
        prompt: 'TOOL:read:{"filePath":"/etc/hostname"}',
        exit: 0,
        error: /auto-rejected \(read: \/etc\/hostname\)/,
        checked(c, d) {
          assert.equal(d.toolUses, 1);
          const res = assertOk(c.b.run('result', ['--name', 'denied', '--json']), 'result denied');
          assert.equal(res.lastAssistantText, null, 'no answer is null, not ""');
        },
      },
      {
        name: 'e500',
        prompt: 'ERROR:500:fake upstream failure for the e2e test',
        exit: 1,
        // HTTP 500: retried (retries are not failures), then failed with the API's error.
        error: /APIError: fake upstream failure for the e2e test \(HTTP 500\)/,
        checked(c) {
          const tries = requestsWith(c.srv, 'ERROR:500:fake upstream failure', { main: true });
          c.t.diagnostic(`HTTP 500: ${tries.length} requests in ${tries.at(-1)!.receivedAt - tries[0]!.receivedAt} ms`);
          assert.ok(tries.length >= 2, `OpenCode retried the 500 (${tries.length} requests)`);
          // With its own back-off the retries take ~60 s (2+4+8+16+30 s); `retry-after-ms: 0` makes them immediate.
          assert.ok(tries.at(-1)!.receivedAt - tries[0]!.receivedAt < 20_000, 'the retries followed retry-after-ms, not the default back-off');
        },
      },
    ],
    order: ['e400', 'e500', 'denied'],
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
