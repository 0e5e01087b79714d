/**
 * scripts/install-mcp.mjs (issue 26, point 1) as a user runs it, with a box as HOME: the entry
 * "subagents" in each harness's MCP configuration (the other servers and settings kept), project scope,
 * updated when its command changes and unchanged when not, uninstalled leaving the rest, --dry-run
 * changing nothing, and a configuration that is not JSON left alone (E_CONFIG_INVALID). That the hosts
 * then run it: test/e2e/mcp-hosts.test.ts.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from '../support/paths.js';
import { testBox, type Box } from '../support/box.js';

const SCRIPT = join(ROOT, 'scripts', 'install-mcp.mjs');

function install(b: Box, args: string[]): { code: number; lines: any[]; stdout: string } {
  const r = spawnSync(process.execPath, [SCRIPT, '--command', '/opt/subagents/bin/mcp', ...args], {
    env: { ...b.env, HOME: b.dir, XDG_CONFIG_HOME: join(b.dir, '.config'), CODEX_HOME: join(b.dir, '.codex'), COPILOT_HOME: join(b.dir, '.copilot') },
    cwd: b.dir,
    encoding: 'utf8',
  });
  return {
    code: r.status ?? -1,
    lines: r.stdout
      .trim()
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l)),
    stdout: r.stdout + r.stderr,
  };
}

const json = (path: string) => JSON.parse(readFileSync(path, 'utf8'));

test('user scope: each harness gets the entry "subagents", its other servers and settings kept; again: unchanged; another command: updated', (t) => {
  const b = testBox(t, 'mcp-install');
  mkdirSync(join(b.dir, '.gemini'), { recursive: true });
  writeFileSync(join(b.dir, '.gemini', 'settings.json'), JSON.stringify({ model: { name: 'x' }, mcpServers: { other: { command: 'o' } } }));
  mkdirSync(join(b.dir, '.codex'), { recursive: true });
  writeFileSync(join(b.dir, '.codex', 'config.toml'), 'model = "gpt-5"\n\n[mcp_servers.other]\ncommand = "o"\n');
  const first = install(b, ['--harness', 'codex,gemini,qwen,copilot,opencode', '--trust']);
  assert.equal(first.code, 0, first.stdout);
  assert.deepEqual(
    first.lines.map((l) => [l.harness, l.action]),
    [
      ['codex', 'installed'],
      ['gemini', 'installed'],
      ['qwen', 'installed'],
      ['copilot', 'installed'],
      ['opencode', 'installed'],
    ],
  );
  const gemini = json(join(b.dir, '.gemini', 'settings.json'));
  assert.deepEqual(gemini.model, { name: 'x' }, 'other settings kept');
  assert.deepEqual(gemini.mcpServers, { other: { command: 'o' }, subagents: { command: '/opt/subagents/bin/mcp', args: [], trust: true } });
  assert.deepEqual(json(join(b.dir, '.qwen', 'settings.json')).mcpServers.subagents, { command: '/opt/subagents/bin/mcp', args: [], trust: true });
  assert.deepEqual(json(join(b.dir, '.copilot', 'mcp-config.json')).mcpServers.subagents, {
    type: 'local',
    command: '/opt/subagents/bin/mcp',
    args: [],
    tools: ['*'],
  });
  assert.deepEqual(json(join(b.dir, '.config', 'opencode', 'opencode.json')).mcp.subagents, {
    type: 'local',
    command: ['/opt/subagents/bin/mcp'],
    enabled: true,
  });
  const toml = readFileSync(join(b.dir, '.codex', 'config.toml'), 'utf8');
  assert.equal(toml, 'model = "gpt-5"\n\n[mcp_servers.other]\ncommand = "o"\n\n[mcp_servers.subagents]\ncommand = "/opt/subagents/bin/mcp"\nargs = []\n');

  const again = install(b, ['--harness', 'codex,gemini', '--trust']);
  assert.deepEqual(
    again.lines.map((l) => l.action),
    ['unchanged', 'unchanged'],
  );
  const pinned = install(b, ['--harness', 'codex,gemini', '--registry', '/srv/registry']);
  assert.deepEqual(
    pinned.lines.map((l) => l.action),
    ['updated', 'updated'],
  );
  assert.match(
    readFileSync(join(b.dir, '.codex', 'config.toml'), 'utf8'),
    /\[mcp_servers\.subagents\]\ncommand = "\/opt\/subagents\/bin\/mcp"\nargs = \["--registry", "\/srv\/registry"\]\n$/,
  );
  assert.equal((readFileSync(join(b.dir, '.codex', 'config.toml'), 'utf8').match(/\[mcp_servers\.subagents\]/g) ?? []).length, 1, 'one table, replaced');
});

test('project scope, uninstall leaving the rest, --dry-run changing nothing, a broken file left alone', (t) => {
  const b = testBox(t, 'mcp-install-project');
  const project = join(b.dir, 'repo');
  mkdirSync(project);
  const p = install(b, ['--scope', 'project', '--project', project]);
  assert.equal(p.code, 0, p.stdout);
  assert.deepEqual(
    p.lines.map((l) => [l.harness, l.action]),
    [
      ['claude', 'installed'],
      ['codex', 'unsupported'],
      ['gemini', 'installed'],
      ['qwen', 'installed'],
      ['copilot', 'unsupported'],
      ['opencode', 'installed'],
    ],
  );
  assert.deepEqual(json(join(project, '.mcp.json')).mcpServers.subagents, { type: 'stdio', command: '/opt/subagents/bin/mcp', args: [] });
  const before = readFileSync(join(project, '.gemini', 'settings.json'), 'utf8');
  const dry = install(b, ['--scope', 'project', '--project', project, '--harness', 'gemini', '--uninstall', '--dry-run']);
  assert.deepEqual(
    dry.lines.map((l) => [l.action, l.dryRun]),
    [['removed', true]],
  );
  assert.equal(readFileSync(join(project, '.gemini', 'settings.json'), 'utf8'), before, 'a dry run changes nothing');
  const gone = install(b, ['--scope', 'project', '--project', project, '--harness', 'gemini,claude', '--uninstall']);
  assert.deepEqual(
    gone.lines.map((l) => l.action),
    ['removed', 'removed'],
  );
  assert.deepEqual(json(join(project, '.mcp.json')).mcpServers, {});
  assert.deepEqual(
    install(b, ['--scope', 'project', '--project', project, '--harness', 'gemini', '--uninstall']).lines.map((l) => l.action),
    ['absent'],
  );

  writeFileSync(join(project, 'opencode.json'), '{ not json');
  const broken = install(b, ['--scope', 'project', '--project', project, '--harness', 'opencode,qwen']);
  assert.equal(broken.code, 1, broken.stdout);
  assert.equal(broken.lines[0].ok, false);
  assert.equal(broken.lines[0].code, 'E_CONFIG_INVALID');
  assert.equal(broken.lines[0].details.harness, 'opencode');
  assert.equal(broken.lines[1].ok, true, 'the other harness goes on');
  assert.equal(readFileSync(join(project, 'opencode.json'), 'utf8'), '{ not json', 'left as it was');
  for (const [args, code] of [
    [['--harness', 'vim'], 'E_ARG_INVALID'],
    [['--scope', 'galaxy'], 'E_ARG_INVALID'],
    [['--colour'], 'E_ARG_UNKNOWN'],
  ] as const) {
    const r = install(b, [...args]);
    assert.equal(r.code, 1);
    assert.equal(r.lines[0].code, code, args.join(' '));
  }
});
