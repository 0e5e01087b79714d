// subagent-attach into the REAL pinned Gemini CLI (`gemini --resume`) and Qwen Code (`qwen --resume`), in
// their interactive mode in a real terminal (a private tmux server), against the fake model servers: the
// scenario of test/e2e/attach/scenario.ts (the person types into the TUI, reads the answer, leaves;
// `result --since`, `search`, and the orchestrator's next resume carrying what was said in person).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import type { CliName } from '../fakes/env.js';
import type { World } from '../fakes/world.js';
import { attachScenario, type Person } from './attach/scenario.js';

/** The session's chat files in the Gemini CLI's store (`session-<minute>-<first 8 of the id>.jsonl`). */
function geminiChats(w: World, sessionId: string): string[] {
  const tmp = join(w.box.env.HOME!, '.gemini', 'tmp');
  return readdirSync(tmp).flatMap((p) => {
    const chats = join(tmp, p, 'chats');
    return existsSync(chats)
      ? readdirSync(chats)
          .filter((n) => n.endsWith(`-${sessionId.slice(0, 8)}.jsonl`))
          .map((n) => join(chats, n))
      : [];
  });
}

const PERSON: Record<'gemini' | 'qwen', Person> = {
  gemini: {
    // Asks nothing the fake's settings.json has not answered (security.auth.selectedType); folder trust is
    // off unless settings turn it on (and the fake's environment trusts the workspace).
    prepare: () => undefined,
    ready: /Type your message/,
    leave: 'C-c',
    // As when the person steps in a minute or more after the run: the CLI's own second chat file of the
    // session then gets a name of its own (in the same minute it would go into the session's file).
    beforeAttach(w, one) {
      const [chat] = geminiChats(w, one.sessionId);
      assert.ok(chat, 'run 1 left its chat');
      renameSync(chat, join(chat, '..', `session-2000-01-01T00-00-${one.sessionId.slice(0, 8)}.jsonl`));
    },
    // Another session's start in the project runs the CLI's clean-up, which deletes a chat holding no
    // conversation and every file of its session's short id with it: while the person is in the session,
    // and again after, the session's own chat survives it, alone.
    async whileAttached(w) {
      await w.start('other', 'REPLY:another session');
      assert.equal((await w.wait('other')).outcome, 'succeeded');
    },
    async afterAttach(w, one) {
      await w.run('resume-subagent', ['--name', 'other', '--prompt', 'REPLY:another session again']);
      assert.equal((await w.wait('other')).outcome, 'succeeded');
      assert.deepEqual(
        geminiChats(w, one.sessionId).map((f) => f.slice(f.lastIndexOf('/') + 1)),
        [`session-2000-01-01T00-00-${one.sessionId.slice(0, 8)}.jsonl`],
        'the session’s own chat, alone (no second, empty one)',
      );
    },
  },
  qwen: {
    // Asks nothing the fake's settings.json has not answered (security.auth.selectedType: openai).
    prepare: () => undefined,
    ready: /Type your message/,
    leave: 'C-c',
  },
};

for (const cli of ['gemini', 'qwen'] as const satisfies readonly CliName[]) {
  test(`${cli}: attach steps into the run's session in its own TUI; the person's turn is the next run; result --since and the next resume carry it`, async (t) => {
    await attachScenario(t, cli, PERSON[cli]);
  });
}
