import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { readJson, runDirOf, runDirs } from '../support/registry.js';
import { makeBox } from '../support/box.js';
import { expectError, resultText, startShell, waitTerminal } from '../support/shell.js';

describe('registry: layout on disk', () => {
  const b = makeBox('reg-layout');
  test('one directory per name, one per run, holding the prompt, the event log, stderr and the record', () => {
    startShell(b, 'team/api', 'echo to-stdout; echo to-stderr >&2');
    startShell(b, 'solo', 'echo x');
    startShell(b, 'team', 'echo the-team');
    waitTerminal(b, ['team/api', 'solo', 'team']);
    // "team" and "team/api" are two names that coexist.
    assert.deepEqual(
      b.run('status', []).json.agents.map((a: any) => a.name),
      ['solo', 'team', 'team/api'],
    );
    assert.equal(resultText(b, 'team'), 'the-team\n');
    assert.equal(resultText(b, 'team/api'), 'to-stdout\n');
    const dir = runDirOf(b.registry, 'team/api');
    assert.equal(dir.split('/').pop(), '1', 'run 1 is directory "1"');
    assert.ok(dir.startsWith(b.registry + '/'));
    const files = readdirSync(dir).sort();
    for (const f of ['events.log', 'prompt', 'record.json', 'stderr.log']) assert.ok(files.includes(f), `${f} in ${files}`);
    assert.equal(readFileSync(join(dir, 'events.log'), 'utf8'), 'to-stdout\n');
    assert.equal(readFileSync(join(dir, 'stderr.log'), 'utf8'), 'to-stderr\n');
    const rec = readJson(join(dir, 'record.json'));
    assert.equal(rec.name, 'team/api');
    assert.equal(rec.status, 'done');
    // Different names live in different directories (writers of different names never contend).
    assert.notEqual(dirname(runDirOf(b.registry, 'solo')), dirname(dir));
    // No temp files or directories are left behind.
    const leftovers = runDirs(b.registry).length;
    assert.equal(leftovers, 3);
    const walk = (d: string): string[] => readdirSync(d, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(join(d, e.name)) : [join(d, e.name)]));
    const stray = walk(b.registry).filter((p) => /\.tmp-|\.lock$|\.break$/.test(p));
    assert.deepEqual(stray, []);
    assert.deepEqual(readdirSync(b.dir), ['registry'], 'nothing outside the registry');
  });
});

