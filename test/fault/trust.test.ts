/**
 * Issue 23, points 1–4 and 9: the attacker's side (docs/security.md). A registry committed into a
 * repository and cloned runs nothing; hooks another user planted in a loosely-moded registry never run;
 * walking up passes over another user's `.subagents` and symlinks and stops at the home directory and
 * SUBAGENT_CEILING_DIRECTORIES; the compile cache is never read from nor written to a shared temp
 * directory. The attacker is another uid (setpriv), never a file this process wrote and called foreign.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { assertError, assertOk, type RunOpts } from '../support/run.js';
import { LONG, until } from '../support/wait.js';
import { untilGone } from '../support/procs.js';
import { testBox, type Box } from '../support/box.js';
import { runDirPath } from '../support/registry.js';
import { gate, open, shellArgs } from '../support/shell.js';
import { skipUnlessCi } from '../support/machine.js';
import { ATTACKER, VICTIM, noOtherUsers, runAs, shAs } from '../support/users.js';
import { BIN } from '../support/paths.js';

/** Discovery only: no SUBAGENT_DIR. */
const FOUND: NodeJS.ProcessEnv = { SUBAGENT_DIR: '', OPENCODE_PSA_DIR: '' };

function at(cwd: string, env: NodeJS.ProcessEnv = {}): RunOpts {
  return { cwd, env: { ...FOUND, ...env } };
}

/** A hook that leaves a file behind when it runs: what the attacker wants. */
function pwn(file: string): string {
  return `echo "$(id -u) $SUBAGENT_NAME" >> '${file}'`;
}

async function entryOf(b: Box, name: string, opts: RunOpts): Promise<any> {
  const line = assertOk(await b.runAsync('status', ['--name', name], opts), `status ${name}`);
  return line.agents[0];
}

/** A run whose supervisor and agent were killed (-9): `unknown`, its end never announced. */
async function deadRun(b: Box, name: string, extra: string[], opts: RunOpts): Promise<void> {
  assertOk(b.run('start-subagent', shellArgs(name, gate(join(b.dir, `never-${name}`)), extra), opts), `start ${name}`);
  let e: any;
  await until(
    `${name} runs`,
    async () => {
      e = await entryOf(b, name, opts);
      return e?.status === 'running' && e.agentPid;
    },
    LONG,
  );
  process.kill(e.pid, 'SIGKILL');
  process.kill(e.agentPid, 'SIGKILL');
  await untilGone(e.pid, 'the supervisor is dead');
  await untilGone(e.agentPid, 'the agent is dead');
}

function git(cwd: string, ...args: string[]): void {
  execFileSync('git', ['-c', 'user.name=attacker', '-c', 'user.email=a@example.invalid', '-c', 'init.defaultBranch=main', ...args], { cwd, stdio: 'ignore' });
}

/** The attacker's repository, empty. */
function repository(b: Box): string {
  const origin = join(b.dir, 'origin');
  mkdirSync(origin);
  git(origin, 'init', '-q');
  return origin;
}

/** Its registry committed (`git add -f`), and the repository cloned: the clone's path. */
function cloneWithRegistry(b: Box, origin: string): string {
  git(origin, 'add', '-f', '.subagents');
  git(origin, 'commit', '-q', '-m', 'a registry');
  const clone = join(b.dir, 'clone');
  git(b.dir, 'clone', '-q', origin, clone);
  return clone;
}

function modeOf(path: string): number {
  return statSync(path).mode & 0o7777;
}

