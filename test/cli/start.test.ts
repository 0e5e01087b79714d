import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ISO_UTC } from '../support/run.js';
import { readJson, runDirOf, settledTree } from '../support/registry.js';
import { makeBox } from '../support/box.js';
import { expectError, resultText, shellArgs, startShell, waitTerminal } from '../support/shell.js';

const b = makeBox('start');

describe('start-subagent: the success line and what it leaves on disk', () => {
  test('the JSON line has every field of the contract, and the run is recorded and completes', () => {
    const r = b.run('start-subagent', shellArgs('first', 'echo hello from shell'));
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.equal(r.stdout.split('\n').length, 2, 'exactly one line');
    const j = r.json;
    assert.equal(j.ok, true);
    assert.equal(j.registry, b.registry);
    assert.equal(j.name, 'first');
    assert.equal(typeof j.pid, 'number');
    assert.ok(j.pid > 0);
    assert.ok(['scheduled', 'running'].includes(j.status), j.status);
    assert.equal(j.sessionId, null);
    assert.equal(j.cli, 'shell');
    assert.equal(j.model, null);
    assert.equal(j.mode, 'new');
    assert.equal(j.run, 1);
    assert.match(j.startedAt, ISO_UTC);
    for (const k of ['ok', 'name', 'pid', 'status', 'sessionId', 'cli', 'model', 'mode', 'run', 'startedAt']) assert.ok(k in j, `missing ${k}`);

    const dir = runDirOf(b.registry, 'first');
    assert.ok(dir.startsWith(b.registry + '/'), 'the run lives inside the registry');
    assert.equal(readFileSync(join(dir, 'prompt'), 'utf8'), 'echo hello from shell');
    const rec = readJson(join(dir, 'record.json'));
    assert.equal(rec.name, 'first');
    assert.equal(rec.run, 1);
    assert.equal(rec.cli, 'shell');

    const a = waitTerminal(b, ['first']).first;
    assert.equal(a.status, 'done');
    assert.equal(a.outcome, 'succeeded');
    assert.equal(a.exitCode, 0);
    assert.equal(a.pid, j.pid, 'status pid is the supervisor the start line named');
    assert.equal(readFileSync(join(dir, 'events.log'), 'utf8'), 'hello from shell\n');
    const res = b.run('result', ['--name', 'first']);
    assert.equal(res.code, 0);
    assert.equal(res.stdout, 'hello from shell\n');
  });

  test('the agent runs in the caller directory by default, in --cwd when given (relative to the caller)', () => {
    const sub = join(b.dir, 'work', 'sub');
    mkdirSync(sub, { recursive: true });
    startShell(b, 'cwd/default', 'pwd', [], { cwd: join(b.dir, 'work') });
    startShell(b, 'cwd/relative', 'pwd', ['--cwd', 'sub'], { cwd: join(b.dir, 'work') });
    startShell(b, 'cwd/absolute', 'pwd', ['--cwd', sub]);
    const all = waitTerminal(b, ['cwd/default', 'cwd/relative', 'cwd/absolute']);
    assert.equal(all['cwd/default']!.cwd, realpathSync(join(b.dir, 'work')));
    assert.equal(all['cwd/relative']!.cwd, realpathSync(sub));
    assert.equal(all['cwd/absolute']!.cwd, realpathSync(sub));
    assert.equal(resultText(b, 'cwd/default'), realpathSync(join(b.dir, 'work')) + '\n');
    assert.equal(resultText(b, 'cwd/relative'), realpathSync(sub) + '\n');
  });

  test('SUBAGENT_CLI picks the CLI when --cli is absent; --cli wins over it', () => {
    const r = b.run('start-subagent', ['--name', 'envcli', '--prompt', 'echo via env'], { env: { SUBAGENT_CLI: 'shell' } });
    assert.equal(r.code, 0, r.stdout);
    assert.equal(r.json.cli, 'shell');
    const r2 = b.run('start-subagent', ['--name', 'envcli2', '--cli', 'shell', '--prompt', 'echo flag'], { env: { SUBAGENT_CLI: 'codex' } });
    assert.equal(r2.code, 0, r2.stdout);
    assert.equal(r2.json.cli, 'shell');
    waitTerminal(b, ['envcli', 'envcli2']);
    assert.equal(resultText(b, 'envcli'), 'via env\n');
  });

  test('E_NAME_EXISTS for a second start of a name; the first run is left byte-identical', () => {
    startShell(b, 'twice', 'echo one');
    waitTerminal(b, ['twice']);
    const dir = runDirOf(b.registry, 'twice');
    const before = readFileSync(join(dir, 'record.json'));
    const j = expectError(b, 'start-subagent', shellArgs('twice', 'echo two'), 'E_NAME_EXISTS');
    assert.match(j.error, /twice/);
    assert.deepEqual(readFileSync(join(dir, 'record.json')), before);
    assert.equal(readFileSync(join(dir, 'prompt'), 'utf8'), 'echo one');
  });
});