describe('registry: which registry a verb uses', () => {
  const b = makeBox('reg-env');
  const noEnv = { SUBAGENT_DIR: undefined, OPENCODE_PSA_DIR: undefined };

  test('SUBAGENT_DIR, OPENCODE_PSA_DIR, --registry (which beats both); relative paths resolve against the caller', () => {
    const r1 = b.run('start-subagent', ['--name', 'e1', '--cli', 'shell', '--prompt', 'echo 1'], {
      env: { ...noEnv, SUBAGENT_DIR: join(b.dir, 'via-subagent-dir') },
    });
    assert.equal(r1.code, 0, r1.stdout);
    assert.equal(r1.json.registry, join(b.dir, 'via-subagent-dir'));
    const r2 = b.run('start-subagent', ['--name', 'e2', '--cli', 'shell', '--prompt', 'echo 2'], {
      env: { ...noEnv, OPENCODE_PSA_DIR: join(b.dir, 'via-psa-dir') },
    });
    assert.equal(r2.code, 0, r2.stdout);
    assert.equal(r2.json.registry, join(b.dir, 'via-psa-dir'));
    const r3 = b.run('start-subagent', ['--name', 'e3', '--cli', 'shell', '--prompt', 'echo 3', '--registry', 'via-flag'], {
      env: { SUBAGENT_DIR: join(b.dir, 'via-subagent-dir'), OPENCODE_PSA_DIR: join(b.dir, 'via-psa-dir') },
    });
    assert.equal(r3.code, 0, r3.stdout);
    assert.equal(r3.json.registry, join(b.dir, 'via-flag'));
    const r4 = b.run('start-subagent', ['--name', 'e4', '--cli', 'shell', '--prompt', 'echo 4'], {
      env: { SUBAGENT_DIR: join(b.dir, 'via-subagent-dir'), OPENCODE_PSA_DIR: join(b.dir, 'via-psa-dir') },
    });
    assert.equal(r4.json.registry, join(b.dir, 'via-subagent-dir'), 'SUBAGENT_DIR before OPENCODE_PSA_DIR');
    mkdirSync(join(b.dir, 'caller'));
    const r5 = b.run('start-subagent', ['--name', 'e5', '--cli', 'shell', '--prompt', 'echo 5'], {
      env: { ...noEnv, SUBAGENT_DIR: 'rel-reg' },
      cwd: join(b.dir, 'caller'),
    });
    assert.equal(r5.json.registry, join(b.dir, 'caller', 'rel-reg'));

    const names = (env: NodeJS.ProcessEnv, args: string[] = []) => {
      const r = b.run('status', args, { env });
      assert.equal(r.code, 0, r.stdout);
      return r.json.agents.map((a: any) => a.name);
    };
    waitTerminal(b, ['e1', 'e4'], { env: { SUBAGENT_DIR: join(b.dir, 'via-subagent-dir') } });
    waitTerminal(b, ['e2'], { env: { ...noEnv, OPENCODE_PSA_DIR: join(b.dir, 'via-psa-dir') } });
    waitTerminal(b, ['e3'], { env: { ...noEnv, SUBAGENT_DIR: join(b.dir, 'via-flag') } });
    waitTerminal(b, ['e5'], { env: { ...noEnv, SUBAGENT_DIR: join(b.dir, 'caller', 'rel-reg') } });
    assert.deepEqual(names({ SUBAGENT_DIR: join(b.dir, 'via-subagent-dir') }), ['e1', 'e4']);
    assert.deepEqual(names({ ...noEnv, OPENCODE_PSA_DIR: join(b.dir, 'via-psa-dir') }), ['e2']);
    assert.deepEqual(names({}, ['--registry', join(b.dir, 'via-flag')]), ['e3']);
    for (const verb of ['result', 'search', 'cancel'] as const) {
      // The same name is found only in the registry that holds it.
      const args = verb === 'search' ? ['--name', 'e3', '--pattern', '3'] : ['--name', 'e3'];
      const here = b.run(verb, [...args, '--registry', join(b.dir, 'via-flag')]);
      assert.notEqual(here.json?.code, 'E_NAME_NOT_FOUND', `${verb} --registry`);
      expectError(b, verb, args, 'E_NAME_NOT_FOUND', { env: { SUBAGENT_DIR: join(b.dir, 'via-subagent-dir') } });
    }
  });

  test('a symlinked registry path and its target are the same registry', () => {
    mkdirSync(join(b.dir, 'real-reg'));
    symlinkSync(join(b.dir, 'real-reg'), join(b.dir, 'link-reg'));
    const r = b.run('start-subagent', ['--name', 'linked', '--cli', 'shell', '--prompt', 'echo linked', '--registry', 'link-reg']);
    assert.equal(r.code, 0, r.stdout);
    assert.equal(r.json.registry, realpathSync(join(b.dir, 'real-reg')));
    const st = b.run('status', ['--wait-terminal', '--name', 'linked', '--timeout', '90', '--registry', join(b.dir, 'real-reg')]);
    assert.equal(st.code, 0, st.stdout);
    assert.equal(st.json.agents[0].outcome, 'succeeded');
  });

  test('a registry path that is a file: E_REGISTRY_NOT_DIRECTORY for a start and for a read (one JSON line), the file untouched', () => {
    writeFileSync(join(b.dir, 'not-a-dir'), 'x');
    const j = expectError(b, 'start-subagent', ['--name', 'f', '--cli', 'shell', '--prompt', 'echo', '--registry', 'not-a-dir'], 'E_REGISTRY_NOT_DIRECTORY');
    assert.equal(j.details.path, join(b.dir, 'not-a-dir'));
    expectError(b, 'result', ['--name', 'f', '--registry', 'not-a-dir'], 'E_REGISTRY_NOT_DIRECTORY');
    expectError(b, 'status', [], 'E_REGISTRY_NOT_DIRECTORY', { env: { SUBAGENT_DIR: join(b.dir, 'not-a-dir') } });
    assert.equal(readFileSync(join(b.dir, 'not-a-dir'), 'utf8'), 'x');
  });

  test('discovery without SUBAGENT_DIR: the nearest ancestor holding .subagents/, else ./.subagents/', (t) => {
    const proj = join(b.dir, 'proj');
    const deep = join(proj, 'src', 'deep');
    mkdirSync(join(proj, '.subagents'), { recursive: true });
    mkdirSync(deep, { recursive: true });
    const r = b.run('start-subagent', ['--name', 'disc', '--cli', 'shell', '--prompt', 'pwd'], { env: noEnv, cwd: deep });
    assert.equal(r.code, 0, r.stdout);
    assert.equal(r.json.registry, join(realpathSync(proj), '.subagents'));
    const st = b.run('status', ['--wait-terminal', '--name', 'disc', '--timeout', '90'], { env: noEnv, cwd: join(proj, 'src') });
    assert.equal(st.code, 0, st.stdout);
    assert.equal(st.json.agents[0].status, 'done');
    assert.equal(resultText(b, 'disc', { env: noEnv, cwd: deep }), realpathSync(deep) + '\n');
    assert.ok(!existsSync(join(deep, '.subagents')) && !existsSync(join(proj, 'src', '.subagents')), 'no registry made below the found one');
    // An inner .subagents is nearer than the outer one.
    mkdirSync(join(proj, 'src', '.subagents'));
    const inner = b.run('status', [], { env: noEnv, cwd: deep });
    assert.equal(inner.json.registry, join(realpathSync(proj), 'src', '.subagents'));
    assert.deepEqual(inner.json.agents, []);
    // SUBAGENT_DIR beats discovery.
    mkdirSync(join(b.dir, 'elsewhere'));
    const env = b.run('status', [], { env: { SUBAGENT_DIR: join(b.dir, 'elsewhere') }, cwd: deep });
    assert.equal(env.json.registry, join(b.dir, 'elsewhere'));

    // No ancestor holds one: ./.subagents of the caller.
    const lone = join(b.dir, 'lone');
    mkdirSync(lone);
    const ancestors: string[] = [];
    for (let d = realpathSync(lone); ; d = dirname(d)) {
      if (existsSync(join(d, '.subagents'))) ancestors.push(d);
      if (dirname(d) === d) break;
    }
    if (ancestors.length) {
      t.skip(`an ancestor of the sandbox holds .subagents/ (${ancestors.join(', ')})`);
      return;
    }
    const r2 = b.run('start-subagent', ['--name', 'here', '--cli', 'shell', '--prompt', 'echo here'], { env: noEnv, cwd: lone });
    assert.equal(r2.code, 0, r2.stdout);
    assert.equal(r2.json.registry, join(realpathSync(lone), '.subagents'));
    assert.ok(existsSync(join(lone, '.subagents')));
    waitTerminal(b, ['here'], { env: noEnv, cwd: lone });
  });
});

