// test-matrix: once — SKILL.md's front matter and its examples' exit codes and lines: text, the same on
// every Node and process backend (scripts/test.sh).
// test-order: early — it runs the real agent CLIs, as the e2e files do: among the longest files (scripts/test.sh).
// The skill file (skill/subagents/SKILL.md) and its installer (scripts/install-skill.sh), docs/skill.md.
//
// 1. The front matter parses (a strict parser for the YAML subset a skill needs) and follows the Agent
//    Skills rules: name = folder name, lowercase-hyphenated; description non-empty, ≤ 1024 characters.
// 2. Every command in its `sh` blocks runs, in order, in a git project whose registry is ./.subagents —
//    with the six installed command names on PATH and a fake `opencode` (the default CLI) that answers
//    every prompt, so the examples show the real default usage (no --cli). Each must exit as its trailing
//    comment says (`# exits 124: E_WAIT_TIMEOUT …`; 0 otherwise) and print one JSON line (or the
//    documented plain text of `subagent-result` / `status --tree`).
// 3. The installer puts SKILL.md where docs/skill.md says, for every harness and scope, prints one JSON
//    line per install, writes nothing with --dry-run, updates, links, uninstalls, refuses foreign folders.
// 4. When the pinned agent CLIs are installed (test/.clis), each real harness is shown to find the
//    installed skill: Claude Code sends it to a fake Anthropic server, `codex debug prompt-input` lists it,
//    `opencode debug skill` lists it.
import { test, describe, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { BIN, ROOT } from '../support/paths.js';
import { parseOneLine, runProgramAsync } from '../support/run.js';
import { settledTree } from '../support/registry.js';
import { makeBox } from '../support/box.js';
import { baseEnv, claudeSetup, cliBin, qwenSetup, requireCli } from '../fakes/env.js';
import { startOpenAIChat } from '../fakes/openai-chat.js';
import { startAnthropic } from '../fakes/anthropic.js';

const SKILL_DIR = join(ROOT, 'skill', 'subagents');
const SKILL = join(SKILL_DIR, 'SKILL.md');
const INSTALL = join(ROOT, 'scripts', 'install-skill.sh');
const SKILL_TEXT = readFileSync(SKILL, 'utf8');

/** Installed command name → the repository's executable. */
const COMMANDS: Record<string, string> = {
  'start-subagent': 'start-subagent',
  'resume-subagent': 'resume-subagent',
  'subagent-status': 'status',
  'subagent-result': 'result',
  'subagent-search': 'search',
  'subagent-cancel': 'cancel',
  'subagent-prune': 'prune',
};

// ---------------------------------------------------------------------------------------------------
// Front matter: `---\n` key: value lines `\n---\n`. The subset: one line per key, values plain (no
// `: `, no ` #`, no leading indicator character), 'single' or "double" quoted. Anything else is an error,
// so what passes here parses the same in every YAML parser the harnesses use.

export function parseFrontMatter(text: string): { fields: Record<string, string>; body: string } {
  if (!text.startsWith('---\n')) throw new Error('no front matter: the file must start with "---\\n"');
  const end = text.indexOf('\n---\n', 3);
  if (end === -1) throw new Error('the front matter is not closed by a "---" line');
  const fields: Record<string, string> = {};
  for (const line of text.slice(4, end).split('\n')) {
    const m = /^([a-z][a-z0-9_-]*):(?: (.*))?$/.exec(line);
    if (!m) throw new Error(`not a "key: value" line: ${JSON.stringify(line)}`);
    const key = m[1]!;
    const raw = (m[2] ?? '').trim();
    if (key in fields) throw new Error(`key ${key} given twice`);
    let value: string;
    if (raw.startsWith('"')) {
      if (!/^"(?:[^"\\]|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})*"$/.test(raw)) throw new Error(`bad double-quoted value for ${key}`);
      value = JSON.parse(raw) as string;
    } else if (raw.startsWith("'")) {
      if (!/^'(?:[^']|'')*'$/.test(raw)) throw new Error(`bad single-quoted value for ${key}`);
      value = raw.slice(1, -1).replace(/''/g, "'");
    } else {
      if (raw === '') throw new Error(`${key} has no value`);
      if (/^[-?:,[\]{}#&*!|>'"%@`]/.test(raw)) throw new Error(`${key}: a plain value cannot start with ${raw[0]}`);
      if (/: |:$/.test(raw) || / #/.test(raw)) throw new Error(`${key}: a plain value cannot hold ": " or " #" (quote it)`);
      value = raw;
    }
    fields[key] = value;
  }
  return { fields, body: text.slice(end + 5) };
}

describe('SKILL.md front matter', () => {
  test('parses; name matches the folder and the Agent Skills rule; description says when to use it, ≤ 1024 chars', () => {
    const { fields, body } = parseFrontMatter(SKILL_TEXT);
    assert.deepEqual(Object.keys(fields).sort(), ['description', 'name']);
    assert.equal(fields.name, 'subagents');
    assert.match(fields.name!, /^[a-z0-9]+(-[a-z0-9]+)*$/);
    assert.ok(fields.name!.length <= 64);
    assert.equal(fields.name, basename(dirname(SKILL)), 'name must equal the folder name');
    const d = fields.description!;
    assert.ok(d.length > 0 && d.length <= 1024, `description is ${d.length} characters`);
    assert.match(d, /\bUse (it )?(when|to)\b/, 'the description says when to use the skill');
    for (const c of Object.keys(COMMANDS)) assert.ok(d.includes(c), `the description names ${c}`);
    assert.ok(body.trim().length > 0);
    const lines = SKILL_TEXT.split('\n').length;
    assert.ok(lines >= 150 && lines <= 260, `SKILL.md has ${lines} lines; it must stay short for an agent's context`);
  });

  test('the parser is strict', () => {
    assert.throws(() => parseFrontMatter('name: x\n'), /no front matter/);
    assert.throws(() => parseFrontMatter('---\nname: x\n'), /not closed/);
    assert.throws(() => parseFrontMatter('---\nname: x\ndescription: a: b\n---\n'), /cannot hold/);
    assert.throws(() => parseFrontMatter('---\nname: x\nname: y\n---\n'), /twice/);
    assert.throws(() => parseFrontMatter('---\nname: x\n  more\n---\n'), /not a "key: value"/);
    assert.throws(() => parseFrontMatter('---\ndescription: [a]\n---\n'), /cannot start/);
    assert.deepEqual(parseFrontMatter('---\nname: x\ndescription: "a: b"\n---\nbody').fields, { name: 'x', description: 'a: b' });
    assert.deepEqual(parseFrontMatter("---\ndescription: 'it''s'\n---\n").fields, { description: "it's" });
  });
});

// ---------------------------------------------------------------------------------------------------
// The commands of the `sh` blocks.

interface Example {
  /** 1-based line in SKILL.md. */
  line: number;
  /** The whole command as bash runs it (continuation lines and heredoc bodies included). */
  text: string;
  /** The first line without its comment and with quoted strings blanked: where verbs and flags are. */
  head: string;
  comment: string;
}

/** Splits off a trailing `# comment` (outside quotes) and blanks quoted strings. */
function splitComment(line: string): { code: string; bare: string; comment: string } {
  let q: string | null = null;
  let bare = '';
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (q) {
      if (c === q) q = null;
      bare += q ? ' ' : c;
      continue;
    }
    if (c === "'" || c === '"') {
      q = c;
      bare += c;
      continue;
    }
    if (c === '#' && (i === 0 || /\s/.test(line[i - 1]!))) return { code: line.slice(0, i).trimEnd(), bare: bare.trimEnd(), comment: line.slice(i + 1).trim() };
    bare += c;
  }
  return { code: line, bare, comment: '' };
}

