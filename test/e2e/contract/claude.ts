// Claude Code's rows of the contract suite (row.ts), one a pinned version (test/clis/pins.json: 2.1.197,
// the last release for Node 20, and 2.1.331; `cliVersions('claude')`), against the fake Anthropic server
// (test/fakes/anthropic.ts). Each test has its own sandbox: registry, HOME and CLAUDE_CONFIG_DIR (so its
// own transcripts). Its extras: test/e2e/claude.test.ts.
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startAnthropic } from '../../fakes/anthropic.js';
import { cliVersions } from '../../fakes/env.js';
import { tokens, type FakeServer } from '../../fakes/script.js';
import { fileServer, items, uniq, userTexts } from '../../fakes/world.js';
import { runDirPath } from '../../support/registry.js';
import { assertOk } from '../../support/run.js';
import { bigPromptBlock, boxed, type Row } from './row.js';

export const server = fileServer(startAnthropic);

/** The sandbox of a test of Claude `version`: SIGINT's grace is 3 s. */
export const claudeBox = (version: string) => boxed('claude', server, { version, cwd: false, env: { SUBAGENT_CANCEL_GRACE_MS: '3000' } });

/** The input tokens the fake reported (message_start usage) for the model requests of a session, from request index `from` to `to`. */
function inputTokensSent(s: FakeServer, sessionId: string, from: number, to: number): number {
  return s
    .modelRequests()
    .filter((r) => r.index >= from && r.index < to && r.headers['x-claude-code-session-id'] === sessionId && r.action?.type !== 'error')
    .reduce((sum, r) => sum + tokens(r.bodyBytes), 0);
}

/** Every release after 2.1.197 runs sub-agents in the background by default (2.1.197 in the foreground). */
export const backgroundByDefault = (version: string): boolean => version !== '2.1.197';

const UUID4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