describe('trust: what only you could have written', { concurrency: 2 }, () => {
  test('a registry committed into a repository and cloned is listed and read, but runs no hook and no recorded onEnd: not from reading, not from --announce, not at the end of a run started there', async (t) => {
    const b = testBox(t, 'trust-clone');
    const origin = repository(b);
    const onEndFile = join(b.dir, 'pwned-onend');
    const hookFile = join(b.dir, 'pwned-hook');
    // The attacker's repository: a run whose supervisor is dead, with an onEnd, and a registry hook.
    await deadRun(b, 'k', ['--on-end', pwn(onEndFile)], at(origin));
    const hooks = join(origin, '.subagents', 'hooks');
    mkdirSync(hooks);
    writeFileSync(join(hooks, 'on-end'), `#!/bin/sh\n${pwn(hookFile)}\n`, { mode: 0o755 });
    assert.equal(existsSync(join(runDirPath(join(origin, '.subagents'), 'k'), 'on-end.json')), false);
    const clone = cloneWithRegistry(b, origin);
    const registry = join(clone, '.subagents');
    const claim = join(runDirPath(registry, 'k'), 'on-end.json');
    assert.ok(existsSync(join(registry, 'hooks', 'on-end')), 'the clone carries the hook');

    // Listed and read: the run is there, unknown; the listing says the registry runs no hooks, and how to adopt it.
    const listing = assertOk(await b.runAsync('status', [], at(clone)));
    assert.equal(existsSync(claim), false, 'listing a cloned registry fired its end hooks');
    assert.equal(listing.registry, registry);
    assert.equal(listing.agents[0].status, 'unknown');
    assert.match(listing.untrusted.reason, /clone/);
    assert.ok(listing.untrusted.hint.includes(`--registry ${registry}`), listing.untrusted.hint);
    await b.runAsync('result', ['--name', 'k'], at(clone));
    await b.runAsync('search', ['--name', 'k', '--pattern', 'x'], at(clone));
    assertOk(await b.runAsync('status', ['--wait-terminal', '--name', 'k', '--timeout', '5'], at(clone)));
    const announced = assertOk(await b.runAsync('status', ['--announce'], at(clone)));
    assert.ok(announced.untrusted, 'an --announce in an untrusted registry says why it fired nothing');
    assert.equal(existsSync(claim), false, 'a verb fired the end hooks of a cloned registry');

    // A start there may not ask for a hook that would never run; one without runs, and at its end the
    // supervisor runs no registry hook either.
    const refused = assertError(await b.runAsync('start-subagent', shellArgs('mine', 'true', ['--on-end', 'true']), at(clone)), 'E_REGISTRY_UNTRUSTED');
    assert.equal(refused.details.path, registry);
    const mine = assertOk(await b.runAsync('start-subagent', shellArgs('mine', 'echo mine'), at(clone)));
    await untilGone(mine.pid, 'the supervisor of mine ended');
    assert.equal((await entryOf(b, 'mine', at(clone))).outcome, 'succeeded');
    assert.match(readFileSync(join(runDirPath(registry, 'mine'), 'supervisor.log'), 'utf8'), /were not run: the registry runs no hooks/);
    assert.equal(existsSync(onEndFile) || existsSync(hookFile), false, 'the cloned code ran');

    // Adopting it is naming it: then --announce fires the unknown run's hooks, once.
    assertOk(await b.runAsync('status', ['--announce', '--registry', registry], at(clone)));
    await until('the adopted registry announced k', () => existsSync(onEndFile) && existsSync(hookFile), LONG);
    assertOk(await b.runAsync('status', ['--announce', '--registry', registry], at(clone)));
    assert.equal(readFileSync(onEndFile, 'utf8'), '0 k\n', 'exactly once');
  });

  test('a follow-up queued in a registry committed into a repository and cloned is never started by a verb that notices, until the registry is adopted', async (t) => {
    const b = testBox(t, 'trust-clone-follow-up');
    const origin = repository(b);
    const ran = join(b.dir, 'pwned-follow-up');
    // The attacker's repository: a run whose supervisor is dead, and a prompt queued to follow it whatever its end.
    await deadRun(b, 'q', [], at(origin));
    const queue = join(origin, '.subagents', 'follow-ups', 'q');
    mkdirSync(queue, { recursive: true });
    const prompt = Buffer.from(pwn(ran)).toString('base64');
    writeFileSync(join(queue, '00000000000000000001-deadbeef.json'), JSON.stringify({ queuedAt: new Date().toISOString(), any: true, prompt }));
    const clone = cloneWithRegistry(b, origin);
    const registry = join(clone, '.subagents');

    const listed = assertOk(await b.runAsync('status', ['--announce'], at(clone)));
    assert.ok(listed.untrusted, 'the listing says the registry is not trusted');
    assert.equal(listed.agents[0].run, 1);
    assert.equal(listed.agents[0].queuedPrompts.length, 1, 'the queued prompt is shown, not started');
    assert.equal(existsSync(join(registry, 'agents', 'q', '2')), false, 'a verb that only noticed started the cloned follow-up');

    // Adopting it is naming it: then the prompt queued --after-any is due, and started once.
    assertOk(await b.runAsync('status', ['--announce', '--registry', registry], at(clone)));
    await until('the adopted registry ran its follow-up', () => existsSync(ran), LONG);
    assert.equal(readFileSync(ran, 'utf8'), '0 q\n');
  });

  test('hooks another user planted in a loosely-moded registry never run, also after the registry is made private; a start into it is refused', async (t) => {
    const why = noOtherUsers();
    if (why) return skipUnlessCi(t, why);
    const b = testBox(t, 'trust-planted');
    chmodSync(b.dir, 0o755); // others may pass through, as through a home or a project directory
    const own = join(b.dir, 'own-hook');
    const planted = join(b.dir, 'planted');
    mkdirSync(planted, { mode: 0o777 });
    chmodSync(planted, 0o777);
    const g = join(b.dir, 'gate');
    const run = assertOk(b.run('start-subagent', shellArgs('a', gate(g), ['--on-end', `echo own >> '${own}'`])));
    // The owner loosens the registry (by hand, or an old umask); another user plants a hook.
    chmodSync(b.registry, 0o777);
    shAs(
      ATTACKER,
      `mkdir '${b.registry}/hooks' && printf '#!/bin/sh\\necho "$(id -u)" >> ${planted}/ran\\n' > '${b.registry}/hooks/on-end' && chmod 755 '${b.registry}/hooks/on-end'`,
    );
    assert.equal(lstatSync(join(b.registry, 'hooks', 'on-end')).uid, ATTACKER);
    // The owner makes the registry private again: the planted hooks/ is still there.
    chmodSync(b.registry, 0o700);
    open(g);
    await untilGone(run.pid, 'the supervisor ended');
    await until("the run's own hook ran", () => existsSync(own), LONG);
    const log = readFileSync(join(runDirPath(b.registry, 'a'), 'supervisor.log'), 'utf8');
    assert.match(log, new RegExp(`hooks/on-end was not run: .*hooks belongs to uid ${ATTACKER}`));
    assert.equal(existsSync(join(planted, 'ran')), false, "another user's hook ran as us");
    // A start into it is refused and writes nothing; the planted hook never runs.
    const e = assertError(b.run('start-subagent', shellArgs('b', 'true')), 'E_REGISTRY_UNSAFE');
    assert.ok(
      e.details.problems.some((p: string) => p.includes(`hooks belongs to uid ${ATTACKER}`)),
      JSON.stringify(e.details),
    );
    assert.equal(existsSync(runDirPath(b.registry, 'b')), false);
    // Loosely moded by hand again: a registry the suite made is made private at the next start, and still refused.
    chmodSync(b.registry, 0o777);
    assertError(b.run('start-subagent', shellArgs('c', 'true')), 'E_REGISTRY_UNSAFE');
    assert.equal(modeOf(b.registry), 0o700);
    assert.equal(existsSync(join(planted, 'ran')), false);
  });

  test("walking up passes over another user's .subagents (no denial of service) and a symlink another user planted (never followed, nothing chmodded)", async (t) => {
    const why = noOtherUsers();
    if (why) return skipUnlessCi(t, why);
    const b = testBox(t, 'trust-ancestor');
    chmodSync(b.dir, 0o755);
    const shared = join(b.dir, 'shared');
    mkdirSync(shared);
    chmodSync(shared, 0o1777);
    shAs(ATTACKER, `mkdir '${shared}/.subagents' && mkdir '${shared}/links' && chmod 1777 '${shared}/links'`);
    const proj = join(shared, 'me', 'proj');
    mkdirSync(proj, { recursive: true });
    const started = assertOk(await b.runAsync('start-subagent', shellArgs('x', 'true'), at(proj)));
    assert.equal(started.registry, join(proj, '.subagents'));
    assert.equal(assertOk(await b.runAsync('status', [], at(proj))).registry, join(proj, '.subagents'));

    // A symlink another user plants where discovery looks, into a directory of ours.
    const mine = join(b.dir, 'mine');
    mkdirSync(mine, { mode: 0o755 });
    chmodSync(mine, 0o755);
    writeFileSync(join(mine, 'notes'), 'mine\n');
    const links = join(shared, 'links');
    shAs(ATTACKER, `ln -s '${mine}' '${links}/.subagents'`);
    const deep = join(links, 'me', 'proj');
    mkdirSync(deep, { recursive: true });
    const s = assertOk(await b.runAsync('start-subagent', shellArgs('y', 'true'), at(deep)));
    assert.equal(s.registry, join(deep, '.subagents'));
    assert.equal(modeOf(mine), 0o755, 'our directory was chmodded');
    assert.deepEqual(readdirSync(mine), ['notes'], 'our directory was written into');
  });

  test('walking up, as a user who is not root, stops at the home directory and before a ceiling directory, and passes over the .subagents of another user', async (t) => {
    const why = noOtherUsers();
    if (why) return skipUnlessCi(t, why);
    const b = testBox(t, 'trust-ceiling');
    chmodSync(b.dir, 0o755);
    const top = join(b.dir, 'top');
    mkdirSync(top);
    execFileSync('chown', [`${VICTIM}:${VICTIM}`, top]);
    // The victim's own registry above its home, and a ceiling.
    shAs(VICTIM, `mkdir -p '${top}/.subagents' '${top}/home/proj' '${top}/ceil/.subagents' '${top}/ceil/d/e'`);
    const home = join(top, 'home');
    const env = { ...b.env, ...FOUND, HOME: home, XDG_CACHE_HOME: join(home, '.cache') };
    const status = (cwd: string, more: NodeJS.ProcessEnv = {}) => {
      const r = runAs(VICTIM, join(BIN, 'status'), [], { cwd, env: { ...env, ...more } });
      return JSON.parse(r.stdout);
    };
    assert.equal(status(join(home, 'proj')).registry, join(home, 'proj', '.subagents'), 'not above the home directory');
    assert.equal(status(join(top, 'ceil', 'd', 'e')).registry, join(top, 'ceil', '.subagents'), 'found without a ceiling');
    assert.equal(
      status(join(top, 'ceil', 'd', 'e'), { SUBAGENT_CEILING_DIRECTORIES: `/nonexistent:${join(top, 'ceil')}` }).registry,
      join(top, 'ceil', 'd', 'e', '.subagents'),
      'not in the ceiling directory',
    );
    // Another user's .subagents between: passed over, to the victim's own above it.
    execFileSync('mkdir', [join(top, 'ceil', 'd', '.subagents')]);
    execFileSync('chown', [`${ATTACKER}:${ATTACKER}`, join(top, 'ceil', 'd', '.subagents')]);
    assert.equal(status(join(top, 'ceil', 'd', 'e')).registry, join(top, 'ceil', '.subagents'));
    const started = JSON.parse(
      runAs(VICTIM, join(BIN, 'start-subagent'), shellArgs('v', 'true'), {
        cwd: join(top, 'ceil', 'd', 'e'),
        env: { ...env, SUBAGENT_CEILING_DIRECTORIES: join(top, 'ceil') },
      }).stdout,
    );
    assert.equal(started.ok, true, JSON.stringify(started));
    assert.equal(started.registry, join(top, 'ceil', 'd', 'e', '.subagents'));
    await untilGone(started.pid, 'the supervisor ended');
    assert.equal(lstatSync(started.registry).uid, VICTIM);
  });
});

