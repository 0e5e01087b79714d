// Codex's row of the contract suite (row.ts): the real pinned codex against the fake Responses API server
// (test/fakes/openai-responses.ts), each test with a world of its own (fake, registry, HOME, CODEX_HOME).
// Its extras: test/e2e/codex.test.ts.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { FakeOptions } from '../../fakes/script.js';
import { grownText } from '../../fakes/world.js';
import { assertOk } from '../../support/run.js';
import { worlds, type Row } from './row.js';

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export function tag(): string {
  return randomBytes(4).toString('hex');
}

/** Text of every message item of a Responses request body, with its role. */
export function inputMessages(body: unknown): Array<{ role: string; text: string }> {
  const input = (body as { input?: unknown[] })?.input ?? [];
  const out: Array<{ role: string; text: string }> = [];
  for (const it of input as Array<Record<string, unknown>>) {
    if (it.type !== 'message' && it.type !== undefined) continue;
    const content = Array.isArray(it.content) ? (it.content as Array<{ text?: string }>) : [];
    out.push({ role: String(it.role), text: content.map((c) => c.text ?? '').join('') });
  }
  return out;
}

// codex hands a command that is still running back to the model after yield_time_ms (10 s); the fake
// would then answer and the run end on its own before a slow machine gets to the cancel. So the model
// never answers a request that carries a tool output: the run stays in its tool.
const inTool: FakeOptions = { handler: (req) => ((req.conversation?.toolOutputs.length ?? 0) > 0 ? { type: 'hang' } : undefined) };

export const codexRow: Row = {
  cli: 'codex',
  open: worlds('codex'),
  errors: {
    title: 'codex: HTTP 500, HTTP 400 and a failed stream give outcome failed with the error',
    failures() {
      const a = tag();
      const opened = (_c: unknown, r: any) => assert.match(r.sessionId, UUID, `${r.name}: the thread opened before the failure`);
      return [
        { name: 'e500', prompt: 'ERROR:500', exit: 1, error: /high demand/, checked: opened },
        { name: 'e400', prompt: `ERROR:400:bad request ${a}`, exit: 1, error: new RegExp(`bad request ${a} \\(invalid_request_error\\)`), checked: opened },
        { name: 'efail', prompt: `FAIL:model exploded ${a}`, exit: 1, error: new RegExp(`model exploded ${a}`), checked: opened },
      ];
    },
  },
  cancel: {
    title: 'codex: cancel during a long tool command leaves no process of the run',
    marker: 'cx-cancel-',
    running: 'the sleep tool to run',
    fake: inTool,
    procs: 3,
    procsWhy: (n) => `codex launcher, codex, the tool shell (got ${n})`,
    signal: 'INT',
  },
  busy: {
    title: 'codex: status shows the thread id while the run is still running',
    marker: () => `cx-busy-${tag()}`,
    tool: 'Bash',
    fake: inTool,
    choosesWhy: 'codex chooses the thread id',
    running: 'the sleep tool to run',
    recorded: 'the record to hold the thread id',
    reported: /"thread_id":"([^"]+)"/,
    shape: UUID,
    reportedWhy: "the thread id of codex's thread.started",
  },
  child: {
    title: 'codex: a sub-agent shows in children and result --child returns its answer',
    name: 'boss',
    plan() {
      const a = tag();
      return { prompt: `TASK:helper:REPLY:child-answer-${a}`, description: `REPLY:child-answer-${a}`, answer: `child-answer-${a}` };
    },
    id: UUID,
    sourceWhy: "read from the child's own rollout in CODEX_HOME",
    madeUp: '01a2007a-0000-7000-8000-000000000000',
    foreignVerbs: ['result', 'search'],
    child(c, p) {
      assert.equal(c.b.run('result', ['--name', 'boss'], { cwd: c.b.project }).stdout, `done: ${p.answer}\n`);
    },
    end(c, p, _a, child) {
      const s = assertOk(c.b.run('search', ['--name', 'boss', '--child', child.id, '--pattern', p.answer]), 'search --child');
      assert.deepEqual(
        s.matches.map((m: any) => m.role),
        ['user', 'assistant'],
      );
    },
  },
  big: {
    title: 'codex: a 300 KB prompt arrives whole at the model',
    tag: () => `big-ok-${tag()}`,
    prompt: (t) => `${grownText(`REPLY:${t}\n`, (i) => `line ${i} café ✓ \u{1F600} ${'abcdefghij'.repeat(3)}\n`, 300 * 1024)}a last line without a newline`,
    arrived(c, _req, prompt) {
      const users = c.srv
        .modelRequests()
        .flatMap((r) => inputMessages(r.body))
        .filter((m) => m.role === 'user' && m.text.startsWith('REPLY:big-ok'));
      assert.equal(users.length, 1);
      assert.equal(Buffer.byteLength(users[0]!.text), Buffer.byteLength(prompt));
      assert.ok(users[0]!.text === prompt, 'byte-exact');
    },
  },
};
