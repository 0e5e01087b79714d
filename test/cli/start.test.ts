import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  ISO_UTC,
  assertError,
  expectError,
  makeBox,
  readJson,
  runDirOf,
  shellArgs,
  startShell,
  statusOf,
  tree,
  waitTerminal,
} from './util.js';

const b = makeBox('start');

describe('start-subagent: the success line and what it leaves on disk', () => {
  test('the JSON line has every field of the contract, and the run is recorded and completes', () => {
    const r = b.run('start-subagent', shellArgs('first', 'echo hello from shell'));
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.equal(r.stdout.split('\n').length, 2, 'exactly one line');
    const j = r.json;
    assert.equal(j.ok, true);
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
    assert.equal(b.run('result', ['--name', 'cwd/default']).stdout, realpathSync(join(b.dir, 'work')) + '\n');
    assert.equal(b.run('result', ['--name', 'cwd/relative']).stdout, realpathSync(sub) + '\n');
  });

  test('SUBAGENT_CLI picks the CLI when --cli is absent; --cli wins over it', () => {
    const r = b.run('start-subagent', ['--name', 'envcli', '--prompt', 'echo via env'], { env: { SUBAGENT_CLI: 'shell' } });
    assert.equal(r.code, 0, r.stdout);
    assert.equal(r.json.cli, 'shell');
    const r2 = b.run('start-subagent', ['--name', 'envcli2', '--cli', 'shell', '--prompt', 'echo flag'], { env: { SUBAGENT_CLI: 'codex' } });
    assert.equal(r2.code, 0, r2.stdout);
    assert.equal(r2.json.cli, 'shell');
    waitTerminal(b, ['envcli', 'envcli2']);
    assert.equal(b.run('result', ['--name', 'envcli']).stdout, 'via env\n');
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
    const body = 'printf "%s\\n" "from file"\n# é ü \u2028 tail\n';
    mkdirSync(join(b.dir, 'p'), { recursive: true });
    writeFileSync(join(b.dir, 'p', 'script.sh'), body);
    startShell(b, 'pf', '', [], {}); // placeholder replaced below
  });
});