describe('registry: a corrupt record is reported and kept', () => {
  const b = makeBox('reg-corrupt');
  test('a truncated record.json: E_REGISTRY_CORRUPT naming the file, the file byte-identical, other names still work', () => {
    for (const n of ['good', 'bad', 'worse']) startShell(b, n, `echo ${n}`);
    waitTerminal(b, ['good', 'bad', 'worse']);
    const badPath = join(runDirOf(b.registry, 'bad'), 'record.json');
    const full = readFileSync(badPath);
    const cut = full.subarray(0, Math.floor(full.length / 2));
    writeFileSync(badPath, cut);
    const worsePath = join(runDirOf(b.registry, 'worse'), 'record.json');
    writeFileSync(worsePath, '');

    for (const [verb, args] of [
      ['status', ['--name', 'bad']],
      ['status', ['--wait-terminal', '--name', 'bad', '--timeout', '5']],
      ['result', ['--name', 'bad']],
      ['result', ['--name', 'bad', '--json']],
      ['search', ['--name', 'bad', '--pattern', 'bad']],
      ['cancel', ['--name', 'bad']],
      ['resume-subagent', ['--name', 'bad', '--prompt', 'echo again']],
    ] as const) {
      const j = expectError(b, verb, [...args], 'E_REGISTRY_CORRUPT');
      assert.equal(j.details.path, badPath, `${verb}: details.path names the file`);
      assert.ok(j.error.includes(badPath), `${verb}: the error names the file`);
      assert.deepEqual(readFileSync(badPath), cut, `${verb} left the file byte-identical`);
    }
    // A start of the same name does not replace it.
    expectError(b, 'start-subagent', ['--name', 'bad', '--cli', 'shell', '--prompt', 'echo new'], 'E_NAME_EXISTS');
    assert.deepEqual(readFileSync(badPath), cut);
    const w = expectError(b, 'status', ['--name', 'worse'], 'E_REGISTRY_CORRUPT');
    assert.equal(w.details.path, worsePath);
    // Valid JSON that is not a record, and a record of a newer format, are corrupt too; kept as they are.
    for (const text of ['[1,2]', '{"format":1}', JSON.stringify({ ...JSON.parse(full.toString()), format: 99 })]) {
      writeFileSync(worsePath, text);
      const x = expectError(b, 'result', ['--name', 'worse'], 'E_REGISTRY_CORRUPT');
      assert.equal(x.details.path, worsePath, text);
      assert.equal(readFileSync(worsePath, 'utf8'), text);
    }
    writeFileSync(worsePath, '');

    // The listing keeps working: good is listed, the bad ones appear as problems.
    const all = b.run('status', []);
    assert.equal(all.code, 0, all.stdout);
    assert.equal(all.json.ok, true);
    assert.deepEqual(
      all.json.agents.map((a: any) => a.name),
      ['good'],
    );
    assert.ok(Array.isArray(all.json.problems));
    const problems = Object.fromEntries(all.json.problems.map((p: any) => [p.name, p]));
    assert.equal(problems.bad?.code, 'E_REGISTRY_CORRUPT');
    assert.equal(problems.bad?.path, badPath);
    assert.equal(problems.worse?.code, 'E_REGISTRY_CORRUPT');
    assert.equal(problems.worse?.path, worsePath);
    assert.equal(resultText(b, 'good'), 'good\n');
    assert.equal(waitTerminal(b, ['good']).good.outcome, 'succeeded');
    startShell(b, 'after', 'echo after');
    assert.equal(waitTerminal(b, ['after']).after.outcome, 'succeeded');
    assert.deepEqual(readFileSync(badPath), cut, 'still untouched at the end');
    assert.equal(readFileSync(worsePath).length, 0);
  });
});
