// Qwen Code's row of the contract suite (row.ts): the real pinned Qwen Code (0.24.4) against the fake
// chat-completions server (test/fakes/openai-chat.ts, Qwen's flavour). Each test has its own sandbox:
// registry, HOME (so its own ~/.qwen: settings and sessions) and a project directory its runs work in.
// Its extras: test/e2e/qwen.test.ts.
//
// Qwen retries a 5xx 6 times with back-off (7 requests, ~70–90 s) and nothing shortens that (its
// settings' maxRetries is its OpenAI client's, not this loop); a 429 honours `retry-after-ms`.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startOpenAIChat } from '../../fakes/openai-chat.js';
import { fileServer, items, requestsWith, uniq, userTexts } from '../../fakes/world.js';
import { recordOf, runDirPath, stderrTail } from '../../support/registry.js';
import { assertOk } from '../../support/run.js';
import { until } from '../../support/wait.js';
import { bigPromptBlock, boxed, resumeLost, type Row } from './row.js';

/** A prompt holding this gets an HTTP 429 that asks for a 1 ms wait (Qwen's own retries then take no time). */
const RATE_LIMITED = 'RATELIMITED-BY-THE-FAKE';

export const server = fileServer(() =>
  startOpenAIChat({
    handler: (req) =>
      (req.conversation?.lastUserText ?? '').includes(RATE_LIMITED) ? { type: 'error', status: 429, message: 'slow down', retryAfterMs: 1 } : undefined,
  }),
);

export const qwenBox = boxed('qwen', server, { cwd: true, env: { SUBAGENT_WAIT_TIMEOUT_SEC: '300', SUBAGENT_CANCEL_GRACE_MS: '5000' } });

/** The word of the errors test's failures. */
let why = '';

