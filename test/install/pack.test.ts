// Installed as users install things (README, "Install"): the project is packed with `npm pack` — from a
// copy of the working tree, as a fresh clone would be, so its `prepare` builds from nothing — and the
// tarball is installed with `npm install -g --prefix <temp>` on every Node of the test matrix
// (SUBAGENT_TEST_NODES, colon-separated node binaries, set by scripts/test.sh; else this Node), with that
// Node first on PATH and no C compiler to be had. Then the INSTALLED commands run a job end to end —
// start → wait → result, and start → cancel — in a temporary HOME with a temporary registry.
// Nothing made for one Node (a V8 code cache, a compiled addon) may be in the tarball.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { ROOT } from '../support/paths.js';
import { parseOneLine } from '../support/run.js';
import { until } from '../support/wait.js';
import { killPids, pidAlive } from '../support/procs.js';

/** The installed command names (package.json "bin"). */
const COMMANDS = [
  'start-subagent',
  'resume-subagent',
  'subagent-status',
  'subagent-result',
  'subagent-search',
  'subagent-cancel',
  'subagent-prune',
  'subagent-mcp',
  'subagent-dash',
  'subagent-attach',
];
const NODES = (process.env.SUBAGENT_TEST_NODES || process.execPath).split(':').filter(Boolean);
const tmp = realpathSync(mkdtempSync(join(tmpdir(), 'subagents-install-')));
/** Processes a test started and must not leave behind (supervisors, the sleep), killed in `after`. */
const started: number[] = [];
after(() => {
  killPids(started);
  rmSync(tmp, { recursive: true, force: true });
});

/** The variables of the environment this test runs in that are ours or npm's to set: not passed on. */
const OWN = /^(SUBAGENT_|OPENCODE_PSA_|npm_|NODE_OPTIONS$|NODE_PATH$|CC$|CXX$)/i;
const baseEnv: NodeJS.ProcessEnv = Object.fromEntries(Object.entries(process.env).filter(([k]) => !OWN.test(k)));

/** npm itself: the machine's (the pinned Node releases carry none), its JavaScript entry when it has one. */
function findNpm(): string[] {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    const p = join(dir, 'npm');
    if (!dir || !existsSync(p)) continue;
    const real = realpathSync(p);
    return /\.[cm]?js$/.test(real) ? [real] : [];
  }
  throw new Error('npm is not on PATH');
}
const npmEntry = findNpm();

function run(cmd: string, args: string[], opts: { env: NodeJS.ProcessEnv; cwd: string; timeoutMs?: number }): SpawnSyncReturns<string> {
  const r = spawnSync(cmd, args, {
    cwd: opts.cwd,
    env: opts.env,
    encoding: 'utf8',
    input: '',
    timeout: opts.timeoutMs ?? 120_000,
    maxBuffer: 64 * 1024 * 1024,
  });
  if (r.error) throw r.error;
  return r;
}
const show = (r: SpawnSyncReturns<string>): string => `exit ${r.status}${r.signal ? ` (${r.signal})` : ''}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`;

/** npm on `node`, with that node's directory first on PATH (npm runs scripts with `node` from PATH). */
function npm(node: string, args: string[], opts: { env: NodeJS.ProcessEnv; cwd: string }): SpawnSyncReturns<string> {
  // No update check: npm would ask the registry whether npm itself is outdated.
  const env = { ...opts.env, PATH: [dirname(node), opts.env.PATH].join(delimiter), npm_config_update_notifier: 'false' };
  return npmEntry.length > 0 ? run(node, [...npmEntry, ...args], { ...opts, env, timeoutMs: 300_000 }) : run('npm', args, { ...opts, env, timeoutMs: 300_000 });
}

/** The npm settings of the machine (its registry, certificates, cache): a user's npm would use them. */
function npmConfig(key: string): string {
  const r = npm(process.execPath, ['config', 'get', key], { env: baseEnv, cwd: tmp });
  assert.equal(r.status, 0, show(r));
  return r.stdout.trim();
}

const userconfig = npmConfig('userconfig');
const globalconfig = npmConfig('globalconfig');
const cache = npmConfig('cache');