export function extractExamples(md: string): Example[] {
  const lines = md.split('\n');
  const out: Example[] = [];
  let inBlock = false;
  let shell = false;
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i]!;
    const fence = /^```\s*([A-Za-z]*)\s*$/.exec(l);
    if (fence) {
      if (!inBlock) {
        inBlock = true;
        shell = ['sh', 'bash', 'shell', 'console'].includes(fence[1]!);
      } else inBlock = false;
      continue;
    }
    if (!inBlock || !shell) continue;
    if (l.trim() === '' || l.trim().startsWith('#')) continue;
    const start = i;
    const { code, bare, comment: c0 } = splitComment(l.replace(/^\$ /, ''));
    let text = code;
    let head = bare;
    let comment = c0;
    while (text.endsWith('\\') && i + 1 < lines.length) {
      i++;
      const next = splitComment(lines[i]!);
      text += '\n' + next.code;
      head = head.replace(/\\$/, '') + ' ' + next.bare;
      if (next.comment) comment = next.comment;
    }
    const here = /<<(-?)\s*(['"]?)([A-Za-z_][A-Za-z0-9_]*)\2/.exec(text);
    if (here) {
      const delim = here[3]!;
      for (;;) {
        i++;
        if (i >= lines.length) throw new Error(`SKILL.md:${start + 1}: heredoc ${delim} is not closed`);
        const body = lines[i]!;
        text += '\n' + body;
        if ((here[1] ? body.replace(/^\t+/, '') : body) === delim) break;
      }
    }
    out.push({ line: start + 1, text, head, comment });
  }
  return out;
}

/** The suite commands a command line calls (at command position), with the flags that follow each. */
function verbsOf(head: string): Array<{ verb: string; args: string }> {
  const re =
    /(?:^|[|;&(]|\$\(|\bdo\b|\bthen\b)\s*(start-subagent|resume-subagent|subagent-status|subagent-result|subagent-search|subagent-cancel|subagent-prune)\b/g;
  const hits = [...head.matchAll(re)];
  return hits.map((m, k) => ({ verb: m[1]!, args: head.slice(m.index! + m[0].length, k + 1 < hits.length ? hits[k + 1]!.index : undefined) }));
}

/** A stand-in for `opencode run --format json`: answers every prompt at once, in OpenCode's event format. */
const FAKE_OPENCODE = `#!/usr/bin/env node
import { randomBytes } from 'node:crypto';
const args = process.argv.slice(2);
if (args[0] !== 'run') process.exit(2);
const at = args.indexOf('--session');
const session = at === -1 ? 'ses_fake' + randomBytes(6).toString('hex') : args[at + 1];
let prompt = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (d) => (prompt += d));
process.stdin.on('end', () => {
  const ev = (type, part) => process.stdout.write(JSON.stringify({ type, timestamp: Date.now(), sessionID: session, part }) + '\\n');
  ev('step_start', { type: 'step-start' });
  ev('text', { type: 'text', messageID: 'msg_1', text: 'Done: ' + prompt.trim().split('\\n')[0] });
  ev('step_finish', { type: 'step-finish', reason: 'stop', cost: 0, tokens: { input: 12, output: 8, reasoning: 0, cache: { read: 0, write: 0 } } });
});
`;

describe('every command shown in SKILL.md runs', () => {
  const examples = extractExamples(SKILL_TEXT);
  // Registered before the box's own clean-up (which ends every process of the box by pid): cancels, by
  // name, whatever an example left going — none should be.
  let cancelLeftovers: (() => void) | null = null;
  after(() => cancelLeftovers?.());
  const b = makeBox('skill');

  test('the examples cover the suite', () => {
    assert.ok(examples.length >= 20, `only ${examples.length} examples`);
    const heads = examples.map((e) => e.head).join('\n');
    for (const c of Object.keys(COMMANDS))
      assert.ok(
        examples.some((e) => verbsOf(e.head).some((v) => v.verb === c)),
        `no example runs ${c}`,
      );
    for (const flag of [
      '--wait-terminal',
      '--timeout',
      '--prefix',
      '--require-success',
      '--batch',
      '--max-concurrent',
      '--runs',
      '--since',
      '--json',
      '--worktree',
      '--recursive',
      '--prompt -',
      '--prompt-file',
      '--role',
      '--tree',
      '--cli shell',
    ])
      assert.ok(heads.includes(flag), `no example shows ${flag}`);
    assert.ok(
      examples.some((e) => /\bexits? 124\b/.test(e.comment)),
      'an example shows the 124 time-out',
    );
  });

  test('in order, against a registry in a git project: exit codes and one JSON line each', () => {
    const project = join(b.dir, 'project');
    const fakebin = join(b.dir, 'fakebin');
    const shims = join(b.dir, 'shims');
    for (const d of [project, fakebin, shims]) mkdirSync(d);
    writeFileSync(join(fakebin, 'opencode'), FAKE_OPENCODE);
    chmodSync(join(fakebin, 'opencode'), 0o755);
    for (const [installed, verb] of Object.entries(COMMANDS)) symlinkSync(join(BIN, verb), join(shims, installed));
    const env: NodeJS.ProcessEnv = {
      ...b.env,
      PATH: `${shims}:${fakebin}:${b.env.PATH ?? '/usr/bin:/bin'}`,
      GIT_AUTHOR_NAME: 'skill test',
      GIT_AUTHOR_EMAIL: 'skill@test.invalid',
      GIT_COMMITTER_NAME: 'skill test',
      GIT_COMMITTER_EMAIL: 'skill@test.invalid',
      GIT_CONFIG_NOSYSTEM: '1',
    };
    // The registry is found like git finds .git: ./.subagents of the project (as for a real user).
    delete env.SUBAGENT_DIR;
    delete env.SUBAGENT_CLI;
    const sh = (cmd: string) =>
      spawnSync('bash', ['-c', cmd], { cwd: project, env, encoding: 'utf8', input: '', timeout: 150_000, maxBuffer: 64 * 1024 * 1024 });
    const init = sh('git init -q -b main . && echo "# app" > README.md && git add README.md && git commit -q -m init');
    assert.equal(init.status, 0, init.stderr);
    // Files the examples name (an orchestrator writes them with its own tools first).
    for (const e of examples)
      for (const m of e.head.matchAll(/--prompt-file[ =](\S+)/g)) writeFileSync(join(project, m[1]!), 'Summarize README.md in five bullets.\n');

    cancelLeftovers = () => {
      const r = sh('subagent-status --all');
      for (const a of (r.status === 0 ? JSON.parse(r.stdout).agents : []) as Array<{ name: string; status: string }>) {
        if (a.status === 'running' || a.status === 'scheduled') sh(`subagent-cancel --name '${a.name}' --recursive`);
      }
    };

    for (const e of examples) {
      const r = sh(e.text);
      const ctx = `SKILL.md:${e.line}: ${e.text}\n  exit=${r.status} signal=${r.signal}\n  stdout=${r.stdout.slice(0, 1500)}\n  stderr=${r.stderr.slice(0, 1500)}`;
      const wantExit = Number(/\bexits? (\d+)\b/.exec(e.comment)?.[1] ?? 0);
      const wantCode = /\b(E_[A-Z_]+)\b/.exec(e.comment)?.[1];
      assert.equal(r.status, wantExit, `wrong exit status; ${ctx}`);
      const verbs = verbsOf(e.head);
      if (verbs.length === 0) continue; // plain shell (git): its exit status is the check
      const last = verbs[verbs.length - 1]!;
      const plain = (last.verb === 'subagent-result' && !/--json\b/.test(last.args)) || (last.verb === 'subagent-status' && /--tree\b/.test(last.args));
      if (plain && r.status === 0) {
        assert.ok(!r.stdout.startsWith('{"ok":'), `expected plain text; ${ctx}`);
        if (last.verb === 'subagent-status') assert.match(r.stdout, /review\/api/, ctx);
        continue;
      }
      let json: any;
      assert.doesNotThrow(() => (json = parseOneLine(r.stdout)), `expected exactly one JSON line; ${ctx}`);
      assert.equal(json.ok, r.status === 0, ctx);
      if (wantCode) assert.equal(json.code, wantCode, ctx);
      if (r.status === 124) assert.equal(json.code, 'E_WAIT_TIMEOUT', ctx);
      if (r.status === 0) assert.equal(typeof json.registry, 'string', ctx);
    }

    // Where the examples leave things: every run ended, as the text says.
    const all = sh('subagent-status --all');
    assert.equal(all.status, 0, all.stdout + all.stderr);
    const byName: Record<string, any> = Object.fromEntries((JSON.parse(all.stdout).agents as any[]).map((a) => [a.name, a]));
    assert.equal(realpathSync(JSON.parse(all.stdout).registry), realpathSync(join(project, '.subagents')));
    for (const a of Object.values(byName) as any[]) assert.equal(a.status, 'done', `${a.name} is ${a.status}`);
    assert.equal(byName['review/api'].run, 2);
    assert.equal(byName['jobs/errors'].outcome, 'cancelled');
    for (const n of ['review/api', 'docs/changelog', 'docs/summary', 'audit/auth', 'audit/sql', 'port/users', 'port/orders', 'fix/login-redirect'])
      assert.equal(byName[n]?.outcome, 'succeeded', `${n}: ${JSON.stringify(byName[n])}`);
    assert.ok(existsSync(join(project, 'reports', 'port.xml')), 'the --junit example wrote its report');
  });

  test('the extractor reads continuation lines, heredocs, comments and pipelines', () => {
    const md = [
      '```sh',
      '$ start-subagent --name a \\',
      '  --prompt x   # exits 1: E_NAME_EXISTS',
      "start-subagent --batch - <<'EOF'",
      '{"name":"b"}',
      'EOF',
      "printf x | subagent-status --prompt '# no'",
      '```',
      '```json',
      'subagent-status',
      '```',
    ].join('\n');
    const ex = extractExamples(md);
    assert.equal(ex.length, 3);
    assert.equal(ex[0]!.text, 'start-subagent --name a \\\n  --prompt x');
    assert.equal(ex[0]!.comment, 'exits 1: E_NAME_EXISTS');
    assert.equal(ex[1]!.text, 'start-subagent --batch - <<\'EOF\'\n{"name":"b"}\nEOF');
    assert.equal(ex[2]!.comment, '');
    assert.deepEqual(
      verbsOf(ex[2]!.head).map((v) => v.verb),
      ['subagent-status'],
    );
  });
});

