// GitHub Copilot CLI's row of the contract suite (row.ts): the real pinned Copilot (1.0.102) in its offline
// bring-your-own-key mode against the fake chat-completions server (test/fakes/openai-chat.ts). Each test
// has its own sandbox: registry, HOME and COPILOT_HOME (so its own sessions). Its extras:
// test/e2e/copilot.test.ts.
//
// Copilot retries a 5xx or a 429 five times (1 s apart with the fake's `retry-after-ms: 0`, ~16 s with
// its own back-off) and no setting shortens it: an HTTP 500 costs ~6 s here.
import assert from 'node:assert/strict';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { startOpenAIChat } from '../../fakes/openai-chat.js';
import type { FakeRequest } from '../../fakes/script.js';
import { bigPromptLines, fileServer, requestsWith, resumeAfterCancel, uniq } from '../../fakes/world.js';
import { pidsWithEnv } from '../../support/procs.js';
import { readJson, recordOf, runDirPath } from '../../support/registry.js';
import { assertOk } from '../../support/run.js';
import { until } from '../../support/wait.js';
import { boxed, lookAround, resumeLost, sameText, searchChildPrompt, type Row } from './row.js';

export const server = fileServer(startOpenAIChat);

// Nothing of the caller's own Copilot setup or GitHub tokens may leak in.
export const copilotBox = boxed('copilot', server, { cwd: true, clear: /^(COPILOT_|GH_TOKEN$|GITHUB_TOKEN$)/ });

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/**
 * The usage a run must record for `requests` (there must be `count`): the token counts the fake reported
 * for them, summed, in our shape (no cache: the fake reports none; no cost: BYOK has none).
 */
function usageReported(requests: FakeRequest[], count: number) {
  assert.equal(requests.length, count, `the run's model requests: ${requests.map((r) => r.conversation?.lastUserText).join(' | ')}`);
  const input = requests.reduce((n, r) => n + r.reportedUsage!.promptTokens, 0);
  const output = requests.reduce((n, r) => n + r.reportedUsage!.completionTokens, 0);
  return { inputTokens: input, outputTokens: output, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0, totalTokens: input + output, costUsd: null };
}