describe('start-subagent: prompts', () => {
  test('--prompt-file (relative to the caller) and --prompt - (stdin) are taken byte-exact', () => {
    const body = 'printf "%s\\n" "from the script"\n# é ü \u2028 \t tail without newline';
    mkdirSync(join(b.dir, 'p'), { recursive: true });
    writeFileSync(join(b.dir, 'p', 'script.sh'), body);
    const r1 = b.run('start-subagent', ['--name', 'pf', '--cli', 'shell', '--prompt-file', 'script.sh'], { cwd: join(b.dir, 'p') });
    assert.equal(r1.code, 0, r1.stdout);
    // Relative to the caller's directory, not to --cwd.
    const r3 = b.run('start-subagent', ['--name', 'pf-cwd', '--cli', 'shell', '--prompt-file', 'script.sh', '--cwd', '..'], { cwd: join(b.dir, 'p') });
    assert.equal(r3.code, 0, r3.stdout);
    const r2 = b.run('start-subagent', ['--name', 'stdin', '--cli', 'shell', '--prompt', '-'], { input: body });
    assert.equal(r2.code, 0, r2.stdout);
    waitTerminal(b, ['pf', 'pf-cwd', 'stdin']);
    for (const n of ['pf', 'pf-cwd', 'stdin']) {
      assert.deepEqual(readFileSync(join(runDirOf(b.registry, n), 'prompt')), Buffer.from(body), n);
      assert.equal(resultText(b, n), 'from the script\n');
    }
  });

  test('NUL bytes and invalid UTF-8 in a prompt are stored byte-exact and the script still runs', () => {
    const body = Buffer.concat([Buffer.from('echo before\n# '), Buffer.from([0x00, 0xff, 0xfe, 0xc3, 0x28, 0x00]), Buffer.from('\necho after\n')]);
    writeFileSync(join(b.dir, 'binary.sh'), body);
    startShell(b, 'binary', '', [], {}, ['--prompt-file', 'binary.sh']);
    startShell(b, 'binary-stdin', '', [], { input: body }, ['--prompt', '-']);
    waitTerminal(b, ['binary', 'binary-stdin']);
    for (const n of ['binary', 'binary-stdin']) {
      assert.deepEqual(readFileSync(join(runDirOf(b.registry, n), 'prompt')), body, n);
      assert.match(resultText(b, n), /^before\n(.*\n)?after\n$/s, n);
    }
  });

  test('-- ARGS become the script positional parameters, stored with the run', () => {
    const r = b.run('start-subagent', ['--name', 'args', '--cli', 'shell', '--prompt', 'printf "%s|" "$@"; echo', '--', 'one', 'two words', '--three', '']);
    assert.equal(r.code, 0, r.stdout);
    const a = waitTerminal(b, ['args']).args;
    assert.deepEqual(a.extraArgs, ['one', 'two words', '--three', '']);
    assert.equal(resultText(b, 'args'), 'one|two words|--three||\n');
  });

  test('values stay strings: --name 007 is "007", --prompt 1e3 is the text "1e3"', () => {
    const r = b.run('start-subagent', ['--name', '007', '--cli', 'shell', '--prompt', '1e3']);
    assert.equal(r.code, 0, r.stdout);
    assert.equal(r.json.name, '007');
    assert.equal(typeof r.json.name, 'string');
    const a = waitTerminal(b, ['007'])['007'];
    assert.equal(a.name, '007');
    assert.equal(readFileSync(join(runDirOf(b.registry, '007'), 'prompt'), 'utf8'), '1e3');
    // "1e3" is not a command: the script fails, which proves it ran as the text it is.
    assert.equal(a.outcome, 'failed');
    assert.equal(a.exitCode, 127);
    const s = b.run('search', ['--name', '007', '--pattern', '^1e3$', '--role', 'user']);
    assert.equal(s.json.matches.length, 1, s.stdout);
  });

  test('a prompt that starts with "-" is a prompt', () => {
    const r = b.run('start-subagent', ['--name', 'dash', '--cli', 'shell', '--prompt', '-x; echo dashed']);
    assert.equal(r.code, 0, r.stdout);
    waitTerminal(b, ['dash']);
    assert.equal(readFileSync(join(runDirOf(b.registry, 'dash'), 'prompt'), 'utf8'), '-x; echo dashed');
    assert.equal(resultText(b, 'dash'), 'dashed\n');
    // "--prompt=--name" style too.
    const r2 = b.run('start-subagent', ['--name', 'dash2', '--cli', 'shell', '--prompt=--name; echo eq']);
    assert.equal(r2.code, 0, r2.stdout);
    waitTerminal(b, ['dash2']);
    assert.equal(readFileSync(join(runDirOf(b.registry, 'dash2'), 'prompt'), 'utf8'), '--name; echo eq');
  });

  test('a prompt that is exactly "--help" or "-h" is a prompt, not a request for help', () => {
    for (const [name, prompt] of [
      ['helpword', '--help'],
      ['hword', '-h'],
    ] as const) {
      const r = b.run('start-subagent', ['--name', name, '--cli', 'shell', '--prompt', prompt]);
      assert.equal(r.code, 0, `start --prompt ${prompt}: ${r.stdout.slice(0, 200)}`);
      assert.equal(r.json?.ok, true, `start --prompt ${prompt} printed: ${r.stdout.slice(0, 200)}`);
      waitTerminal(b, [name]);
      assert.equal(readFileSync(join(runDirOf(b.registry, name), 'prompt'), 'utf8'), prompt);
    }
  });

  test('a 1 MB prompt arrives byte-exact via --prompt-file and via stdin, and the agent runs all of it', () => {
    const lines: string[] = ['echo begin'];
    let size = 0;
    let i = 0;
    while (size < 1024 * 1024) {
      const l = i === 6000 ? 'echo middle' : `# ${i} ${createHash('sha256').update(String(i)).digest('hex')} padding padding padding`;
      lines.push(l);
      size += l.length + 1;
      i++;
    }
    lines.push('echo "end-$((6 * 7))"');
    const script = Buffer.from(lines.join('\n') + '\n');
    assert.ok(script.length > 1024 * 1024);
    const sha = createHash('sha256').update(script).digest('hex');
    const file = join(b.dir, 'big.sh');
    writeFileSync(file, script);
    const r1 = b.run('start-subagent', ['--name', 'big/file', '--cli', 'shell', '--prompt-file', file]);
    assert.equal(r1.code, 0, r1.stdout);
    const r2 = b.run('start-subagent', ['--name', 'big/stdin', '--cli', 'shell', '--prompt', '-'], { input: script });
    assert.equal(r2.code, 0, r2.stdout);
    const all = waitTerminal(b, ['big/file', 'big/stdin']);
    for (const n of ['big/file', 'big/stdin']) {
      assert.equal(all[n]!.outcome, 'succeeded', n);
      const stored = readFileSync(join(runDirOf(b.registry, n), 'prompt'));
      assert.equal(stored.length, script.length, n);
      assert.equal(createHash('sha256').update(stored).digest('hex'), sha, n);
      // The last line only prints "end-42" when the shell read the script to its very end.
      assert.equal(resultText(b, n), 'begin\nmiddle\nend-42\n', n);
    }
  });
});