// ---------------------------------------------------------------------------------------------------
// scripts/install-skill.sh

type Harness = 'claude' | 'opencode' | 'codex' | 'copilot' | 'gemini' | 'qwen';
const HARNESSES: Harness[] = ['claude', 'opencode', 'codex', 'copilot', 'gemini', 'qwen'];

/** Where docs/skill.md says each harness's skill lands (with none of CLAUDE_CONFIG_DIR, XDG_CONFIG_HOME,
 * COPILOT_HOME, GEMINI_CLI_HOME, QWEN_HOME set). */
function documented(h: Harness, scope: 'project' | 'user', home: string, project: string): string {
  const rel = {
    claude: { project: '.claude/skills', user: '.claude/skills' },
    opencode: { project: '.opencode/skills', user: '.config/opencode/skills' },
    codex: { project: '.agents/skills', user: '.agents/skills' },
    copilot: { project: '.github/skills', user: '.copilot/skills' },
    gemini: { project: '.gemini/skills', user: '.gemini/skills' },
    qwen: { project: '.qwen/skills', user: '.qwen/skills' },
  }[h][scope];
  return join(scope === 'project' ? project : home, rel, 'subagents', 'SKILL.md');
}

interface Place {
  dir: string;
  home: string;
  project: string;
  env: NodeJS.ProcessEnv;
}