describe('walking up stops at a filesystem boundary', () => {
  test('a .subagents above a mount point is not looked at from below it (as git without GIT_DISCOVERY_ACROSS_FILESYSTEM)', (t) => {
    const b = testBox(t, 'trust-fs');
    const top = join(b.dir, 'fs');
    const mnt = join(top, 'mnt');
    mkdirSync(join(top, '.subagents'), { recursive: true });
    mkdirSync(mnt);
    const env = { ...b.env, ...FOUND, HOME: join(b.dir, 'home') };
    // A mount of its own, seen only by the verb (a private mount namespace): a tmpfs on fs/mnt.
    const inside = (cwd: string) =>
      spawnSync('unshare', ['-m', 'sh', '-c', `mount -t tmpfs none '${mnt}' && mkdir -p '${cwd}' && cd '${cwd}' && exec '${join(BIN, 'status')}'`], {
        env,
        encoding: 'utf8',
        timeout: 60_000,
      });
    const probe = inside(join(mnt, 'proj'));
    if (probe.status !== 0 || !probe.stdout.startsWith('{')) return t.skip(`a private mount namespace cannot be had here: ${probe.stderr.trim()}`);
    assert.equal(JSON.parse(probe.stdout).registry, join(mnt, 'proj', '.subagents'));
    // The same walk without the mount finds the registry above.
    assert.equal(assertOk(b.run('status', [], { cwd: mnt, env })).registry, join(top, '.subagents'));
  });
});

