// subagent-attach as a person uses it (issue 28, point 2): the REAL pinned Claude Code and Codex, in their
// interactive mode, in a real terminal (a private tmux server), against the fake model servers. A run is
// started as an orchestrator starts it; the person steps into its session, types a prompt into the CLI's
// own TUI, reads the answer and leaves; that turn is the name's next run (attached, its transcript and
// usage from the CLI's store), `result --since` gives it to the orchestrator, and the orchestrator's next
// resume continues the same session with it — the model sees what the person said.
import { test } from 'node:test';
import { existsSync, appendFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CliName } from '../fakes/env.js';
import { attachScenario, type Person } from './attach/scenario.js';

/** What a person has done once on their machine before using the CLI interactively (onboarding, trust), and its screens. */
const PERSON: Record<'claude' | 'codex', Person> = {
  claude: {
    prepare(w) {
      // Claude Code: onboarding done, the API key of the environment approved, the project trusted.
      const dir = w.box.env.CLAUDE_CONFIG_DIR!;
      mkdirSync(dir, { recursive: true });
      const file = join(dir, '.claude.json');
      const config = existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : {};
      config.hasCompletedOnboarding = true;
      config.customApiKeyResponses = { approved: [w.box.env.ANTHROPIC_API_KEY!.slice(-20)], rejected: [] };
      config.projects = { ...(config.projects ?? {}), [w.cwd]: { hasTrustDialogAccepted: true } };
      writeFileSync(file, JSON.stringify(config));
    },
    ready: /\? for shortcuts/,
    leave: 'C-d',
  },
  codex: {
    prepare(w) {
      // Codex: the project trusted (else a "Trust this folder?" screen first).
      appendFileSync(w.box.env.CODEX_HOME + '/config.toml', `\n[projects.${JSON.stringify(w.cwd)}]\ntrust_level = "trusted"\n`);
    },
    ready: /Ask Codex to do anything/,
    leave: 'C-c',
  },
};

for (const cli of ['claude', 'codex'] as const satisfies readonly CliName[]) {
  test(`${cli}: attach steps into the run's session in its own TUI; the person's turn is the next run; result --since and the next resume carry it`, async (t) => {
    await attachScenario(t, cli, PERSON[cli]);
  });
}