const places: string[] = [];
after(() => {
  for (const d of places) rmSync(d, { recursive: true, force: true });
});

function place(): Place {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'subagents-skill-')));
  places.push(dir);
  const home = join(dir, 'home');
  const project = join(dir, 'project');
  mkdirSync(home);
  mkdirSync(project);
  const env: NodeJS.ProcessEnv = { ...process.env, HOME: home };
  for (const k of ['XDG_CONFIG_HOME', 'CLAUDE_CONFIG_DIR', 'CODEX_HOME']) delete env[k];
  return { dir, home, project, env };
}

function install(p: Place, args: string[], extraEnv: NodeJS.ProcessEnv = {}) {
  const r = spawnSync(INSTALL, args, { cwd: p.project, env: { ...p.env, ...extraEnv }, encoding: 'utf8', input: '' });
  if (r.error) throw r.error;
  const lines = r.stdout.split('\n').filter((l) => l !== '');
  return { code: r.status, stdout: r.stdout, stderr: r.stderr, lines: lines.map((l) => JSON.parse(l) as any) };
}

describe('scripts/install-skill.sh', () => {
  for (const h of HARNESSES) {
    for (const scope of ['project', 'user'] as const) {
      test(`${h}, --scope ${scope}: lands where documented, one JSON line`, () => {
        const p = place();
        const r = install(p, ['--harness', h, '--scope', scope]);
        assert.equal(r.code, 0, r.stdout + r.stderr);
        assert.equal(r.stderr, '');
        assert.equal(r.lines.length, 1);
        const want = documented(h, scope, p.home, p.project);
        assert.deepEqual(r.lines[0], { ok: true, harness: h, scope, path: want, action: 'installed', mode: 'copy', dryRun: false });
        assert.equal(readFileSync(want, 'utf8'), SKILL_TEXT);
        assert.ok(!lstatSync(dirname(want)).isSymbolicLink());
        // Nothing else was written: only the one skill folder (and its parents).
        const files = settledTree(p.dir).filter((f) => !lstatSync(join(p.dir, f)).isDirectory());
        assert.deepEqual(files, [want.slice(p.dir.length + 1)]);
      });
    }
  }

  test('--harness all (the default) installs all six; --dry-run first writes nothing', () => {
    const p = place();
    const before = settledTree(p.dir);
    const dry = install(p, ['--dry-run']);
    assert.equal(dry.code, 0, dry.stdout + dry.stderr);
    assert.deepEqual(settledTree(p.dir), before, '--dry-run changed the file system');
    assert.deepEqual(
      dry.lines.map((l) => [l.harness, l.scope, l.action, l.dryRun]),
      HARNESSES.map((h) => [h, 'project', 'installed', true]),
    );
    const real = install(p, []);
    assert.equal(real.code, 0, real.stdout + real.stderr);
    assert.deepEqual(
      real.lines.map((l) => l.path),
      HARNESSES.map((h) => documented(h, 'project', p.home, p.project)),
    );
    assert.deepEqual(
      real.lines.map((l) => l.path),
      dry.lines.map((l) => l.path),
    );
    for (const l of real.lines) assert.equal(readFileSync(l.path, 'utf8'), SKILL_TEXT);
    const dryUser = install(p, ['--scope', 'user', '--dry-run']);
    assert.deepEqual(
      dryUser.lines.map((l) => l.path),
      HARNESSES.map((h) => documented(h, 'user', p.home, p.project)),
    );
    for (const d of ['.claude', '.config', '.agents', '.copilot', '.gemini', '.qwen']) assert.ok(!existsSync(join(p.home, d)), `--dry-run made ~/${d}`);
    const dryRemove = install(p, ['--uninstall', '--dry-run']);
    assert.deepEqual(
      dryRemove.lines.map((l) => l.action),
      HARNESSES.map(() => 'removed'),
    );
    for (const l of real.lines) assert.ok(existsSync(l.path), '--uninstall --dry-run removed something');
  });

  test('--project DIR (relative), CLAUDE_CONFIG_DIR, XDG_CONFIG_HOME, COPILOT_HOME, GEMINI_CLI_HOME and QWEN_HOME are honoured', () => {
    const p = place();
    mkdirSync(join(p.project, 'sub'));
    const r = install(p, ['--project', 'sub', '--harness', 'claude,codex']);
    assert.deepEqual(
      r.lines.map((l) => l.path),
      [join(p.project, 'sub/.claude/skills/subagents/SKILL.md'), join(p.project, 'sub/.agents/skills/subagents/SKILL.md')],
    );
    const u = install(p, ['--scope', 'user', '--harness', 'claude,opencode'], { CLAUDE_CONFIG_DIR: join(p.dir, 'cc'), XDG_CONFIG_HOME: join(p.dir, 'xdg') });
    assert.deepEqual(
      u.lines.map((l) => l.path),
      [join(p.dir, 'cc/skills/subagents/SKILL.md'), join(p.dir, 'xdg/opencode/skills/subagents/SKILL.md')],
    );
    const homes = { COPILOT_HOME: join(p.dir, 'cp'), GEMINI_CLI_HOME: join(p.dir, 'gh'), QWEN_HOME: join(p.dir, 'qh') };
    const v = install(p, ['--scope', 'user', '--harness', 'copilot,gemini,qwen'], homes);
    assert.deepEqual(
      v.lines.map((l) => l.path),
      // GEMINI_CLI_HOME stands for the home, COPILOT_HOME and QWEN_HOME for the CLI's own folder.
      [join(p.dir, 'cp/skills/subagents/SKILL.md'), join(p.dir, 'gh/.gemini/skills/subagents/SKILL.md'), join(p.dir, 'qh/skills/subagents/SKILL.md')],
    );
    for (const l of [...r.lines, ...u.lines]) assert.equal(readFileSync(l.path, 'utf8'), SKILL_TEXT);
  });

  test('update replaces the copy; --link symlinks the folder; --uninstall removes only this skill', () => {
    const p = place();
    const path = documented('claude', 'project', p.home, p.project);
    install(p, ['--harness', 'claude']);
    writeFileSync(path, SKILL_TEXT.replace('# subagents', '# stale copy'));
    writeFileSync(join(dirname(path), 'leftover.txt'), 'old');
    const up = install(p, ['--harness', 'claude']);
    assert.equal(up.lines[0].action, 'updated');
    assert.equal(readFileSync(path, 'utf8'), SKILL_TEXT);
    assert.ok(!existsSync(join(dirname(path), 'leftover.txt')), 'an update replaces the whole folder');

    const ln = install(p, ['--harness', 'claude', '--link']);
    assert.deepEqual([ln.lines[0].action, ln.lines[0].mode], ['updated', 'link']);
    assert.ok(lstatSync(dirname(path)).isSymbolicLink());
    assert.equal(readlinkSync(dirname(path)), SKILL_DIR);
    assert.equal(readFileSync(path, 'utf8'), SKILL_TEXT);

    const rm = install(p, ['--harness', 'claude', '--uninstall']);
    assert.deepEqual([rm.code, rm.lines[0].action, rm.lines[0].mode], [0, 'removed', 'link']);
    assert.ok(!existsSync(dirname(path)) && existsSync(SKILL), 'removing the link leaves the source alone');
    const again = install(p, ['--harness', 'claude', '--uninstall']);
    assert.equal(again.lines[0].action, 'absent');

    // A folder named subagents that is not this skill is never replaced or removed.
    const foreign = join(p.project, '.opencode', 'skills', 'subagents');
    mkdirSync(foreign, { recursive: true });
    writeFileSync(join(foreign, 'SKILL.md'), '---\nname: something-else\ndescription: x\n---\n');
    for (const args of [
      ['--harness', 'opencode'],
      ['--harness', 'opencode', '--uninstall'],
    ]) {
      const r = install(p, args);
      assert.equal(r.code, 1);
      assert.equal(r.lines.length, 1);
      assert.equal(r.lines[0].ok, false);
      assert.equal(r.lines[0].code, 'E_TARGET_EXISTS');
      assert.equal(typeof r.lines[0].details.hint, 'string');
      assert.equal(readFileSync(join(foreign, 'SKILL.md'), 'utf8'), '---\nname: something-else\ndescription: x\n---\n');
    }
    // …while the other harnesses of an `all` still install (exit 1 for the one that failed).
    const all = install(p, []);
    assert.equal(all.code, 1);
    assert.deepEqual(
      all.lines.map((l) => [l.ok, l.harness ?? l.details.harness]),
      HARNESSES.map((h) => [h !== 'opencode', h]),
    );
  });

  test('a failed install reports E_WRITE_FAILED and keeps the old install', () => {
    const p = place();
    install(p, ['--harness', 'codex']);
    const path = documented('codex', 'project', p.home, p.project);
    const bin = join(p.dir, 'bin');
    mkdirSync(bin);
    writeFileSync(join(bin, 'cp'), '#!/bin/sh\necho "cp: simulated failure" >&2\nexit 1\n');
    chmodSync(join(bin, 'cp'), 0o755);
    const r = install(p, ['--harness', 'codex'], { PATH: `${bin}:${p.env.PATH}` });
    assert.equal(r.code, 1);
    assert.deepEqual([r.lines.length, r.lines[0].ok, r.lines[0].code, r.lines[0].details.harness], [1, false, 'E_WRITE_FAILED', 'codex']);
    assert.match(r.lines[0].error, /simulated failure/);
    assert.equal(readFileSync(path, 'utf8'), SKILL_TEXT, 'the old copy is still there');
    assert.deepEqual(settledTree(join(p.project, '.agents', 'skills')), ['subagents', 'subagents/SKILL.md'], 'no temp folder is left');
    // A place that cannot hold a folder (.claude is a file): the error names it; nothing else changes.
    writeFileSync(join(p.project, '.claude'), '');
    const f = install(p, ['--harness', 'claude']);
    assert.deepEqual([f.code, f.lines[0].code], [1, 'E_WRITE_FAILED']);
  });

  test('flag errors are one JSON line, exit 1; --help is text, exit 0', () => {
    const p = place();
    for (const [args, code] of [
      [['--harness', 'vim'], 'E_ARG_INVALID'],
      [['--scope', 'global'], 'E_ARG_INVALID'],
      [['--scope'], 'E_ARG_INVALID'],
      [['--harness', 'claude', '--harness', 'codex'], 'E_ARG_INVALID'],
      [['--scope', 'user', '--project', '.'], 'E_ARG_INVALID'],
      [['--project', 'no/such/dir'], 'E_ARG_INVALID'],
      [['--link', '--uninstall'], 'E_ARG_INVALID'],
      [['--dryrun'], 'E_ARG_UNKNOWN'],
      [['extra'], 'E_ARG_UNKNOWN'],
    ] as Array<[string[], string]>) {
      const r = install(p, args);
      assert.equal(r.code, 1, `${args.join(' ')}: ${r.stdout}`);
      assert.equal(r.lines.length, 1, args.join(' '));
      assert.equal(r.lines[0].ok, false);
      assert.equal(r.lines[0].code, code, args.join(' '));
      assert.ok(r.lines[0].details.hint.length > 0);
    }
    assert.deepEqual(settledTree(p.dir), ['home', 'project']);
    const help = spawnSync(INSTALL, ['--help'], { encoding: 'utf8' });
    assert.equal(help.status, 0);
    assert.match(help.stdout, /^usage: scripts\/install-skill\.sh/);
    assert.match(help.stdout, /\.agents\/skills\/subagents/);
  });
});

