/**
 * Issue 4, fan-out at scale, through the real executables: `--worktree` runs (docs/worktrees.md) — a
 * run's own git worktree and branch, --base, resume in the same worktree, racing starts of one name,
 * the names git refuses, nothing left behind by a refused start, and the documented clean-up.
 *
 * The tests share one repository and run in order (the first makes it).
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, realpathSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { assertError } from '../../support/run.js';
import { LONG, until, WAIT_SEC } from '../../support/wait.js';
import { makeBox } from '../../support/box.js';
import { expectError, gate, open, resultText, shellArgs, startShell, statusOf, waitTerminal } from '../../support/shell.js';

const bTree = makeBox('fan-wt');

function git(cwd: string, args: string[]): string {
  const r = spawnSync('git', ['-c', 'user.email=t@example.com', '-c', 'user.name=Fanout Test', '-c', 'init.defaultBranch=main', ...args], {
    cwd,
    encoding: 'utf8',
  });
  assert.equal(r.status, 0, `git ${args.join(' ')} in ${cwd}: ${r.stderr}`);
  return r.stdout.trim();
}

describe('worktrees', () => {
  const b = bTree;
  const repo = join(b.dir, 'repo');
  const commit = (msg: string) => `git -c user.email=agent@example.com -c user.name=Agent commit -q -m '${msg}'`;
  let c1 = '';
  let c2 = '';

  test('a --worktree run commits on its own branch; the main checkout stays untouched; resume reuses it', () => {
    mkdirSync(join(repo, 'src'), { recursive: true });
    git(repo, ['init', '-q']);
    writeFileSync(join(repo, 'README'), 'one\n');
    git(repo, ['add', '.']);
    git(repo, ['commit', '-q', '-m', 'c1']);
    c1 = git(repo, ['rev-parse', 'HEAD']);
    git(repo, ['tag', 'v1']);
    writeFileSync(join(repo, 'src', 'two.txt'), 'two\n');
    git(repo, ['add', '.']);
    git(repo, ['commit', '-q', '-m', 'c2']);
    c2 = git(repo, ['rev-parse', 'HEAD']);
    const branchBefore = git(repo, ['rev-parse', '--abbrev-ref', 'HEAD']);

    const s = startShell(b, 'wt/one', `pwd; echo agent > agent.txt; git add agent.txt && ${commit('agent commit')} && git rev-parse HEAD`, [
      '--worktree',
      '--cwd',
      join(repo, 'src'),
    ]);
    assert.equal(s.ok, true);
    const a = waitTerminal(b, ['wt/one'])['wt/one'];
    assert.equal(a.outcome, 'succeeded', a.error);
    const wtPath = join(b.registry, 'worktrees', 'wt+one');
    assert.deepEqual(a.worktree, { path: realpathSync(wtPath), branch: 'subagents/wt/one', base: c2, repo: realpathSync(repo) });
    assert.equal(a.cwd, join(realpathSync(wtPath), 'src'), 'the same sub-directory of the worktree');
    const [pwd, agentCommit] = resultText(b, 'wt/one').trim().split('\n');
    assert.equal(pwd, join(realpathSync(wtPath), 'src'));
    assert.match(agentCommit!, /^[0-9a-f]{40}$/);

    // The main checkout: clean, same HEAD and branch; the branch has the agent's commit on top of c2.
    assert.equal(git(repo, ['status', '--porcelain']), '');
    assert.equal(git(repo, ['rev-parse', 'HEAD']), c2);
    assert.equal(git(repo, ['rev-parse', '--abbrev-ref', 'HEAD']), branchBefore);
    assert.equal(existsSync(join(repo, 'src', 'agent.txt')), false);
    assert.equal(git(repo, ['rev-parse', 'subagents/wt/one']), agentCommit);
    assert.equal(git(repo, ['log', '-1', '--format=%s', 'subagents/wt/one']), 'agent commit');
    assert.equal(git(repo, ['rev-parse', 'subagents/wt/one~1']), c2);
    assert.equal(git(repo, ['show', 'subagents/wt/one:src/agent.txt']), 'agent');
    assert.ok(git(repo, ['worktree', 'list', '--porcelain']).includes(`worktree ${realpathSync(wtPath)}`));

    // Resume runs in the same worktree, on the same branch.
    const r = b.run('resume-subagent', ['--name', 'wt/one', '--prompt', 'pwd; git rev-parse --abbrev-ref HEAD; cat agent.txt']);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    const a2 = waitTerminal(b, ['wt/one'])['wt/one'];
    assert.equal(a2.run, 2);
    assert.deepEqual(a2.worktree, a.worktree);
    assert.equal(resultText(b, 'wt/one'), `${join(realpathSync(wtPath), 'src')}\nsubagents/wt/one\nagent\n`);
    assert.equal(git(repo, ['status', '--porcelain']), '');
  });

  test('--base REF; a registry inside the checkout stays out of git status', () => {
    const s = startShell(b, 'wt/based', 'git rev-parse HEAD; ls', ['--worktree', '--base', 'v1', '--cwd', repo]);
    assert.equal(s.ok, true);
    const a = waitTerminal(b, ['wt/based'])['wt/based'];
    assert.equal(a.outcome, 'succeeded', a.error);
    assert.equal(a.worktree.base, c1);
    assert.equal(a.worktree.branch, 'subagents/wt/based');
    assert.equal(resultText(b, 'wt/based'), `${c1}\nREADME\n`, 'the worktree is at v1 (no src/)');

    // A batch line with "worktree" and "base".
    const bt = b.run('start-subagent', ['--batch', '-', '--cli', 'shell'], {
      input:
        JSON.stringify({ name: 'wt/batched', prompt: 'git rev-parse --abbrev-ref HEAD; git rev-parse HEAD', worktree: true, base: 'v1', cwd: repo }) + '\n',
    });
    assert.equal(bt.code, 0, bt.stdout + bt.stderr);
    const ab = waitTerminal(b, ['wt/batched'])['wt/batched'];
    assert.equal(ab.worktree.branch, 'subagents/wt/batched');
    assert.equal(resultText(b, 'wt/batched'), `subagents/wt/batched\n${c1}\n`);

    const inner = join(repo, '.subagents');
    const r = b.run('start-subagent', [...shellArgs('wt/inside', `echo x > x.txt; git add x.txt && ${commit('inside')}`), '--worktree', '--registry', inner], {
      cwd: repo,
    });
    assert.equal(r.code, 0, r.stdout + r.stderr);
    const w = b.run('status', ['--wait-terminal', '--name', 'wt/inside', '--registry', inner, '--timeout', WAIT_SEC]);
    assert.equal(w.code, 0, w.stdout);
    assert.equal(w.json.agents[0].outcome, 'succeeded', w.json.agents[0].error);
    assert.equal(git(repo, ['status', '--porcelain', '--untracked-files=all']), '', 'the registry inside the checkout is ignored');
    assert.equal(git(repo, ['rev-parse', 'HEAD']), c2);
    assert.equal(git(repo, ['log', '-1', '--format=%s', 'subagents/wt/inside']), 'inside');
  });

  test("two starts of one --worktree name racing: one wins, the other gets E_NAME_EXISTS, the winner's worktree is intact", async () => {
    assert.ok(c2, 'the repository exists (first test)');
    // A git on PATH that holds the loser inside `git worktree add` (as a slow machine would) until the
    // winner has made the same branch and worktree: the loser passed every existence check before.
    const realGit = spawnSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).stdout.trim();
    const fakeBin = join(b.dir, 'slow-git');
    mkdirSync(fakeBin, { recursive: true });
    const waiting = join(b.dir, 'git-waiting');
    const g = join(b.dir, 'gate-git');
    writeFileSync(join(fakeBin, 'git'), `#!/bin/sh\ncase " $* " in *" worktree add "*) : > '${waiting}'; ${gate(g)};; esac\nexec '${realGit}' "$@"\n`, {
      mode: 0o755,
    });
    const loser = b.spawn('start-subagent', [...shellArgs('wt/dup', 'echo loser'), '--worktree', '--cwd', repo], {
      env: { PATH: `${fakeBin}:${process.env.PATH}` },
    });
    try {
      await until('the loser is inside git worktree add', () => existsSync(waiting) || loser.settled(), LONG);
      assert.equal(loser.settled(), false, 'the loser is held in git');
      const w = startShell(b, 'wt/dup', 'echo winner', ['--worktree', '--cwd', repo]);
      assert.equal(w.name, 'wt/dup');
      open(g);
      const r = await loser.done;
      const winner = waitTerminal(b, ['wt/dup'])['wt/dup'];
      assert.equal(winner.outcome, 'succeeded');
      assert.equal(resultText(b, 'wt/dup'), 'winner\n');
      assert.equal(git(repo, ['rev-parse', 'subagents/wt/dup']), c2, "the winner's branch is intact");
      assert.ok(existsSync(join(winner.worktree.path, 'README')), "the winner's worktree is intact");
      assertError(r, 'E_NAME_EXISTS');
    } finally {
      open(g);
      if (!loser.settled()) loser.child.kill('SIGKILL');
    }
  });

  test('names git refuses are E_NAME_INVALID rule git-branch; an existing branch is E_NAME_EXISTS; no repo is E_ARG_INVALID — nothing created', () => {
    assert.ok(c2, 'the repository exists (previous test)');
    const branches = () => git(repo, ['branch', '--list']);
    const before = branches();
    for (const name of ['wt/.hidden', 'wt/a..b', 'wt/x.lock']) {
      const j = expectError(b, 'start-subagent', [...shellArgs(name, 'echo no'), '--worktree', '--cwd', repo], 'E_NAME_INVALID');
      assert.equal(j.details.rule, 'git-branch', name);
      assert.equal(j.details.registry, b.registry);
    }
    assert.equal(branches(), before, 'no branch was made');
    git(repo, ['branch', 'subagents/wt/taken']);
    const taken = branches();
    expectError(b, 'start-subagent', [...shellArgs('wt/taken', 'echo no'), '--worktree', '--cwd', repo], 'E_NAME_EXISTS');
    assert.equal(branches(), taken);
    const plain = join(b.dir, 'plain');
    mkdirSync(plain, { recursive: true });
    expectError(b, 'start-subagent', [...shellArgs('wt/plain', 'echo no'), '--worktree', '--cwd', plain], 'E_ARG_INVALID');
    expectError(b, 'start-subagent', [...shellArgs('wt/nobase', 'echo no'), '--base', 'v1', '--cwd', repo], 'E_ARG_INVALID');
    assert.equal(
      b
        .run('status', ['--prefix', 'wt'])
        .json.agents.map((a: any) => a.name)
        .join(' '),
      'wt/based wt/batched wt/dup wt/one',
      'nothing else was recorded',
    );
  });

  test('a start refused after its checks (a bad SUBAGENT_MAX_CONCURRENT, an unwritable queue limit) leaves no worktree or branch behind', () => {
    assert.ok(c2, 'the repository exists (first test)');
    const state = () => [git(repo, ['branch', '--list']), git(repo, ['worktree', 'list', '--porcelain'])];
    const before = state();
    const bad = expectError(b, 'start-subagent', [...shellArgs('wtleak/env', 'echo no'), '--worktree', '--cwd', repo], 'E_ARG_INVALID', {
      env: { SUBAGENT_MAX_CONCURRENT: 'many' },
    });
    assert.match(bad.error, /SUBAGENT_MAX_CONCURRENT/);
    assert.deepEqual(state(), before, 'no branch, no worktree');
    assert.equal(existsSync(join(b.registry, 'worktrees', 'wtleak+env')), false);

    // The limit cannot be written (queue/ of this registry is a file): refused before the worktree.
    const reg = join(b.dir, 'reg-noqueue');
    mkdirSync(reg, { recursive: true });
    writeFileSync(join(reg, 'queue'), 'not a directory\n');
    expectError(
      b,
      'start-subagent',
      [...shellArgs('wtleak/limit', 'echo no'), '--worktree', '--cwd', repo, '--max-concurrent', '2', '--registry', reg],
      'E_REGISTRY_UNWRITABLE',
    );
    assert.deepEqual(state(), before, 'no branch, no worktree');
    assert.equal(existsSync(join(reg, 'worktrees', 'wtleak+limit')), false);

    // Nothing was left to block the names: once the cause is gone both start.
    startShell(b, 'wtleak/env', 'git rev-parse --abbrev-ref HEAD', ['--worktree', '--cwd', repo]);
    assert.equal(waitTerminal(b, ['wtleak/env'])['wtleak/env'].outcome, 'succeeded');
    assert.equal(resultText(b, 'wtleak/env'), 'subagents/wtleak/env\n');
    unlinkSync(join(reg, 'queue'));
    startShell(b, 'wtleak/limit', 'git rev-parse --abbrev-ref HEAD', ['--worktree', '--cwd', repo, '--max-concurrent', '2', '--registry', reg]);
    const w = b.run('status', ['--wait-terminal', '--name', 'wtleak/limit', '--registry', reg, '--timeout', WAIT_SEC]);
    assert.equal(w.code, 0, w.stdout);
    assert.equal(w.json.agents[0].outcome, 'succeeded', w.json.agents[0].error);
    assert.equal(w.json.queue.limit, 2);
  });

  test('clean-up as documented: git refuses a dirty run worktree; status and result outlive the worktree; resume without it is E_CWD_INVALID with the way back', () => {
    assert.ok(c2, 'the repository exists (first test)');
    startShell(b, 'wtclean/dirty', 'echo changed >> README; echo new > untracked.txt; echo dirty-done', ['--worktree', '--cwd', repo]);
    startShell(b, 'wtclean/done', `echo work > work.txt; git add work.txt && ${commit('work')} && echo clean-done`, ['--worktree', '--cwd', repo]);
    const w = waitTerminal(b, ['wtclean/dirty', 'wtclean/done']);
    assert.equal(w['wtclean/dirty'].outcome, 'succeeded', w['wtclean/dirty'].error);
    assert.equal(w['wtclean/done'].outcome, 'succeeded', w['wtclean/done'].error);

    // The documented removal refuses a worktree with uncommitted or untracked changes, and keeps them.
    const dirty = w['wtclean/dirty'].worktree.path;
    const refused = spawnSync('git', ['worktree', 'remove', dirty], { cwd: repo, encoding: 'utf8' });
    assert.notEqual(refused.status, 0, 'git worktree remove must refuse a dirty worktree');
    assert.match(refused.stderr, /modified or untracked/);
    assert.equal(readFileSync(join(dirty, 'untracked.txt'), 'utf8'), 'new\n');
    assert.equal(readFileSync(join(dirty, 'README'), 'utf8'), 'one\nchanged\n');

    // A clean one goes; its branch keeps the work, and `git branch -d` refuses while it is unmerged.
    const done = w['wtclean/done'].worktree.path;
    git(repo, ['worktree', 'remove', done]);
    assert.equal(existsSync(done), false);
    const unmerged = spawnSync('git', ['branch', '-d', 'subagents/wtclean/done'], { cwd: repo, encoding: 'utf8' });
    assert.notEqual(unmerged.status, 0, 'git branch -d must refuse an unmerged run branch');
    assert.equal(git(repo, ['log', '-1', '--format=%s', 'subagents/wtclean/done']), 'work');

    // The record does not depend on the worktree.
    const st = statusOf(b, 'wtclean/done');
    assert.deepEqual([st.status, st.outcome, st.worktree.path], ['done', 'succeeded', done]);
    assert.equal(resultText(b, 'wtclean/done'), 'clean-done\n');

    // Resume refuses before publishing a run, and says how to bring the worktree back.
    const e = expectError(b, 'resume-subagent', ['--name', 'wtclean/done', '--prompt', 'cat work.txt'], 'E_CWD_INVALID');
    assert.deepEqual([e.details.cwd, e.details.worktree, e.details.branch], [st.cwd, done, 'subagents/wtclean/done']);
    assert.ok(e.details.hint.includes(e.details.restore), e.details.hint);
    assert.equal(statusOf(b, 'wtclean/done').run, 1, 'no run was published');
    const restored = spawnSync('sh', ['-c', e.details.restore], { encoding: 'utf8' });
    assert.equal(restored.status, 0, `${e.details.restore}: ${restored.stderr}`);
    const r = b.run('resume-subagent', ['--name', 'wtclean/done', '--prompt', 'cat work.txt; git rev-parse --abbrev-ref HEAD']);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.equal(waitTerminal(b, ['wtclean/done'])['wtclean/done'].run, 2);
    assert.equal(resultText(b, 'wtclean/done'), 'work\nsubagents/wtclean/done\n');
  });
});