describe('start-subagent: errors (one JSON line, exit 1, nothing created)', () => {
  const e = makeBox('start-errors');
  const sub = join(e.dir, 'sub');
  mkdirSync(sub);
  writeFileSync(join(e.dir, 'empty.txt'), '');
  writeFileSync(join(e.dir, 'afile'), 'x');

  test('E_NAME_REQUIRED', () => {
    expectError(e, 'start-subagent', ['--cli', 'shell', '--prompt', 'echo x'], 'E_NAME_REQUIRED');
  });

  test('E_PROMPT_REQUIRED: no prompt, an empty --prompt, an empty file, empty stdin', () => {
    expectError(e, 'start-subagent', ['--name', 'p', '--cli', 'shell'], 'E_PROMPT_REQUIRED');
    expectError(e, 'start-subagent', ['--name', 'p', '--cli', 'shell', '--prompt', ''], 'E_PROMPT_REQUIRED');
    expectError(e, 'start-subagent', ['--name', 'p', '--cli', 'shell', '--prompt-file', 'empty.txt'], 'E_PROMPT_REQUIRED');
    expectError(e, 'start-subagent', ['--name', 'p', '--cli', 'shell', '--prompt', '-'], 'E_PROMPT_REQUIRED', { input: '' });
  });

  test('E_ARG_UNKNOWN: an unknown flag, a stray positional, a single-dash flag', () => {
    const j = expectError(e, 'start-subagent', ['--name', 'p', '--cli', 'shell', '--prompt', 'x', '--bogus'], 'E_ARG_UNKNOWN');
    assert.match(j.error, /--bogus/);
    expectError(e, 'start-subagent', ['--name', 'p', '--cli', 'shell', '--prompt', 'x', 'stray'], 'E_ARG_UNKNOWN');
    expectError(e, 'start-subagent', ['stray', '--name', 'p', '--cli', 'shell', '--prompt', 'x'], 'E_ARG_UNKNOWN');
    expectError(e, 'start-subagent', ['--name', 'p', '--cli', 'shell', '--prompt', 'x', '-q'], 'E_ARG_UNKNOWN');
    expectError(e, 'start-subagent', ['--name', 'p', '--cli', 'shell', '--promt', 'x'], 'E_ARG_UNKNOWN');
  });

  test('E_ARG_INVALID: a flag without its value, a flag twice, both prompt sources, a missing prompt file', () => {
    expectError(e, 'start-subagent', ['--cli', 'shell', '--name', 'p', '--prompt'], 'E_ARG_INVALID');
    expectError(e, 'start-subagent', ['--name', 'p', '--name', 'q', '--cli', 'shell', '--prompt', 'x'], 'E_ARG_INVALID');
    expectError(e, 'start-subagent', ['--name', 'p', '--cli', 'shell', '--prompt', 'x', '--prompt-file', 'afile'], 'E_ARG_INVALID');
    const j = expectError(e, 'start-subagent', ['--name', 'p', '--cli', 'shell', '--prompt-file', 'nope.txt'], 'E_ARG_INVALID');
    assert.match(j.error, /nope\.txt/);
    expectError(e, 'start-subagent', ['--name', 'p', '--cli', 'shell', '--prompt-file', 'sub'], 'E_ARG_INVALID');
  });

  test('E_CWD_INVALID: a missing directory, a file', () => {
    expectError(e, 'start-subagent', ['--name', 'p', '--cli', 'shell', '--prompt', 'x', '--cwd', 'no/such/dir'], 'E_CWD_INVALID');
    expectError(e, 'start-subagent', ['--name', 'p', '--cli', 'shell', '--prompt', 'x', '--cwd', 'afile'], 'E_CWD_INVALID');
  });

  test('E_CLI_UNKNOWN from --cli and from SUBAGENT_CLI', () => {
    expectError(e, 'start-subagent', ['--name', 'p', '--cli', 'nope', '--prompt', 'x'], 'E_CLI_UNKNOWN');
    expectError(e, 'start-subagent', ['--name', 'p', '--prompt', 'x'], 'E_CLI_UNKNOWN', { env: { SUBAGENT_CLI: 'nope' } });
  });

  test('E_ARG_UNSUPPORTED: --model, --variant, --agent, --file with --cli shell', () => {
    for (const extra of [
      ['--model', 'm'],
      ['--variant', 'high'],
      ['--agent', 'build'],
      ['--file', 'afile'],
    ]) {
      const j = expectError(e, 'start-subagent', ['--name', 'p', '--cli', 'shell', '--prompt', 'x', ...extra], 'E_ARG_UNSUPPORTED');
      assert.match(JSON.stringify(j), new RegExp(extra[0]!));
    }
  });

  test('SUBAGENT_MODEL / OPENCODE_PSA_MODEL in the environment do not make a shell start fail', () => {
    const r = e.run('start-subagent', shellArgs('envmodel', 'echo ok'), { env: { SUBAGENT_MODEL: 'x/y', OPENCODE_PSA_MODEL: 'x/y' } });
    assert.equal(r.code, 0, r.stdout);
    assert.equal(r.json.model, null);
    waitTerminal(e, ['envmodel']);
  });

  test('nothing at all was created by the failed starts', () => {
    // Only the one successful start above created the registry; no stray directories elsewhere.
    assert.deepEqual(
      settledTree(e.dir).filter((p) => !p.startsWith('registry')),
      ['afile', 'empty.txt', 'sub'],
    );
    assert.deepEqual(statusOfNames(), ['envmodel']);
  });

  function statusOfNames(): string[] {
    const r = e.run('status', []);
    assertOk(r);
    return r.json.agents.map((a: any) => a.name);
  }
  function assertOk(r: any) {
    assert.equal(r.code, 0, r.stdout);
    assert.equal(r.json.ok, true);
  }
});