describe('the compile cache: private to its user', () => {
  test('a compile cache another user planted in the shared temp directory is never read nor written; the verbs keep theirs in ~/.cache/subagents, 0700', (t) => {
    const why = noOtherUsers();
    if (why) return skipUnlessCi(t, why);
    const b = testBox(t, 'trust-cache');
    chmodSync(b.dir, 0o755);
    mkdirSync(b.registry, { mode: 0o700 });
    const shared = join(b.dir, 'tmp');
    mkdirSync(shared);
    chmodSync(shared, 0o1777);
    // The attacker's cache where Node looks by default (os.tmpdir()/node-compile-cache), and where ours would be under a shared XDG_CACHE_HOME.
    shAs(ATTACKER, `mkdir -m 777 '${shared}/node-compile-cache' '${shared}/subagents'`);
    const env = { ...b.env, TMPDIR: shared, XDG_CACHE_HOME: '' };
    for (let i = 0; i < 2; i++) assertOk(b.run('status', [], { env }));
    assert.deepEqual(readdirSync(join(shared, 'node-compile-cache')), [], 'the verb used the shared temp directory');
    const ours = join(b.dir, '.cache', 'subagents');
    assert.equal(modeOf(ours), 0o700);
    assert.ok(readdirSync(ours).length > 0, 'the private cache is used');
    // A shared XDG_CACHE_HOME whose subagents/ another user made: not used.
    const debug = b.run('status', [], { env: { ...env, XDG_CACHE_HOME: shared, NODE_DEBUG_NATIVE: 'COMPILE_CACHE' } });
    assertOk(debug);
    assert.deepEqual(readdirSync(join(shared, 'subagents')), []);
    assert.doesNotMatch(debug.stderr, new RegExp(shared.replace(/[/.]/g, '\\$&')));
  });
});