export const copilotRow: Row = {
  cli: 'copilot',
  open: copilotBox,
  session: {
    title:
      'start → done with our session id → result; a tool call; resume continues the same session; search sees both runs; --model and --variant reach the model',
    name: 'cp',
    start: () => ['--model', 'other-model', '--variant', 'high'],
    tool: 'Bash',
    headline: 'bash',
    sameSession: 'the resume stays in the same Copilot session',
    chosen: true,
    started: (started) => assert.match(started.sessionId, UUID, 'we choose the session id, so it is known at once'),
    run1({ c, one, started, a1, first }) {
      assert.deepEqual(
        a1.usage,
        usageReported(requestsWith(c.srv, one), 2),
        "run 1's usage: what the fake reported for its two requests, from Copilot's store",
      );
      // The session is Copilot's own, under the id we gave it, and its stream's result line says so too.
      const events = readFileSync(join(runDirPath(c.b.registry, 'cp'), 'events.log'), 'utf8');
      assert.ok(events.includes(`"sessionId":"${started.sessionId}"`), 'the result line names our session id');
      assert.ok(readFileSync(join(c.b.env.COPILOT_HOME!, 'session-state', started.sessionId, 'events.jsonl'), 'utf8').includes(one));
      assert.equal(first!.conversation?.model, 'other-model', '--model');
      assert.equal((first!.body as any).reasoning_effort, 'high', '--variant is --reasoning-effort');
    },
    run2({ c, one, two, a1, a2, second }) {
      // The session's log holds both runs' usage records: run 2 counts its own request only.
      assert.deepEqual(a2.usage, usageReported(requestsWith(c.srv, two), 1), "run 2's usage: its own request, not run 1's");
      assert.deepEqual(recordOf(c.b.registry, 'cp', 1).usage, a1.usage, "run 1's record keeps its own");
      // The resumed request carried the first turn: its prompt, its tool call and its answer.
      const history = JSON.stringify(second!.body);
      for (const earlier of [`TOOL:Bash:echo ${one}`, `done: ${one}`]) assert.ok(history.includes(earlier), `the earlier turn was sent again: ${earlier}`);
      assert.equal(second!.conversation?.model, 'other-model', 'run 2 keeps the model of run 1');
    },
  },
  errors: {
    title:
      "API errors are outcome failed with Copilot's own message: HTTP 500 after its retries, HTTP 401; a resume of a session Copilot no longer has fails with its stderr",
    failures: () => [
      {
        name: 'e500',
        prompt: 'ERROR:500:fake upstream failure for the e2e test',
        exit: 1,
        error: /^Failed to get response from the AI model; retried 5 times .*Last error: 500 fake upstream failure for the e2e test$/,
        checked(c) {
          const tries = requestsWith(c.srv, 'ERROR:500:fake upstream failure');
          c.t.diagnostic(`HTTP 500: ${tries.length} requests in ${tries.at(-1)!.receivedAt - tries[0]!.receivedAt} ms`);
          assert.equal(tries.length, 6, 'one request and five retries');
        },
      },
      {
        name: 'e401',
        prompt: 'ERROR:401:fake bad key for the e2e test',
        exit: 1,
        error: /^Authentication failed with provider at http:\/\/127\.0\.0\.1:\d+\/v1 \(HTTP 401\)\. Check your COPILOT_PROVIDER_API_KEY/,
        checked: (c) => assert.equal(assertOk(c.b.run('result', ['--name', 'e401', '--json']), 'result e401').lastAssistantText, null),
      },
    ],
    also: (c) => c.start('gone', 'REPLY:here today'),
    // A session id Copilot does not know: it must fail (exit 1, its message on stderr), never start a new session.
    async end(c) {
      const forget = (g: any) => rmSync(join(c.b.env.COPILOT_HOME!, 'session-state', g.sessionId), { recursive: true, force: true });
      await resumeLost(
        c,
        forget,
        'REPLY:is anyone there',
        1,
        (g) => `copilot exited with status 1; stderr: Error: No session, task, or name matched '${g.sessionId}'.`,
      );
      assert.equal(requestsWith(c.srv, 'is anyone there').length, 0, 'no new session was started to answer it');
    },
  },
  cancel: {
    title: 'cancel during a long bash tool leaves no process of the run; the cancelled session resumes',
    marker: 'cp-cancel-marker',
    running: 'the bash tool running the marker command',
    // The npm loader, the native binary it runs, and the tool's shell (in a session of its own).
    procs: 3,
    procsWhy: (n) => `the loader, copilot and its tool carry the run marker: ${n}`,
    signal: 'TERM',
    signalWhy: "SIGTERM to every process: Copilot's loader passes no signal on",
    goneAtOnce: { tool: 'the tool is gone', marker: 'no process carries the run marker' },
    cancelled: ({ a }) => assert.equal(a.error, 'cancelled with SIGTERM'),
    async end({ c, marker, a, runMarker }) {
      const aborted = readFileSync(join(runDirPath(c.b.registry, 'long'), 'events.log'), 'utf8');
      // user_initiated or user_abort (both measured): the native binary got the signal itself and aborted its turn.
      assert.match(aborted, /"type":"abort","data":\{"reason":"user_[a-z]+"\}/, 'the turn was aborted');
      const search = assertOk(c.b.run('search', ['--name', 'long', '--pattern', marker, '--role', 'tool']), 'search');
      assert.equal(new Set(search.matches.map((m: any) => m.index)).size, 1, `the cut tool call is in the transcript, once: ${JSON.stringify(search.matches)}`);
      await resumeAfterCancel(c.b, a.sessionId, 'after-cancel', c.t);
      await until('no process of the run', () => pidsWithEnv(runMarker).length === 0);
    },
  },
  child: {
    title: 'a sub-agent (task tool) is listed in children by its agentId, and result --child reads its answer from the Copilot store',
    name: 'parent',
    plan: lookAround,
    id: UUID,
    toolUses: [1],
    sourceWhy: "read from the session's events.jsonl in the run's own store",
    madeUp: '00000000-0000-4000-8000-000000000000',
    child(c, p, a) {
      // The run's usage counts its sub-agent's model calls too: the parent's two requests and the child's one.
      assert.deepEqual(a.usage, usageReported(requestsWith(c.srv, p.answer), 3));
      assert.equal(assertOk(c.b.run('result', ['--name', 'parent', '--json']), 'result').lastAssistantText, `done: ${p.answer}`);
    },
    end: (c, _p, _a, child) => searchChildPrompt(c, 'parent', child.id, 'the parent prompt is not the child transcript'),
  },
  big: {
    title: 'a 300 KB prompt reaches the model byte for byte (stdin, never argv)',
    tag: () => uniq('big-ok'),
    // Copilot trims the prompt's trailing white space before sending it: this one has none.
    prompt: bigPromptLines,
    arrived(c, req, prompt, a) {
      const got = req.conversation!.lastUserText;
      const head = /^<current_datetime>[^<]*<\/current_datetime>\n\n/.exec(got)?.[0];
      assert.ok(head, 'Copilot puts the date before the prompt');
      sameText(got.slice(head.length), prompt);
      assert.equal(readJson(join(runDirPath(c.b.registry, 'big'), 'record.json')).sessionId, a.sessionId);
    },
  },
};