function row(version: string): Row {
  const background = backgroundByDefault(version);
  const title = (what: string) => `claude ${version}: ${what}`;
  let run1Requests = 0;
  return {
    cli: 'claude',
    open: claudeBox(version),
    session: {
      title: title('start → wait → result; resume continues the same session; search sees both runs; the tool call is a transcript tool'),
      name: 'cc',
      start: () => ['--variant', 'low'],
      resume: ['--model', 'claude-opus-4-5'],
      tool: 'Bash',
      headline: 'Bash',
      oneItem: true,
      chosen: true,
      started: (started) => assert.match(started.sessionId, UUID4, 'we choose the session id before launch'),
      run1({ c, one, started, a1, first }) {
        assert.ok(
          a1.usage && a1.usage.inputTokens > 0 && a1.usage.outputTokens > 0 && a1.usage.totalTokens >= a1.usage.inputTokens + a1.usage.outputTokens,
          JSON.stringify(a1.usage),
        );
        assert.equal(typeof a1.usage.costUsd, 'number');
        run1Requests = c.srv.requests.length;
        assert.equal(
          a1.usage.inputTokens,
          inputTokensSent(c.srv, started.sessionId, 0, run1Requests),
          "run 1's input tokens: what the fake reported for its requests",
        );
        // What the fake saw: the session id we chose, the prompt from stdin, the effort asked for (--variant).
        assert.equal(first!.headers['x-claude-code-session-id'], started.sessionId);
        assert.ok(userTexts(first!).includes(`TOOL:Bash:echo ${one}`), 'the prompt arrives as a text block, as given');
        assert.equal((first!.body as any).output_config?.effort, 'low', '--variant becomes --effort');
      },
      run2({ c, one, started, a1, a2, second }) {
        assert.equal(a2.toolUses, 0);
        // Run 2's usage is its own, not the session's (2.1.331's modelUsage and total_cost_usd count run 1 too).
        assert.equal(a2.usage.inputTokens, inputTokensSent(c.srv, started.sessionId, run1Requests, c.srv.requests.length), JSON.stringify(a2.usage));
        assert.ok(
          a2.usage.costUsd > 0 && a2.usage.costUsd < a1.usage.costUsd,
          `run 2 (one request) cost less than run 1 (two): ${a2.usage.costUsd} vs ${a1.usage.costUsd}`,
        );
        assert.equal(second!.headers['x-claude-code-session-id'], started.sessionId, 'the resumed run is the same session');
        assert.equal(second!.conversation?.model, 'claude-opus-4-5');
        const history = JSON.stringify((second!.body as any).messages);
        assert.ok(history.includes(`TOOL:Bash:echo ${one}`), 'the earlier prompt is in the resumed conversation');
        assert.ok(history.includes(`done: ${one}`), 'the earlier answer is in the resumed conversation');
        assert.ok(history.includes(`"command":"echo ${one}"`), 'the earlier tool call is in the resumed conversation');
      },
      end({ c, two }, both) {
        const roles = new Set(both.matches.map((m: any) => `${m.run}:${m.role}`));
        for (const want of ['1:user', '1:tool', '1:assistant', '2:user', '2:assistant']) assert.ok(roles.has(want), `${want} in ${[...roles]}`);
        const assistantOnly = assertOk(c.b.run('search', ['--name', 'cc', '--pattern', two, '--role', 'assistant']), 'search assistant');
        assert.deepEqual(
          assistantOnly.matches.map((m: any) => m.run),
          [2],
        );
      },
    },
    errors: {
      title: title("an HTTP 500 from the API (no retries) → outcome failed with Claude's error; a bad --agent → failed with its stderr"),
      failures() {
        const why = uniq('boom');
        return [
          { name: 'e500', prompt: `ERROR:500:${why}`, exit: 1, error: [/500/, new RegExp(why)] },
          { name: 'e400', prompt: `ERROR:400:${why}`, exit: 1, error: [/400/, new RegExp(why)] },
          {
            name: 'badagent',
            prompt: 'REPLY:never',
            extra: ['--agent', 'no-such-agent'],
            exit: 1,
            error: [/before reporting a result/, /no-such-agent' not found/],
          },
        ];
      },
      end(c) {
        // --file has no Claude equivalent: refused before anything is recorded
        writeFileSync(join(c.b.dir, 'f.txt'), 'x');
        const refused = c.b.run('start-subagent', ['--name', 'withfile', '--cli', 'claude', '--file', 'f.txt', '--prompt', 'REPLY:x']);
        assert.equal(refused.code, 1);
        assert.equal(refused.json?.code, 'E_ARG_UNSUPPORTED');
        assert.equal(existsSync(join(c.b.registry, 'agents', 'withfile')), false);
      },
    },
    cancel: {
      title: title('cancel during a long Bash tool leaves no process of the run'),
      name: 'slow',
      marker: 'sleepmark',
      // Not `sleep 300; …`: 2.1.331's Bash tool refuses a command that starts with `sleep N` (N ≥ 25).
      command: (marker) => `echo started && sleep 300; echo ${marker}`,
      running: 'the Bash tool to be running',
      procs: 2,
      procsWhy: () => 'the agent and its tool carry the run marker',
      signal: 'INT',
      signalWhy: "SIGINT is Claude's graceful stop",
      during({ c, started }, running) {
        // The session id we chose is in status while the run works, and it is the one Claude reports.
        assert.equal(running.sessionId, started.sessionId);
        const init = readFileSync(join(c.b.registry, 'agents', 'slow', '1', 'events.log'), 'utf8').match(/"session_id":"([^"]+)"/)?.[1];
        assert.equal(init, started.sessionId, "the session id of Claude's init event");
      },
      cancelled({ c, a }) {
        // Interrupted during a tool, Claude reports result/error_during_execution and exits on its own, with 0
        // (2.1.331) or 1 (2.1.197, which races: 0 in 2 of 6 runs measured): the result line tells, never the
        // exit status, and the run is cancelled because we cancelled it. Once in a loaded CI run 2.1.331 left
        // after "[Request interrupted by user for tool use]" without any result line: cancelled all the same.
        const events = readFileSync(join(runDirPath(c.b.registry, 'slow'), 'events.log'), 'utf8');
        const results = [...events.matchAll(/"type":"result","subtype":"([a-z_]+)"/g)].map((m) => m[1]);
        assert.ok(
          results.every((r) => r === 'error_during_execution'),
          `an interrupted run reports only error_during_execution: ${results}`,
        );
        assert.equal(a.reason, 'cancelled');
        if (results.length > 0) assert.ok((a.exitCode === 0 || a.exitCode === 1) && a.signal === null, `${a.exitCode} ${a.signal}`);
        else c.t.diagnostic(`claude ${version} left without a result line after the interrupt: exit ${a.exitCode}, signal ${a.signal}`);
      },
      end({ c, marker }) {
        // The transcript keeps the interrupted call.
        const found = assertOk(c.b.run('search', ['--name', 'slow', '--pattern', marker, '--role', 'tool']), 'search');
        assert.equal(items(found).length, 1, JSON.stringify(found));
      },
    },
    child: {
      title: title('a sub-agent shows up in children; result --child returns its answer; search --child finds its words'),
      name: 'par',
      plan() {
        const word = uniq('childword');
        const toolWord = uniq('childtool');
        return { prompt: `TASK:sub job:TOOL:Bash:echo ${toolWord} && echo ${word}`, description: 'sub job', answer: `done: ${toolWord}`, word, toolWord };
      },
      id: /^a[0-9a-f]{16}$/,
      idWhy: "the id is Claude's agentId",
      toolUses: [2, "the Agent call and the child's Bash call"],
      sourceWhy: 'read from projects/<slug>/<session>/subagents/agent-<id>.jsonl',
      madeUp: 'anotherchild',
      child(c, p, _a, child) {
        // The fake saw the child's requests with its agent id.
        assert.ok(c.srv.modelRequests().some((r) => r.headers['x-claude-code-agent-id'] === child.id));
        const parent = assertOk(c.b.run('result', ['--name', 'par', '--json']), 'result');
        if (background) {
          // The Agent call returned at once (async_launched); the child reported in a task_notification, and
          // Claude took one more turn on it: that last turn, after the child reported, is the run's answer.
          assert.equal(parent.lastAssistantText, `child completed: done: ${p.toolWord}`, 'the turn after the child reported');
          const events = readFileSync(join(runDirPath(c.b.registry, 'par'), 'events.log'), 'utf8')
            .split('\n')
            .filter(Boolean)
            .map((l) => JSON.parse(l));
          const results = events.filter((e) => e.type === 'result');
          assert.equal(results.length, 2, 'two result lines in one process');
          assert.equal(results[1].origin?.kind, 'task-notification');
          assert.equal(events.filter((e) => e.type === 'system' && e.subtype === 'init').length, 2, 'two init lines');
          const notified = events.findIndex((e) => e.subtype === 'task_notification' && e.task_id === child.id);
          assert.ok(notified >= 0 && notified < events.indexOf(results[1]), 'the child reported before the last result');
          assert.ok(events.some((e) => e.type === 'user' && e.tool_use_result?.status === 'async_launched'));
        } else {
          assert.equal(parent.lastAssistantText, `done: done: ${p.toolWord}`, "the run's answer is the parent's, not the child's");
        }
        // The child's own answer from the parent's stream too (its notification or hand-back), without wrapping.
        const fromStream = assertOk(c.b.run('search', ['--name', 'par', '--pattern', `^done: ${p.toolWord}$`, '--role', 'assistant']), 'search the stream');
        assert.ok(
          fromStream.matches.some((m: any) => m.childId === child.id),
          JSON.stringify(fromStream),
        );
        const sc = assertOk(c.b.run('search', ['--name', 'par', '--child', child.id, '--pattern', p.word!]), 'search --child');
        assert.ok(sc.matches.length >= 1, JSON.stringify(sc));
      },
    },
    big: {
      title: title('a 300 KB prompt arrives whole and byte-exact at the model'),
      tag: () => uniq('bigok'),
      prompt: bigPromptBlock,
      arrived(_c, req, prompt) {
        assert.ok(
          userTexts(req).some((x) => x === prompt),
          'one text block is the prompt, byte for byte',
        );
      },
    },
  };
}

export const claudeRows = (): Row[] => cliVersions('claude').map(row);
