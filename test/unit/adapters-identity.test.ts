// The unit half of the contract suite (the end-to-end half: test/e2e/contract-*.test.ts): every external
// CLI's adapter declares who it is — its CLI and program, its graceful signal and stream, the flags it
// supports, the variables that locate its store, its caps, and whether we choose its session ids — one
// row a CLI. A new CLI adds its row; what only its adapter does stays in test/unit/<cli>-adapter.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { claude } from '../../lib/agents/claude/index.js';
import { codex } from '../../lib/agents/codex/index.js';
import { copilot } from '../../lib/agents/copilot/index.js';
import { gemini } from '../../lib/agents/gemini/index.js';
import { qwen } from '../../lib/agents/qwen/index.js';
import type { AgentAdapter } from '../../lib/agents/types.js';

interface Identity {
  /** The test's name, as the CLI's own file had it. */
  title: string;
  cli: string;
  adapter: AgentAdapter;
  signal: AgentAdapter['gracefulSignal'];
  signalWhy?: string;
  supports: AgentAdapter['supports'];
  storeEnvKeys: string[];
  caps?: AgentAdapter['caps'];
  capsWhy?: string;
  /** We choose each new session's id (a fresh UUID each time), or the CLI does (null). */
  ours: boolean;
  /** The adapter reads a child's messages from the CLI's store. */
  childMessages?: boolean;
}

const UUID4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

const ROWS: Identity[] = [
  {
    title: 'adapter identity: program, signal, supports, store env',
    cli: 'claude',
    adapter: claude,
    signal: 'SIGINT',
    supports: { model: true, variant: true, agent: true, files: false },
    storeEnvKeys: ['HOME', 'CLAUDE_CONFIG_DIR'],
    caps: { cost: 'native', tokens: 'stream', turns: 'native' },
    ours: true,
  },
  {
    title: 'the adapter declares what codex can do',
    cli: 'codex',
    adapter: codex,
    signal: 'SIGINT',
    supports: { model: true, variant: true, agent: false, files: false },
    storeEnvKeys: ['CODEX_HOME', 'HOME'],
    caps: { cost: null, tokens: 'stream', turns: 'stream' },
    capsWhy: 'no cost; tokens and turns (one usage record a model response) from its rollout as the run goes (storeUsage)',
    ours: false,
    childMessages: true,
  },
  {
    title: 'adapter identity: program, signal, supports, store env, a UUID chosen for each new session',
    cli: 'copilot',
    adapter: copilot,
    signal: 'SIGTERM',
    signalWhy: 'the npm loader passes no signal on: cancel signals every process',
    supports: { model: true, variant: true, agent: true, files: false },
    storeEnvKeys: ['COPILOT_HOME', 'HOME'],
    ours: true,
  },
  {
    title: 'adapter identity: program, signal, supports, store env, session id chosen by us',
    cli: 'gemini',
    adapter: gemini,
    signal: 'SIGTERM',
    signalWhy: 'SIGINT/SIGTERM leave the shell tool running: the core signals the whole tree',
    supports: { model: true, variant: false, agent: false, files: false },
    storeEnvKeys: ['HOME', 'GEMINI_CLI_HOME'],
    ours: true,
  },
  {
    title: 'adapter identity: program, signal, supports, store env, a UUID session id of ours',
    cli: 'qwen',
    adapter: qwen,
    signal: 'SIGTERM',
    signalWhy: 'its launchers pass no signal on: cancel must reach the inner process',
    supports: { model: true, variant: false, agent: false, files: false },
    storeEnvKeys: ['HOME', 'QWEN_HOME', 'QWEN_RUNTIME_DIR'],
    ours: true,
  },
];

for (const row of ROWS) {
  test(row.title, () => {
    const a = row.adapter;
    assert.equal(a.cli, row.cli);
    assert.equal(a.program, row.cli);
    assert.equal(a.gracefulSignal, row.signal, row.signalWhy);
    assert.equal(a.stream, 'ndjson');
    assert.deepEqual(a.supports, row.supports);
    assert.deepEqual([...a.storeEnvKeys], row.storeEnvKeys);
    if (row.caps) assert.deepEqual(a.caps, row.caps, row.capsWhy);
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