/** A compiler that fails, first on PATH: an install that needed one would fail. */
const noCompiler = join(tmp, 'no-compiler');
mkdirSync(noCompiler);
for (const cc of ['cc', 'gcc', 'clang', 'c++', 'g++', 'clang++', 'make']) {
  writeFileSync(join(noCompiler, cc), '#!/bin/sh\necho "no C compiler here" >&2\nexit 1\n', { mode: 0o755 });
}

let tarball = '';
let packed: string[] = [];

/**
 * A copy of the working tree as git sees it (tracked files and new ones not ignored) in `into`: no dist/,
 * no node_modules, no .node/ — a fresh clone of what is being tested.
 */
function cloneInto(into: string): string {
  const ls = run('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { env: baseEnv, cwd: ROOT });
  assert.equal(ls.status, 0, show(ls));
  for (const f of ls.stdout.split('\0').filter(Boolean)) {
    if (!existsSync(join(ROOT, f))) continue; // deleted, not yet staged
    mkdirSync(dirname(join(into, f)), { recursive: true });
    cpSync(join(ROOT, f), join(into, f), { verbatimSymlinks: true });
  }
  return into;
}

/** npm's environment for a user's install: the machine's npm settings, a temp HOME, no working compiler. */
function installEnv(home: string, prefix: string): NodeJS.ProcessEnv {
  return {
    ...baseEnv,
    HOME: home,
    PATH: [noCompiler, join(prefix, 'bin'), '/usr/bin', '/bin'].join(delimiter),
    CC: join(noCompiler, 'cc'),
    CXX: join(noCompiler, 'c++'),
    npm_config_userconfig: userconfig,
    npm_config_globalconfig: globalconfig,
    npm_config_cache: cache,
  };
}

before(() => {
  // The build tools come from the repository's node_modules; `prepare` builds dist/ in the copy.
  const src = cloneInto(join(tmp, 'src'));
  symlinkSync(join(ROOT, 'node_modules'), join(src, 'node_modules'));
  const out = join(tmp, 'pack');
  mkdirSync(out);
  const r = npm(process.execPath, ['pack', '--json', '--pack-destination', out], { env: { ...baseEnv, HOME: join(tmp, 'pack-home') }, cwd: src });
  assert.equal(r.status, 0, show(r));
  const info = JSON.parse(r.stdout)[0];
  tarball = join(out, info.filename);
  packed = info.files.map((f: { path: string }) => f.path);
  assert.ok(existsSync(tarball), show(r));
});

test('the tarball holds every command and their bundles, and nothing built for one Node', () => {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
  assert.deepEqual(Object.keys(pkg.bin).sort(), [...COMMANDS].sort());
  const verbs = Object.values(pkg.bin as Record<string, string>).map((b) => `dist/bin/${b.slice('bin/'.length)}.cjs`);
  for (const f of [
    'package.json',
    'README.md',
    'bin/package.json',
    ...Object.values(pkg.bin as Record<string, string>),
    ...verbs,
    'dist/bin/supervisor.cjs',
    'dist/lib/index.js',
    'dist/lib/index.d.ts',
  ]) {
    assert.ok(packed.includes(f), `${f} is not in the tarball: ${packed.join(' ')}`);
  }
  const versionBound = packed.filter((f) => /\.(cache|node)$/.test(f) || f.endsWith('.c') || f.endsWith('binding.gyp'));
  assert.deepEqual(versionBound, [], 'a code cache, an addon or its sources is in the tarball');
  assert.ok(!packed.some((f) => f.startsWith('dist/test/') || f.startsWith('lib/') || f.startsWith('test/')), 'sources or tests are in the tarball');
  // Its own tar listing agrees with npm's report.
  const tar = run('tar', ['-tzf', tarball], { env: baseEnv, cwd: tmp });
  assert.equal(tar.status, 0, show(tar));
  assert.deepEqual(
    tar.stdout
      .split('\n')
      .filter((l) => l && !l.endsWith('/'))
      .filter((l) => /\.(cache|node)$/.test(l)),
    [],
  );
  assert.equal(pkg.engines.node, '>=22');
  // Nothing is compiled at install time: no install scripts, no gyp.
  for (const s of ['preinstall', 'install', 'postinstall']) assert.equal(pkg.scripts?.[s], undefined, `package.json has a ${s} script`);
  assert.ok(!pkg.gypfile);
});

for (const node of NODES) {
  const version = run(node, ['--version'], { env: baseEnv, cwd: tmp }).stdout.trim();
  describe(`npm install -g of the tarball, then the installed commands, on Node ${version}`, () => {
    const dir = join(tmp, version);
    const prefix = join(dir, 'prefix');
    const home = join(dir, 'home');
    const work = join(dir, 'work');
    const registry = join(dir, 'registry');
    // PATH as a user's shell would have it after the install: this Node, the prefix's bin, the system.
    const env: NodeJS.ProcessEnv = {
      ...baseEnv,
      HOME: home,
      PATH: [dirname(node), join(prefix, 'bin'), '/usr/bin', '/bin'].join(delimiter),
      SUBAGENT_DIR: registry,
    };
    const cmd = (name: string, args: string[]): SpawnSyncReturns<string> => run(join(prefix, 'bin', name), args, { env, cwd: work });

    before(() => {
      for (const d of [dir, home, work]) mkdirSync(d, { recursive: true });
      const r = npm(node, ['install', '--global', '--prefix', prefix, '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=warn', tarball], {
        env: installEnv(home, prefix),
        cwd: work,
      });
      assert.equal(r.status, 0, show(r));
    });

    test('every command is on PATH, and the installed package holds no build made for one Node', () => {
      for (const c of COMMANDS) assert.ok(existsSync(join(prefix, 'bin', c)), `${c} is not in ${join(prefix, 'bin')}`);
      const installed = join(prefix, 'lib', 'node_modules', 'subagents');
      const files = readdirSync(installed, { recursive: true }).map(String);
      assert.deepEqual(
        files.filter((f) => /\.(cache|node)$/.test(f)),
        [],
      );
      const which = run('/bin/sh', ['-c', 'command -v subagent-status; command -v node; node --version'], { env, cwd: work });
      assert.equal(which.stdout, `${join(prefix, 'bin', 'subagent-status')}\n${node}\n${version}\n`, show(which));
    });

    test('start → status --wait-terminal → result through the installed commands', () => {
      const s = cmd('start-subagent', ['--cli', 'shell', '--name', 'hello', '--prompt', `echo "hello from $(node --version)"`]);
      assert.equal(s.status, 0, show(s));
      const start = parseOneLine(s.stdout);
      assert.equal(start.ok, true, s.stdout);
      assert.equal(start.registry, registry);
      assert.equal(typeof start.pid, 'number');
      started.push(start.pid);
      const w = cmd('subagent-status', ['--wait-terminal', '--name', 'hello', '--timeout', '60']);
      assert.equal(w.status, 0, show(w));
      const agent = parseOneLine(w.stdout).agents[0];
      assert.equal(agent.status, 'done', `${w.stdout}\nsupervisor.log: ${supervisorLog(registry, 'hello')}`);
      assert.equal(agent.outcome, 'succeeded', w.stdout);
      assert.equal(agent.exitCode, 0, w.stdout);
      const r = cmd('subagent-result', ['--name', 'hello']);
      assert.equal(r.status, 0, show(r));
      assert.equal(r.stdout, `hello from ${version}\n`);
    });

    test('start → subagent-cancel: the run is done/cancelled, its supervisor and its sleep are gone', async () => {
      const pidFile = join(work, 'sleep.pid');
      const s = cmd('start-subagent', ['--cli', 'shell', '--name', 'sleeper', '--prompt', `sleep 60 & echo $! > '${pidFile}'; wait`]);
      assert.equal(s.status, 0, show(s));
      const supervisor = parseOneLine(s.stdout).pid as number;
      started.push(supervisor);
      const sleep = await until(
        'the run to start its sleep',
        () => (existsSync(pidFile) && Number(readFileSync(pidFile, 'utf8')) > 0 ? Number(readFileSync(pidFile, 'utf8')) : 0),
        60_000,
      );
      started.push(sleep);
      assert.ok(pidAlive(sleep));
      // The agent runs a moment before its supervisor records it running (the record follows the spawn).
      const running = await until(
        'the run to be recorded running',
        () => {
          const a = parseOneLine(cmd('subagent-status', ['--name', 'sleeper']).stdout).agents[0];
          return a.status === 'scheduled' ? null : a;
        },
        60_000,
      );
      assert.equal(running.status, 'running', JSON.stringify(running));
      assert.equal(running.pid, supervisor);
      const c = cmd('subagent-cancel', ['--name', 'sleeper']);
      assert.equal(c.status, 0, show(c));
      const cancel = parseOneLine(c.stdout);
      assert.equal(cancel.ok, true, c.stdout);
      assert.equal(cancel.previousStatus, 'running', c.stdout);
      const ended = parseOneLine(cmd('subagent-status', ['--name', 'sleeper']).stdout).agents[0];
      assert.equal(ended.status, 'done', JSON.stringify(ended));
      assert.equal(ended.outcome, 'cancelled', JSON.stringify(ended));
      await until('the sleep and the supervisor to be gone', () => !pidAlive(sleep) && !pidAlive(supervisor), 10_000);
    });
  });
}

function supervisorLog(registry: string, name: string): string {
  try {
    return readFileSync(join(registry, 'agents', name, '1', 'supervisor.log'), 'utf8').slice(-2000) || '(empty)';
  } catch {
    return '(none)';
  }
}

test('npm install -g --allow-scripts="$PWD" . in a fresh clone (README): npm links it, its prepare installs the build tools and builds; the commands run', () => {
  const dir = join(tmp, 'clone-install');
  const clone = cloneInto(join(dir, 'subagents'));
  const prefix = join(dir, 'prefix');
  const home = join(dir, 'home');
  mkdirSync(home);
  // --allow-scripts: npm 12 runs a directory's prepare only when allowed (by its path); npm 11 warns
  // without it and hands it to the script's environment, where the nested `npm ci` must not see it.
  const r = npm(
    process.execPath,
    ['install', '--global', `--allow-scripts=${clone}`, '--prefix', prefix, '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=warn', '.'],
    { env: installEnv(home, prefix), cwd: clone },
  );
  assert.equal(r.status, 0, show(r));
  assert.doesNotMatch(r.stderr, /install-scripts/, 'npm warned about the prepare script');
  // npm links a directory (like npm link): the commands run the clone's own dist/.
  assert.equal(realpathSync(join(prefix, 'lib', 'node_modules', 'subagents')), clone);
  assert.ok(existsSync(join(clone, 'dist', 'bin', 'start-subagent.cjs')), 'prepare built nothing');
  const env: NodeJS.ProcessEnv = {
    ...baseEnv,
    HOME: home,
    PATH: [dirname(process.execPath), join(prefix, 'bin'), '/usr/bin', '/bin'].join(delimiter),
    SUBAGENT_DIR: join(dir, 'registry'),
  };
  const s = run(join(prefix, 'bin', 'start-subagent'), ['--cli', 'shell', '--name', 'clone', '--prompt', 'echo linked'], { env, cwd: dir });
  assert.equal(s.status, 0, show(s));
  started.push(parseOneLine(s.stdout).pid);
  const w = run(join(prefix, 'bin', 'subagent-status'), ['--wait-terminal', '--name', 'clone', '--timeout', '60'], { env, cwd: dir });
  assert.equal(parseOneLine(w.stdout).agents[0]?.outcome, 'succeeded', show(w));
  assert.equal(run(join(prefix, 'bin', 'subagent-result'), ['--name', 'clone'], { env, cwd: dir }).stdout, 'linked\n');
  const u = npm(process.execPath, ['uninstall', '--global', '--prefix', prefix, '--loglevel=warn', 'subagents'], { env: installEnv(home, prefix), cwd: dir });
  assert.equal(u.status, 0, show(u));
  assert.deepEqual(
    COMMANDS.filter((c) => existsSync(join(prefix, 'bin', c))),
    [],
    'npm uninstall -g left commands behind',
  );
  assert.ok(existsSync(join(clone, 'package.json')), 'npm uninstall -g removed the clone itself');
});
