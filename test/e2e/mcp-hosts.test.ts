/**
 * subagent-mcp with real agent CLIs as its MCP host (issue 26, point 2), each run by us against its fake
 * model server, the server installed by scripts/install-mcp.mjs: Claude Code given the project's .mcp.json
 * in --mcp-config, Gemini CLI through its user settings.json. The fake
 * model calls the tools (start, then status with a wait, then result), and the test checks the child run
 * in the registry (nested under the host's run) and the answers that reached the host's model. The tools
 * themselves: test/cli/mcp.test.ts.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { BIN, ROOT } from '../support/paths.js';
import { assertOk } from '../support/run.js';
import { stderrTail } from '../support/registry.js';
import { fakeWorld, uniq, type World } from '../fakes/world.js';
import type { CliName } from '../fakes/env.js';

/** scripts/install-mcp.mjs, as a user runs it, with the box's HOME: its one line, asserted ok. */
function install(w: World, args: string[]): any {
  const r = spawnSync(process.execPath, [join(ROOT, 'scripts', 'install-mcp.mjs'), '--command', join(BIN, 'mcp'), ...args], {
    env: { ...w.box.env, HOME: dirname(dirname(w.files.find((f) => f.endsWith('settings.json')) ?? join(w.box.dir, 'home', 'x', 'y'))) },
    encoding: 'utf8',
  });
  assert.equal(r.status, 0, r.stdout + r.stderr);
  const line = JSON.parse(r.stdout);
  assert.equal(line.ok, true, r.stdout);
  return line;
}

/** How each host is given the server (by the installer), and what it calls the server's tools. */
const HOSTS: Array<{ cli: CliName; tool: (name: string) => string; setup: (w: World) => string[] }> = [
  {
    cli: 'claude',
    tool: (name) => `mcp__subagents__${name}`,
    setup: (w) => {
      // The project's .mcp.json, given to the headless run as its only MCP configuration.
      const { path } = install(w, ['--harness', 'claude', '--scope', 'project', '--project', w.cwd]);
      const allowed = ['start', 'status', 'result'].map((n) => `mcp__subagents__${n}`).join(',');
      return ['--', '--mcp-config', path, '--strict-mcp-config', '--allowedTools', allowed];
    },
  },
  {
    cli: 'gemini',
    tool: (name) => `mcp_subagents_${name}`,
    setup: (w) => {
      // Into the user's settings.json; trusted: a headless run cannot confirm a tool call.
      const { path } = install(w, ['--harness', 'gemini', '--trust']);
      assert.ok(w.files.includes(path), `the settings the run reads: ${path}`);
      assert.deepEqual(JSON.parse(readFileSync(path, 'utf8')).mcpServers.subagents, { command: join(BIN, 'mcp'), args: [], trust: true });
      return [];
    },
  },
];

for (const h of HOSTS) {
  test(`${h.cli} as the MCP host: the model starts a child run through subagent-mcp, waits for it and reads its answer`, async (t) => {
    const w = await fakeWorld(t, h.cli);
    if (!w) return;
    const b = w.box;
    const host = h.setup(w);
    const answer = uniq('child-answer');
    const turn = async (name: string, tool: string, input: object): Promise<string> => {
      await w.start(name, `TOOL:${h.tool(tool)}:${JSON.stringify(input)}`, host);
      const a = await w.wait(name);
      assert.equal(a.outcome, 'succeeded', `${a.error} ${stderrTail(b.registry, name)}`);
      const all = w.srv.modelRequests().flatMap((r) => r.conversation?.toolOutputs ?? []);
      const outputs = all.filter((o) => o.name === h.tool(tool));
      assert.ok(outputs.length >= 1, `the ${tool} tool's answer reached the host's model: ${JSON.stringify(all).slice(-1500)}`);
      // Gemini wraps an MCP tool's answer in <untrusted_context> tags (its own prompt-injection guard).
      const text = outputs.at(-1)!.text;
      return text.slice(text.indexOf('{'), text.lastIndexOf('}') + 1);
    };

    const started = JSON.parse(await turn('host', 'start', { name: 'host/child', cli: 'shell', prompt: `echo ${answer}` }));
    assert.equal(started.ok, true, JSON.stringify(started));
    assert.equal(started.name, 'host/child');
    const child = assertOk(b.run('status', ['--name', 'host/child'])).agents[0];
    assert.equal(child.parent, 'host', 'the child is nested under the run whose agent started it');
    assert.equal(child.depth, 2);

    const waited = JSON.parse(await turn('waiter', 'status', { names: ['host/child'], waitTerminal: true, timeoutSec: 30 }));
    assert.equal(waited.agents[0].outcome, 'succeeded', JSON.stringify(waited));

    const read = JSON.parse(await turn('reader', 'result', { name: 'host/child' }));
    assert.equal(read.lastAssistantText, `${answer}\n`, JSON.stringify(read));
    // The host's own answer is the model's last turn, which quoted the tool's answer.
    assert.match(assertOk(b.run('result', ['--name', 'reader', '--json'])).lastAssistantText, /^done: /);
  });
}