export const qwenRow: Row = {
  cli: 'qwen',
  open: qwenBox,
  session: {
    title:
      'start → done with our session id → result; a tool call; resume continues the same session (the fake sees run 1) with its own usage; --model reaches the API',
    name: 'qw',
    resume: ['--model', 'other-model'],
    tool: 'Bash',
    headline: 'run_shell_command',
    oneItem: true,
    main: true,
    chosen: true,
    started: (started) =>
      assert.match(started.sessionId, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/, 'we choose the session id before launch'),
    run1({ c, started, a1 }) {
      assert.ok(a1.usage && a1.usage.inputTokens > 0 && a1.usage.outputTokens > 0, JSON.stringify(a1.usage));
      assert.equal(a1.usage.costUsd, null, 'Qwen reports no cost');
      // Qwen filed the session under the id we gave it.
      const chats = join(c.b.dir, '.qwen', 'projects', c.b.project.replace(/[^A-Za-z0-9]/g, '-'), 'chats');
      assert.deepEqual(readdirSync(chats), [`${started.sessionId}.jsonl`]);
    },
    run2({ c, one, two, a1, a2, second }) {
      assert.equal(second!.conversation?.model, 'other-model', '--model becomes --model');
      const history = JSON.stringify((second!.body as any).messages);
      assert.ok(history.includes(`TOOL:Bash:echo ${one}`), 'the earlier prompt is in the resumed conversation');
      assert.ok(history.includes(`done: ${one}`), 'the earlier answer is in the resumed conversation');
      // Qwen's result counts the whole session; the record keeps this run's: its one request.
      assert.equal(requestsWith(c.srv, two, { main: true }).length, 1);
      assert.ok(
        a2.usage.inputTokens > 0 && a2.usage.inputTokens < a1.usage.inputTokens,
        `run 2 (${a2.usage.inputTokens} in) is one request, run 1 (${a1.usage.inputTokens}) two`,
      );
    },
  },
  errors: {
    title: "failures are recorded failed with Qwen's own words: HTTP 500 (after its retries), 401, 429, an unknown resume id; unsupported flags are refused",
    failures() {
      why = uniq('boom');
      return [
        {
          name: 'e500',
          prompt: `ERROR:500:${why}`,
          exit: 1,
          error: `[API Error: 500 ${why}]`,
          checked: (c) =>
            assert.equal(requestsWith(c.srv, `ERROR:500:${why}`, { main: true }).length, 7, 'Qwen retries a 500 six times, whatever its settings say'),
        },
        { name: 'e401', prompt: `ERROR:401:${why}`, exit: 1, error: `[API Error: 401 ${why}]` },
        { name: 'e429', prompt: `${RATE_LIMITED} ${why}`, exit: 1, error: '[API Error: 429 slow down]' },
      ];
    },
    also: (c) => c.start('gone', 'REPLY:first'),
    // The 500 run is started first and checked last, so the other failures are checked while it retries.
    order: [
      'e401',
      'e429',
      (c) =>
        assert.equal(
          requestsWith(c.srv, `${RATE_LIMITED} ${why}`, { main: true }).length,
          7,
          'a 429 is retried 6 times, here without waiting (retry-after-ms: 1)',
        ),
      async (c) => {
        // A session Qwen no longer has: the resume fails with its message (on stderr), nothing new is made.
        const forget = (g: any) => rmSync(join(c.b.dir, '.qwen', 'projects', c.b.project.replace(/[^A-Za-z0-9]/g, '-'), 'chats', `${g.sessionId}.jsonl`));
        await resumeLost(c, forget, 'REPLY:second', 1, (g) => new RegExp(`No saved session found with ID ${g.sessionId}`));
        assert.equal(requestsWith(c.srv, 'REPLY:second', { main: true }).length, 0, 'no model request');
      },
      (c) => {
        // --agent, --variant, --file have no Qwen flag: refused before anything is recorded.
        writeFileSync(join(c.b.dir, 'f.txt'), 'x');
        for (const flag of [
          ['--agent', 'reviewer'],
          ['--variant', 'high'],
          ['--file', join(c.b.dir, 'f.txt')],
        ]) {
          const refused = c.b.run('start-subagent', ['--name', 'refused', '--cli', 'qwen', ...flag, '--prompt', 'REPLY:x']);
          assert.equal(refused.code, 1, refused.stdout);
          assert.equal(refused.json?.code, 'E_ARG_UNSUPPORTED', `${flag[0]}: ${refused.stdout}`);
        }
        assert.throws(() => recordOf(c.b.registry, 'refused'));
      },
      'e500',
    ],
  },
  cancel: {
    title: 'cancel during a long tool: SIGTERM reaches the inner qwen process, no process of the run is left, cancelled is recorded',
    name: 'slow',
    marker: 'loopmark',
    // Qwen refuses a command that starts with a long `sleep`; a loop of short ones is a long tool it runs.
    command: (marker) => `for i in $(seq 600); do sleep 1; done; echo ${marker}`,
    running: 'the shell tool to be running',
    during: ({ started }, running) => assert.equal(running.sessionId, started.sessionId),
    // qwen → node cli.js → node cli.js, and the tool: four processes at least, each with the run's marker.
    procs: 4,
    procsWhy: () => 'the launcher, its relaunch, the inner process and the tool carry the run marker',
    signal: 'TERM',
    signalWhy: "SIGTERM to every process of the run is Qwen's graceful stop",
    async end({ c, marker }) {
      // The transcript keeps the interrupted call (Qwen writes "[Operation Cancelled]" as its result).
      await until('the cancelled tool result in the log', () =>
        readFileSync(join(runDirPath(c.b.registry, 'slow'), 'events.log'), 'utf8').includes('[Operation Cancelled]'),
      );
      const found = assertOk(c.b.run('search', ['--name', 'slow', '--pattern', marker, '--role', 'tool']), 'search');
      assert.equal(items(found).length, 1, JSON.stringify(found));
      assert.match(found.matches[0].snippet, /run_shell_command/);
    },
  },
  child: {
    title:
      'sub-agents: a background child (the default) and a foreground one are children; result --child reads their own answers from the store; search --child finds their words',
    name: 'par',
    plan() {
      const [word, toolWord, fgWord] = [uniq('childword'), uniq('childtool'), uniq('fgword')];
      return { prompt: `TASK:sub job:TOOL:Bash:echo ${toolWord} && echo ${word}`, description: 'sub job', answer: `done: ${toolWord}`, word, toolWord, fgWord };
    },
    id: /^general-purpose-call_/,
    idWhy: "the id is Qwen's task id, <subagent_type>-<tool_use_id>",
    sourceWhy: 'read from projects/<project>/subagents/<session>/agent-<id>.jsonl',
    madeUp: 'anotherchild',
    async started(c, p) {
      const fgCall = { description: 'fg job', prompt: `TOOL:Bash:echo ${p.fgWord}`, subagent_type: 'general-purpose', run_in_background: false };
      await c.start('fg', `TOOL:agent:${JSON.stringify(fgCall)}`);
    },
    child(c, p, _a, child) {
      assert.ok(
        c.srv
          .modelRequests()
          .some(
            (r) => r.conversation?.lastUserText.includes(`TOOL:Bash:echo ${p.toolWord}`) && /You are a general-purpose subagent/.test(r.conversation.system),
          ),
        "the fake saw the child's own request",
      );
      const parent = assertOk(c.b.run('result', ['--name', 'par', '--json']), 'result');
      assert.equal(parent.lastAssistantText, `done: done: ${p.toolWord}`, "the run's answer is the turn after the child reported");
      const sc = assertOk(c.b.run('search', ['--name', 'par', '--child', child.id, '--pattern', p.word!]), 'search --child');
      assert.ok(sc.matches.length >= 1, JSON.stringify(sc));
    },
    async end(c, p) {
      const f = await c.wait('fg');
      assert.equal(f.outcome, 'succeeded', `${f.error} ${stderrTail(c.b.registry, 'fg')}`);
      assert.equal(f.children.length, 1, JSON.stringify(f.children));
      assert.equal(f.children[0].status, 'done');
      assert.equal(f.children[0].description, 'fg job');
      assert.equal(f.toolUses, 2, "the agent call and the child's shell call (a foreground child's calls are in the stream)");
      const rf = assertOk(c.b.run('result', ['--name', 'fg', '--child', f.children[0].id, '--json']), 'result --child fg');
      assert.equal(rf.lastAssistantText, `done: ${p.fgWord}`);
      assert.equal(assertOk(c.b.run('result', ['--name', 'fg', '--json']), 'result fg').lastAssistantText, `done: done: ${p.fgWord}`);
    },
  },
  big: {
    title: 'a 300 KB prompt arrives whole and byte-exact at the model (Qwen appends its "\\n\\n" separator)',
    tag: () => uniq('bigok'),
    prompt: bigPromptBlock,
    main: true,
    arrived(_c, req, prompt) {
      const texts = userTexts(req);
      assert.equal(texts.at(-1), `${prompt}\n\n`, 'the last user text is the prompt, byte for byte, and the separator Qwen puts after stdin');
    },
  },
};
