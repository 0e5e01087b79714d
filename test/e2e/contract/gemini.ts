// Gemini CLI's row of the contract suite (row.ts): the real pinned Gemini CLI (0.61.0) against the fake
// Gemini API (test/fakes/google-genai.ts). Each test has its own sandbox: registry, HOME (so its own
// ~/.gemini: settings, policy, chats) and TMPDIR, and its runs work in a project directory (the CLI files
// its sessions per project). Its extras: test/e2e/gemini.test.ts.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startGoogleGenAI } from '../../fakes/google-genai.js';
import type { FakeRequest } from '../../fakes/script.js';
import { bigPromptLines, fileServer, requestsWith, resumeAfterCancel, uniq } from '../../fakes/world.js';
import type { Box } from '../../support/box.js';
import { recordOf, runDirPath } from '../../support/registry.js';
import { assertOk } from '../../support/run.js';
import { boxed, resumeLost, sameText, type Ctx, type Row } from './row.js';

export const server = fileServer(startGoogleGenAI);

export const geminiBox = boxed('gemini', server, { cwd: true, env: { SUBAGENT_CANCEL_GRACE_MS: '3000' } });

/** The text parts of every content of a request, in order, as one string. */
function contentsText(r: FakeRequest): string {
  return JSON.stringify((r.body as any)?.contents ?? []);
}

/** The session id the CLI itself reported in its stream (`init`). */
function initSessionId(b: Box, name: string, run = 1): string | undefined {
  return readFileSync(join(runDirPath(b.registry, name, run), 'events.log'), 'utf8').match(/"type":"init"[^\n]*"session_id":"([^"]+)"/)?.[1];
}

