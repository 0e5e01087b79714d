#!/usr/bin/env node
// Installs subagent-mcp (the subagents verbs as MCP tools) into the MCP configuration of Claude Code,
// Codex, Gemini CLI, Qwen Code, Copilot CLI and OpenCode. The sibling of scripts/install-skill.sh: one
// JSON line per harness on stdout, like the other commands. Where each harness reads its servers, and
// why: docs/mcp.md. Only Node's own modules: it runs before anything else is installed.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const USAGE = `usage: scripts/install-mcp.mjs [--harness claude|codex|gemini|qwen|copilot|opencode|all] [--scope user|project]
                              [--project DIR] [--command PATH] [--registry DIR] [--trust] [--uninstall] [--dry-run]

Adds the MCP server "subagents" (subagent-mcp over stdio) to each agent harness's MCP configuration.

  --harness H    claude, codex, gemini, qwen, copilot, opencode, all (default), or a comma list
  --scope S      user (default): for every project; project: into DIR, for everyone working in it
                 (codex and copilot read MCP servers from the user's configuration only)
  --project DIR  the project for --scope project (default: the current directory)
  --command PATH the server to run (default: subagent-mcp on PATH, else this checkout's bin/mcp)
  --registry DIR give the server --registry DIR (default: none: SUBAGENT_DIR, else the nearest
                 .subagents/ above the directory the harness runs it in)
  --trust        gemini, qwen: their tools run without asking first ("trust": true), which a headless
                 run needs (it cannot ask); the other harnesses allow tools their own way (docs/mcp.md)
  --uninstall    remove the server "subagents" (only that entry; the others stay)
  --dry-run      print what would be done, change nothing
  -h, --help     this text

Where it goes (the entry "subagents"):
  claude    user: claude mcp add-json --scope user      project: DIR/.mcp.json
  codex     user: \${CODEX_HOME:-~/.codex}/config.toml [mcp_servers.subagents]
  gemini    user: ~/.gemini/settings.json               project: DIR/.gemini/settings.json
  qwen      user: ~/.qwen/settings.json                 project: DIR/.qwen/settings.json
  copilot   user: \${COPILOT_HOME:-~/.copilot}/mcp-config.json
  opencode  user: \${XDG_CONFIG_HOME:-~/.config}/opencode/opencode.json   project: DIR/opencode.json

Output, one line per harness: {"ok":true,"harness","scope","path","action","dryRun"} (action: installed,
updated, unchanged, removed, absent, unsupported). Errors: {"ok":false,"code","error","details":{"hint"}}, exit 1.
Restart the agent CLI to pick up the change.
`;

const HARNESSES = ['claude', 'codex', 'gemini', 'qwen', 'copilot', 'opencode'];
const NAME = 'subagents';

function fail(code, error, hint) {
  process.stdout.write(`${JSON.stringify({ ok: false, code, error, details: { hint } })}\n`);
  process.exit(1);
}

/** A harness's own failure: its line says so, and the others go on (exit 1 at the end). */
class HarnessError extends Error {
  constructor(code, message, hint) {
    super(message);
    this.code = code;
    this.hint = hint;
  }
}

function parseArgs(argv) {
  const o = { harness: 'all', scope: 'user', project: process.cwd(), command: null, registry: null, trust: false, uninstall: false, dryRun: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const value = () => {
      if (i + 1 >= argv.length) fail('E_ARG_INVALID', `${a} needs a value`, 'see --help');
      return argv[++i];
    };
    if (a === '-h' || a === '--help') {
      process.stdout.write(USAGE);
      process.exit(0);
    } else if (a === '--harness') o.harness = value();
    else if (a === '--scope') o.scope = value();
    else if (a === '--project') o.project = resolve(value());
    else if (a === '--command') o.command = resolve(value());
    else if (a === '--registry') o.registry = resolve(value());
    else if (a === '--trust') o.trust = true;
    else if (a === '--uninstall') o.uninstall = true;
    else if (a === '--dry-run') o.dryRun = true;
    else fail('E_ARG_UNKNOWN', `unknown argument ${a}`, 'see --help');
  }
  const harnesses = o.harness === 'all' ? HARNESSES : o.harness.split(',');
  for (const h of harnesses)
    if (!HARNESSES.includes(h)) fail('E_ARG_INVALID', `--harness ${h} is not one of ${HARNESSES.join(', ')}`, 'give --harness all or a comma list');
  if (o.scope !== 'user' && o.scope !== 'project') fail('E_ARG_INVALID', `--scope ${o.scope} is not user or project`, 'give --scope user or --scope project');
  if (o.scope === 'project' && !existsSync(o.project)) fail('E_ARG_INVALID', `--project ${o.project} does not exist`, 'give an existing directory');
  return { ...o, harnesses };
}

/** The server to run: subagent-mcp on PATH (an installed package), else this checkout's bin/mcp. */
function serverCommand(given) {
  if (given) return given;
  for (const dir of (process.env.PATH ?? '').split(':')) {
    if (dir && existsSync(join(dir, 'subagent-mcp'))) return join(dir, 'subagent-mcp');
  }
  return join(dirname(dirname(fileURLToPath(import.meta.url))), 'bin', 'mcp');
}

function readJson(path) {
  if (!existsSync(path)) return {};
  try {
    const v = JSON.parse(readFileSync(path, 'utf8'));
    if (v && typeof v === 'object' && !Array.isArray(v)) return v;
  } catch {
    /* below */
  }
  throw new HarnessError('E_CONFIG_INVALID', `${path} is not a JSON object`, 'fix or move the file away by hand; it was left as it is');
}

/** A file written whole: a temporary file beside it, then renamed over it. */
function writeWhole(path, text) {
  mkdirSync(dirname(path), { recursive: true });
  const tmp = `${path}.tmp-${process.pid}`;
  writeFileSync(tmp, text);
  renameSync(tmp, path);
}

/** Sets or removes `entry` at `key` (e.g. ["mcpServers"]) of a JSON config; the action taken. */
function editJson(path, key, entry, o) {
  const config = readJson(path);
  const table = config[key] && typeof config[key] === 'object' ? config[key] : {};
  const had = Object.hasOwn(table, NAME);
  if (o.uninstall) {
    if (!had) return 'absent';
    delete table[NAME];
  } else {
    if (had && JSON.stringify(table[NAME]) === JSON.stringify(entry)) return 'unchanged';
    table[NAME] = entry;
  }
  if (!o.dryRun) writeWhole(path, `${JSON.stringify({ ...config, [key]: table }, null, 2)}\n`);
  return o.uninstall ? 'removed' : had ? 'updated' : 'installed';
}

const tomlString = (s) => JSON.stringify(s);

/** Codex's config.toml: the [mcp_servers.subagents] table replaced, added or removed; the rest kept as it is. */
function editToml(path, command, args, o) {
  const text = existsSync(path) ? readFileSync(path, 'utf8') : '';
  const lines = text.split('\n');
  const header = `[mcp_servers.${NAME}]`;
  const start = lines.findIndex((l) => l.trim() === header);
  let end = start;
  if (start !== -1) {
    end = start + 1;
    while (end < lines.length && !/^\s*\[/.test(lines[end])) end++;
  }
  const table = [header, `command = ${tomlString(command)}`, `args = [${args.map(tomlString).join(', ')}]`, ''];
  if (o.uninstall && start === -1) return 'absent';
  if (!o.uninstall && start !== -1 && lines.slice(start, end).join('\n').trim() === table.join('\n').trim()) return 'unchanged';
  const rest = start === -1 ? lines : [...lines.slice(0, start), ...lines.slice(end)];
  const body = rest.join('\n').replace(/\n*$/, '');
  const next = o.uninstall ? `${body}\n` : `${body ? `${body}\n\n` : ''}${table.join('\n')}`;
  if (!o.dryRun) writeWhole(path, next);
  return o.uninstall ? 'removed' : start === -1 ? 'installed' : 'updated';
}

function claudeUser(command, args, o) {
  const claude = spawnSync('claude', ['mcp', 'get', NAME], { encoding: 'utf8' });
  if (claude.error)
    throw new HarnessError(
      'E_CMD_MISSING',
      'claude is not on PATH: --scope user needs `claude mcp add-json`',
      'install Claude Code, or use --scope project (.mcp.json)',
    );
  const had = claude.status === 0;
  if (o.uninstall && !had) return 'absent';
  if (o.dryRun) return o.uninstall ? 'removed' : had ? 'updated' : 'installed';
  if (had) spawnSync('claude', ['mcp', 'remove', '--scope', 'user', NAME], { encoding: 'utf8' });
  if (o.uninstall) return 'removed';
  const r = spawnSync('claude', ['mcp', 'add-json', '--scope', 'user', NAME, JSON.stringify({ type: 'stdio', command, args })], { encoding: 'utf8' });
  if (r.status !== 0)
    throw new HarnessError('E_INSTALL_FAILED', `claude mcp add-json failed: ${(r.stderr || r.stdout).trim().slice(0, 300)}`, 'run it by hand to see why');
  return had ? 'updated' : 'installed';
}

/** Each harness: where its MCP servers are configured for `scope` (null: it has no such place), and how to edit it. */
function plan(h, o, command, args) {
  const home = homedir();
  const entry = { command, args };
  const project = (...p) => join(o.project, ...p);
  switch (h) {
    case 'claude':
      return o.scope === 'project'
        ? { path: project('.mcp.json'), edit: () => editJson(project('.mcp.json'), 'mcpServers', { type: 'stdio', ...entry }, o) }
        : { path: '~/.claude.json (claude mcp add-json)', edit: () => claudeUser(command, args, o) };
    case 'codex': {
      if (o.scope === 'project') return null;
      const path = join(process.env.CODEX_HOME || join(home, '.codex'), 'config.toml');
      return { path, edit: () => editToml(path, command, args, o) };
    }
    case 'gemini':
    case 'qwen': {
      const path = o.scope === 'project' ? project(`.${h}`, 'settings.json') : join(home, `.${h}`, 'settings.json');
      return { path, edit: () => editJson(path, 'mcpServers', o.trust ? { ...entry, trust: true } : entry, o) };
    }
    case 'copilot': {
      if (o.scope === 'project') return null;
      const path = join(process.env.COPILOT_HOME || join(home, '.copilot'), 'mcp-config.json');
      return { path, edit: () => editJson(path, 'mcpServers', { type: 'local', ...entry, tools: ['*'] }, o) };
    }
    default: {
      const path = o.scope === 'project' ? project('opencode.json') : join(process.env.XDG_CONFIG_HOME || join(home, '.config'), 'opencode', 'opencode.json');
      return { path, edit: () => editJson(path, 'mcp', { type: 'local', command: [command, ...args], enabled: true }, o) };
    }
  }
}

const o = parseArgs(process.argv.slice(2));
const command = serverCommand(o.command);
const args = o.registry ? ['--registry', o.registry] : [];
for (const h of o.harnesses) {
  const p = plan(h, o, command, args);
  try {
    const action = p ? p.edit() : 'unsupported';
    process.stdout.write(`${JSON.stringify({ ok: true, harness: h, scope: o.scope, path: p ? p.path : null, action, dryRun: o.dryRun })}\n`);
  } catch (err) {
    const e = err instanceof HarnessError ? err : new HarnessError('E_WRITE_FAILED', `${p?.path}: ${err.message}`, 'make the configuration writable');
    process.stdout.write(
      `${JSON.stringify({ ok: false, code: e.code, error: e.message, details: { harness: h, scope: o.scope, path: p?.path ?? null, hint: e.hint } })}\n`,
    );
    process.exitCode = 1;
  }
}
