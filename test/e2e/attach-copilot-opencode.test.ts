// subagent-attach as a person uses it with the REAL pinned GitHub Copilot CLI and OpenCode (issue 28,
// point 2): the scenario of test/e2e/attach/scenario.ts — a run started, the person steps into its session
// in the CLI's own TUI in tmux, types a prompt, reads the answer and leaves; `result --since`, `search`, and
// the next resume whose request carries what was said — and then no process of the person's turn is left.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CliName } from '../fakes/env.js';
import { pidsWithEnv } from '../support/procs.js';
import { recordOf } from '../support/registry.js';
import { attachScenario, type Person } from './attach/scenario.js';

const PERSON: Record<'copilot' | 'opencode', Person> = {
  copilot: {
    prepare(w) {
      // Copilot: the folder trusted ("Yes, and remember this folder" keeps it in config.json's trustedFolders;
      // else a "Confirm folder trust" screen first). Copilot's config.json starts with `//` comment lines.
      const file = join(w.box.env.COPILOT_HOME!, 'config.json');
      const text = existsSync(file) ? readFileSync(file, 'utf8').replace(/^\s*\/\/.*$/gm, '') : '';
      const config = text.trim() ? JSON.parse(text) : {};
      config.trustedFolders = [...(config.trustedFolders ?? []), w.cwd];
      writeFileSync(file, JSON.stringify(config, null, 2));
    },
    ready: /\? help/,
    leave: 'C-d',
  },
  // OpenCode asks nothing first (its provider is in its opencode.json).
  opencode: { prepare: () => undefined, ready: /ctrl\+p commands/, leave: 'C-c' },
};

for (const cli of ['copilot', 'opencode'] as const satisfies readonly CliName[]) {
  test(`${cli}: attach steps into the run's session in its own TUI; the person's turn is the next run; result --since and the next resume carry it; nothing of it is left running`, async (t) => {
    const done = await attachScenario(t, cli, PERSON[cli]);
    if (!done) return;
    const { runId } = recordOf(done.w.box.registry, 'talk', 2);
    assert.deepEqual(pidsWithEnv(`SUBAGENT_RUN_ID=${runId}`), [], 'no process of the person’s turn is left');
  });
}
