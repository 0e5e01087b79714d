// The unit half of the contract suite (the end-to-end half: test/e2e/contract-*.test.ts): every external
// CLI's adapter declares who it is — its CLI and program, its graceful signal and stream, the flags it
// supports, the variables that locate its store, its caps, and whether we choose its session ids — one
// row a CLI. A new CLI adds its row; what only its adapter does stays in test/unit/<cli>-adapter.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { claude } from '../../lib/agents/claude/index.js';
import { codex } from '../../lib/agents/codex/index.js';
import { copilot } from '../../lib/agents/copilot/index.js';
import { acp } from '../../lib/agents/acp/index.js';
import { gemini } from '../../lib/agents/gemini/index.js';
import { qwen } from '../../lib/agents/qwen/index.js';
import type { AgentAdapter } from '../../lib/agents/types.js';

interface Identity {
  cli: string;
  adapter: AgentAdapter;
  signal: AgentAdapter['gracefulSignal'];
  /** The flags it supports, by name (`model variant agent files`). */
  supports: string;
  storeEnvKeys: string[];
  /** We choose each new session's id (a fresh UUID each time), or the CLI does (null). */
  ours: boolean;
  caps?: AgentAdapter['caps'];
  /** The adapter reads a child's messages from the CLI's store. */
  childMessages?: boolean;
}

const UUID4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** One row a CLI (one line each, so that the table reads as one). */
const ROWS: Identity[] = [
  { cli: 'claude', adapter: claude, signal: 'SIGINT', supports: 'model variant agent', storeEnvKeys: ['HOME', 'CLAUDE_CONFIG_DIR'], ours: true },
  { cli: 'codex', adapter: codex, signal: 'SIGINT', supports: 'model variant', storeEnvKeys: ['CODEX_HOME', 'HOME'], ours: false, childMessages: true },
  { cli: 'copilot', adapter: copilot, signal: 'SIGTERM', supports: 'model variant agent', storeEnvKeys: ['COPILOT_HOME', 'HOME'], ours: true },
  { cli: 'gemini', adapter: gemini, signal: 'SIGTERM', supports: 'model', storeEnvKeys: ['HOME', 'GEMINI_CLI_HOME'], ours: true },
  { cli: 'qwen', adapter: qwen, signal: 'SIGTERM', supports: 'model', storeEnvKeys: ['HOME', 'QWEN_HOME', 'QWEN_RUNTIME_DIR'], ours: true },
  {
    cli: 'acp',
    adapter: acp,
    signal: 'SIGTERM',
    supports: '',
    storeEnvKeys: ['HOME', 'XDG_CONFIG_HOME', 'XDG_DATA_HOME', 'XDG_STATE_HOME', 'GEMINI_CLI_HOME', 'QWEN_HOME', 'COPILOT_HOME'],
    ours: false,
  },
];

/** Each test's name, as the CLI's own file had it. */
const TITLES: Record<string, string> = {
  claude: 'adapter identity: program, signal, supports, store env',
  codex: 'the adapter declares what codex can do',
  copilot: 'adapter identity: program, signal, supports, store env, a UUID chosen for each new session',
  gemini: 'adapter identity: program, signal, supports, store env, session id chosen by us',
  qwen: 'adapter identity: program, signal, supports, store env, a UUID session id of ours',
  acp: 'adapter identity: the agent its own program, no flag of ours, the stores of the presets, the session the agent chooses, no spend cap',
};

/** Why the graceful signal is the one it is, where a test said. */
const SIGNAL_WHY: Record<string, string> = {
  copilot: 'the npm loader passes no signal on: cancel signals every process',
  gemini: 'SIGINT/SIGTERM leave the shell tool running: the core signals the whole tree',
  qwen: 'its launchers pass no signal on: cancel must reach the inner process',
  acp: 'after session/cancel, every process of the run',
};

/** The caps, where a test checked them, and why. */
const CAPS: Record<string, [AgentAdapter['caps'], string?]> = {
  claude: [{ cost: 'native', tokens: 'stream', turns: 'native' }],
  codex: [
    { cost: null, tokens: 'stream', turns: 'stream' },
    'no cost; tokens and turns (one usage record a model response) from its rollout as the run goes (storeUsage)',
  ],
  acp: [{ cost: null, tokens: null, turns: null }, 'what an ACP agent reports while the run goes is its own choice: no cap holds for all'],
};

const FLAGS = ['model', 'variant', 'agent', 'files'] as const;

for (const row of ROWS) {
  test(TITLES[row.cli]!, () => {
    const a = row.adapter;
    assert.equal(a.cli, row.cli);
    // An ACP run's program is its agent's (programOf), looked up as any CLI's.
    assert.equal(a.program, row.cli);
    assert.equal(a.gracefulSignal, row.signal, SIGNAL_WHY[row.cli]);
    assert.equal(a.stream, 'ndjson');
    assert.deepEqual(a.supports, Object.fromEntries(FLAGS.map((f) => [f, row.supports.split(' ').includes(f)])));
    assert.deepEqual([...a.storeEnvKeys], row.storeEnvKeys);
    const caps = CAPS[row.cli];
    if (caps) assert.deepEqual(a.caps, caps[0], caps[1]);
    if (row.ours) {
      const first = a.chooseSessionId();
      assert.match(first ?? '', UUID4);
      assert.notEqual(a.chooseSessionId(), first);
    } else {
      assert.equal(a.chooseSessionId(), null);
    }
    if (row.childMessages) assert.equal(typeof a.childMessages, 'function');
  });
}