export const geminiRow: Row = {
  cli: 'gemini',
  open: geminiBox,
  session: {
    title: 'start → done with the session id chosen before the run → result; resume continues the session; --model and -- args reach the CLI',
    name: 'gm',
    start: () => ['--model', 'gemini-fake-pro', '--', '--approval-mode', 'yolo'],
    tool: 'Bash',
    headline: 'run_shell_command',
    sameSession: 'the resume stays in the same Gemini session',
    chosen: true,
    started(started) {
      assert.equal(started.model, 'gemini-fake-pro');
      assert.match(started.sessionId, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/, 'chosen before the run, in the start line');
    },
    run1({ c, started, a1, first }) {
      assert.equal(initSessionId(c.b, 'gm'), started.sessionId, 'the CLI took the id we gave it');
      assert.ok(a1.usage && a1.usage.inputTokens > 0 && a1.usage.outputTokens > 0, JSON.stringify(a1.usage));
      assert.equal(a1.usage.totalTokens, a1.usage.inputTokens + a1.usage.cacheReadTokens + a1.usage.outputTokens);
      assert.equal(a1.usage.reasoningTokens, 2 * 2, "the fake's 2 thought tokens per answer, 2 answers");
      assert.equal(a1.usage.costUsd, null, 'the Gemini CLI reports no cost');
      // What the fake saw: the model asked for, the run's cwd as the workspace, the -- args (yolo offers the
      // write tools a headless run does not have otherwise).
      assert.equal(first!.conversation?.model, 'gemini-fake-pro');
      assert.match(first!.url, /^\/v1beta\/models\/gemini-fake-pro:streamGenerateContent\?alt=sse$/);
      assert.ok(contentsText(first!).includes(`Workspace Directories:**\\n  - ${c.b.project}\\n`), "the CLI worked in the run's cwd");
      assert.ok(first!.conversation?.toolNames.includes('write_file'), '--approval-mode yolo reached the CLI');
    },
    run2({ c, one, started, a1, a2, second }) {
      assert.equal(initSessionId(c.b, 'gm', 2), started.sessionId);
      assert.deepEqual(a2.extraArgs, ['--approval-mode', 'yolo'], 'run 2 keeps the arguments of run 1');
      assert.ok(a2.usage.totalTokens > 0 && a2.usage.totalTokens < a1.usage.totalTokens, `run 2's own usage, not the session's: ${a2.usage.totalTokens}`);
      // The resume's request carried the first turn: its prompt, tool call and answer; and the -- args again.
      const history = contentsText(second!);
      assert.ok(history.includes(`TOOL:Bash:echo ${one}`), 'the earlier prompt was sent again');
      assert.ok(history.includes(`done: ${one}`), 'the earlier answer was sent again');
      assert.ok(history.includes('run_shell_command'), 'the earlier tool call was sent again');
      assert.equal(second!.conversation?.model, 'gemini-fake-pro');
      assert.ok(second!.conversation?.toolNames.includes('write_file'), '-- args are passed again on resume');
    },
    end({ c }, both) {
      const roles = new Set(both.matches.map((m: any) => m.role));
      for (const role of ['user', 'assistant', 'tool']) assert.ok(roles.has(role), `a ${role} match: ${JSON.stringify(both.matches)}`);
      // Flags the CLI has no equivalent for are refused before anything is recorded.
      const attached = join(c.b.dir, 'notes.txt');
      writeFileSync(attached, 'notes\n');
      for (const [flag, value] of [
        ['--agent', 'generalist'],
        ['--variant', 'high'],
        ['--file', attached],
      ] as const) {
        const e = c.b.run('start-subagent', ['--name', `no${flag.slice(2)}`, '--cli', 'gemini', '--cwd', c.b.project, '--prompt', 'x', flag, value]);
        assert.equal(e.code, 1, e.stdout);
        assert.equal(e.json?.code, 'E_ARG_UNSUPPORTED', `${flag}: ${e.stdout}`);
      }
    },
  },
  errors: {
    title: 'API errors are failed with the CLI message: HTTP 500, 429 and 401, and an unknown resume id',
    failures() {
      // The exit status is the HTTP status mod 256.
      const own = (c: Ctx, a: any) => {
        assert.ok(!a.error.includes('stderr:'), `${a.name}: the CLI's own verdict, nothing of stderr added`);
        assert.equal(a.sessionId, recordOf(c.b.registry, a.name).sessionId);
      };
      return [
        {
          name: 'e500',
          prompt: 'ERROR:500:fake upstream failure for the e2e test',
          exit: 244,
          error: /^API Error: fake upstream failure for the e2e test \(HTTP 500 INTERNAL\)$/,
          checked: own,
        },
        {
          name: 'e429',
          prompt: 'ERROR:429:fake quota exhausted',
          exit: 173,
          error: /^API Error: fake quota exhausted\nPlease wait and try again later/,
          checked: own,
        },
        { name: 'e401', prompt: 'ERROR:401:fake bad key', exit: 145, error: /^API Error: fake bad key \(HTTP 401 UNAUTHENTICATED\)$/, checked: own },
      ];
    },
    also: (c) => c.start('gone', 'REPLY:first'),
    async end(c) {
      const e500 = requestsWith(c.srv, 'ERROR:500:fake upstream failure for the e2e test');
      assert.equal(e500.length, 1, 'maxAttempts 1 in the test settings: no retry');
      // The session is gone from the CLI's store: the resume fails with the CLI's reason (exit 42, stderr).
      // Gemini keeps a project's chats under a slug it claims per project (`project`, or another when
      // concurrent first runs raced for it): the session's file is looked for under every slug.
      const tmp = join(c.b.dir, '.gemini', 'tmp');
      const forget = (g: any) => {
        const files = readdirSync(tmp, { recursive: true, encoding: 'utf8' }).filter((n) => /(^|\/)chats\/session-[^/]*\.jsonl?$/.test(n));
        const file = files.find((n) => n.endsWith(`-${g.sessionId.slice(0, 8)}.jsonl`) || n.endsWith(`-${g.sessionId.slice(0, 8)}.json`));
        assert.ok(file, `the session's chat file (${g.sessionId}) under ${tmp}: ${files.join(', ')}`);
        rmSync(join(tmp, file));
      };
      const error = /^gemini exited with status 42 \(bad input: .*\) before it started the session; stderr: Error resuming session: /;
      const { g, g2 } = await resumeLost(c, forget, 'REPLY:again', 42, () => error);
      assert.equal(g2.sessionId, g.sessionId, 'the record keeps the session it tried to resume');
    },
  },
  cancel: {
    title: 'cancel during a long shell tool: SIGTERM to the whole tree, no process left, cancelled; the session resumes',
    marker: 'gmcancelmarker',
    running: 'the shell tool running the marker command',
    during({ c }) {
      // No relaunching launcher: the agent is the CLI itself, the tool its descendant in a session of its own.
      const rec = recordOf(c.b.registry, 'long');
      assert.ok(readFileSync(`/proc/${rec.agentProcess.pid}/cmdline`, 'utf8').includes('gemini'), 'the agent is gemini');
    },
    procs: 2,
    procsWhy: () => 'gemini and its tool carry the run marker',
    signal: 'TERM',
    signalWhy: "SIGTERM is the Gemini adapter's graceful signal",
    goneAtOnce: { tool: 'the shell tool (its own session) is gone' },
    async end({ c, marker, a }) {
      const r = assertOk(c.b.run('result', ['--name', 'long', '--json']), 'result');
      assert.equal(r.lastAssistantText, null);
      // The cancelled session can be resumed.
      const later = await resumeAfterCancel(c.b, a.sessionId, 'aftercancel', c.t, 'result 2');
      assert.ok(contentsText(requestsWith(c.srv, later)[0]!).includes(`sleep 300; echo ${marker}`), 'the cancelled turn is in the resumed history');
    },
  },
  child: {
    title: 'a sub-agent (invoke_agent) is a child; result --child and search --child read its own chat from the Gemini store',
    name: 'parent',
    plan() {
      const out = uniq('childout');
      return { prompt: `TASK:look around:TOOL:Bash:echo ${out}`, description: `generalist: TOOL:Bash:echo ${out}`, answer: `done: ${out}`, out };
    },
    id: /^invoke_agent__invoke_agent_\d+_\d+$/,
    idWhy: "the call's id: the stream has nothing else",
    toolUses: [1, "the child's calls are not in the parent's stream"],
    answerWhy: "the child's answer (its complete_task)",
    sourceWhy: "read from the child's own chat file",
    madeUp: 'invoke_agent__invoke_agent_0_0',
    child(c, p) {
      assert.equal(assertOk(c.b.run('result', ['--name', 'parent', '--json']), 'result').lastAssistantText, `done: done: ${p.out}`);
    },
    end(c, p, _a, child) {
      // search --child reads the child's own transcript: its prompt and its shell call are there.
      const sc = assertOk(c.b.run('search', ['--name', 'parent', '--child', child.id, '--pattern', p.out!]), 'search --child');
      const roles = new Set(sc.matches.map((m: any) => m.role));
      assert.ok(roles.has('user') && roles.has('tool') && roles.has('assistant'), JSON.stringify(sc));
      assert.ok(!sc.matches.some((m: any) => m.snippet.includes('TASK:')), "the parent's prompt is not the child's");
      // The child's requests came from its own prompt, with the shell tool offered (the policy applies).
      const childReqs = requestsWith(c.srv, `TOOL:Bash:echo ${p.out}`).filter((q) => !q.conversation!.lastUserText.startsWith('TASK:'));
      assert.ok(childReqs.length >= 2 && childReqs[0]!.conversation!.toolNames.includes('complete_task'), 'the child asked the model itself');
    },
  },
  big: {
    title: 'a 300 KB prompt reaches the model byte for byte (stdin, never argv)',
    tag: () => uniq('bigok'),
    prompt: (tag) => `${bigPromptLines(tag)}\n`,
    arrived: (_c, req, prompt) => sameText(req.conversation!.lastUserText, prompt),
  },
};