// ---------------------------------------------------------------------------------------------------
// The real harnesses find what the installer put down (when test/clis/install.sh has installed them).

const DESCRIPTION_HEAD = parseFrontMatter(SKILL_TEXT).fields.description!.slice(0, 60);

/** A place with a git project (the harnesses scope project skills by the repository). */
function gitPlace(): Place {
  const p = place();
  const r = spawnSync('git', ['init', '-q', p.project], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  return p;
}

describe('the real harnesses find the installed skill', () => {
  for (const scope of ['project', 'user'] as const) {
    test(`Claude Code (${scope}): the skill reaches the model`, async (t) => {
      if (!requireCli(t, 'claude')) return;
      const p = gitPlace();
      const srv = await startAnthropic({ handler: () => ({ type: 'text', text: 'ok' }) });
      try {
        const setup = claudeSetup({ home: p.home, baseUrl: srv.url });
        // claudeSetup points CLAUDE_CONFIG_DIR at <home>/.claude, where the installer puts user skills.
        const inst = install(p, ['--harness', 'claude', '--scope', scope], { CLAUDE_CONFIG_DIR: setup.env.CLAUDE_CONFIG_DIR });
        assert.equal(inst.code, 0, inst.stdout);
        // CLAUDE_CODE_TMPDIR: Claude's own temp files go under the place, not /tmp/claude-<uid>/.
        const tmp = join(p.dir, 'tmp');
        mkdirSync(tmp);
        const r = await runProgramAsync(cliBin('claude'), ['-p', 'hello', '--output-format', 'json'], {
          cwd: p.project,
          env: { ...setup.env, CLAUDE_CODE_TMPDIR: tmp },
        });
        assert.equal(r.code, 0, r.stdout + r.stderr);
        const sent = srv.requests.map((q) => JSON.stringify(q.body)).join('\n');
        assert.ok(sent.includes(DESCRIPTION_HEAD), `the skill's description was not sent to the model (${srv.requests.length} requests)`);
      } finally {
        await srv.close();
      }
    });

    test(`Codex (${scope}): codex debug prompt-input lists the skill from its path`, async (t) => {
      if (!requireCli(t, 'codex')) return;
      const p = gitPlace();
      const inst = install(p, ['--harness', 'codex', '--scope', scope]);
      assert.equal(inst.code, 0, inst.stdout);
      const codexHome = join(p.home, '.codex');
      mkdirSync(codexHome);
      const env = { ...baseEnv(p.home), CODEX_HOME: codexHome };
      const r = await runProgramAsync(cliBin('codex'), ['debug', 'prompt-input', 'hello'], { cwd: p.project, env });
      assert.equal(r.code, 0, r.stderr.slice(0, 2000));
      const text = JSON.stringify(JSON.parse(r.stdout));
      assert.ok(text.includes(`- subagents: ${DESCRIPTION_HEAD}`), 'the skill is not in the skills list');
      assert.ok(text.includes(dirname(dirname(inst.lines[0].path))), `the skill root ${dirname(dirname(inst.lines[0].path))} is not listed`);
    });

    test(`OpenCode (${scope}): opencode debug skill lists the skill at its path`, async (t) => {
      if (!requireCli(t, 'opencode')) return;
      const p = gitPlace();
      const inst = install(p, ['--harness', 'opencode', '--scope', scope]);
      assert.equal(inst.code, 0, inst.stdout);
      const env = {
        ...baseEnv(p.home),
        OPENCODE_DISABLE_MODELS_FETCH: '1',
        OPENCODE_DISABLE_AUTOUPDATE: '1',
        OPENCODE_DISABLE_SHARE: '1',
        OPENCODE_DISABLE_LSP_DOWNLOAD: '1',
        npm_config_offline: 'true',
      };
      const r = await runProgramAsync(cliBin('opencode'), ['debug', 'skill'], { cwd: p.project, env });
      assert.equal(r.code, 0, r.stderr.slice(0, 2000));
      const skills = JSON.parse(r.stdout.slice(r.stdout.indexOf('['))) as Array<{ name: string; description: string; location: string }>;
      const mine = skills.find((s) => s.name === 'subagents');
      assert.ok(mine, `not listed: ${skills.map((s) => s.name).join(', ')}`);
      assert.equal(mine.location, inst.lines[0].path);
      assert.ok(mine.description.startsWith(DESCRIPTION_HEAD));
    });

    test(`Copilot (${scope}): copilot skill list lists the skill as a ${scope === 'project' ? 'project' : 'personal'} skill`, async (t) => {
      if (!requireCli(t, 'copilot')) return;
      const p = gitPlace();
      const inst = install(p, ['--harness', 'copilot', '--scope', scope]);
      assert.equal(inst.code, 0, inst.stdout);
      const r = await runProgramAsync(cliBin('copilot'), ['skill', 'list'], { cwd: p.project, env: baseEnv(p.home) });
      assert.equal(r.code, 0, r.stderr.slice(0, 2000));
      // Sections "Project skills:", "Personal skills:", "Builtin skills:", each a list of "  name - description".
      const section = r.stdout.split(/\n(?=\S)/).find((s) => s.startsWith(scope === 'project' ? 'Project skills:' : 'Personal skills:')) ?? '';
      assert.ok(section.includes(`  subagents - ${DESCRIPTION_HEAD}`), `not listed there:\n${r.stdout.slice(0, 1500)}`);
    });

    test(`Gemini CLI (${scope}): gemini skills list lists the skill at its path`, async (t) => {
      if (!requireCli(t, 'gemini')) return;
      const p = gitPlace();
      const inst = install(p, ['--harness', 'gemini', '--scope', scope]);
      assert.equal(inst.code, 0, inst.stdout);
      // Project skills are read only in a trusted folder (as a headless run needs anyway).
      const env = { ...baseEnv(p.home), GEMINI_CLI_TRUST_WORKSPACE: 'true', GEMINI_CLI_NO_RELAUNCH: 'true' };
      const r = await runProgramAsync(cliBin('gemini'), ['skills', 'list'], { cwd: p.project, env });
      assert.equal(r.code, 0, r.stderr.slice(0, 2000));
      const block = r.stdout.split(/\n\n/).find((b) => b.startsWith('subagents ['));
      assert.ok(block, `not listed:\n${r.stdout.slice(0, 1500)}`);
      assert.match(block, /^subagents \[Enabled\]/);
      assert.ok(block.includes(`Description: ${DESCRIPTION_HEAD}`), block);
      assert.ok(block.includes(`Location:    ${inst.lines[0].path}`), block);
    });

    test(`Qwen Code (${scope}): the skill reaches the model`, async (t) => {
      if (!requireCli(t, 'qwen')) return;
      const p = gitPlace();
      const inst = install(p, ['--harness', 'qwen', '--scope', scope]);
      assert.equal(inst.code, 0, inst.stdout);
      const srv = await startOpenAIChat();
      try {
        const setup = qwenSetup({ home: p.home, baseUrl: srv.url });
        const r = await runProgramAsync(cliBin('qwen'), ['-p', 'hello', '--output-format', 'json'], { cwd: p.project, env: setup.env });
        assert.equal(r.code, 0, r.stdout.slice(0, 2000) + r.stderr.slice(0, 2000));
        const sent = srv.requests.map((q) => JSON.stringify(q.body)).join('\n');
        assert.ok(srv.requests.length > 0, 'Qwen sent no request');
        assert.ok(sent.includes(DESCRIPTION_HEAD), `the skill's description was not sent to the model (${srv.requests.length} requests)`);
      } finally {
        await srv.close();
      }
    });
  }
});
