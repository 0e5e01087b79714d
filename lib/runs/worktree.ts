import { existsSync, lstatSync, mkdirSync, realpathSync } from 'node:fs';
import { join, relative } from 'node:path';
import { SubagentError, unwritable } from '../base/errors.js';
import { encodeName } from '../registry/names.js';
import { childProcess } from '../proc/child-process.js';
import { PRIVATE_DIR } from '../registry/private.js';

/** A run's own git worktree: `<registry>/worktrees/<name>` on branch `subagents/<name>`. */
export interface Worktree {
  path: string;
  branch: string;
  base: string;
  /** The main checkout it was made from. */
  repo: string;
}

function git(cwd: string, args: string[]): { ok: boolean; out: string; err: string } {
  const r = childProcess().spawnSync('git', ['-C', cwd, ...args], { encoding: 'utf8' });
  if (r.error) {
    throw new SubagentError('E_CMD_MISSING', 'git is not on PATH, and --worktree needs it', {
      program: 'git',
      hint: 'install git, or start without --worktree',
    });
  }
  return { ok: r.status === 0, out: r.stdout.trim(), err: r.stderr.trim() };
}

export function branchFor(name: string): string {
  return `subagents/${name}`;
}

/**
 * Adds a worktree on a new branch from `base` (default HEAD) of the repository holding `cwd`. Returns
 * it with the directory the agent should run in: the same sub-directory of the worktree as `cwd` is
 * of the repository.
 */
export function addWorktree(registry: string, name: string, cwd: string, base: string | undefined): { worktree: Worktree; cwd: string } {
  const top = git(cwd, ['rev-parse', '--show-toplevel']);
  if (!top.ok) {
    throw new SubagentError('E_ARG_INVALID', `--worktree needs a git repository, and ${cwd} is not in one`, {
      cwd,
      hint: 'run from (or give --cwd) a directory inside a git repository',
    });
  }
  const repo = realpathSync(top.out);
  const branch = branchFor(name);
  if (!git(repo, ['check-ref-format', '--branch', branch]).ok) {
    throw new SubagentError('E_NAME_INVALID', `"${name}" cannot be a git branch name (${branch})`, {
      name,
      rule: 'git-branch',
      hint: 'git refuses segments starting with "." or ending with ".lock", and ".." inside a segment',
    });
  }
  const ref = base ?? 'HEAD';
  const resolved = git(repo, ['rev-parse', '--verify', '--quiet', `${ref}^{commit}`]);
  if (!resolved.ok) {
    throw new SubagentError('E_ARG_INVALID', `--base ${ref} is not a commit of ${repo}`, {
      base: ref,
      hint: base ? 'give a branch, tag or commit that exists' : 'the repository has no commit yet: commit once, or give --base',
    });
  }
  if (git(repo, ['rev-parse', '--verify', '--quiet', `refs/heads/${branch}`]).ok) {
    throw new SubagentError('E_NAME_EXISTS', `the branch ${branch} already exists in ${repo}`, {
      name,
      branch,
      hint: `choose another name, or delete the branch: git branch -D ${branch}`,
    });
  }
  const inTheWay = branchInTheWay(repo, branch);
  if (inTheWay) {
    throw new SubagentError(
      'E_NAME_EXISTS',
      `the branch ${inTheWay} is in the way of ${branch} in ${repo}: git cannot hold a branch and another one under it (names "a" and "a/b" cannot both have worktrees)`,
      {
        name,
        branch,
        conflicting: inTheWay,
        hint: `choose a name that is neither above nor below an existing one, or delete the branch: git branch -D ${inTheWay}`,
      },
    );
  }
  const path = join(registry, 'worktrees', encodeName(name));
  try {
    mkdirSync(join(registry, 'worktrees'), { recursive: true, mode: PRIVATE_DIR });
  } catch (err) {
    throw unwritable(registry, err);
  }
  if (existsSync(path)) {
    throw new SubagentError('E_NAME_EXISTS', `the worktree directory ${path} already exists`, {
      name,
      path,
      hint: 'remove it (git worktree remove) or choose another name',
    });
  }
  const added = git(repo, ['worktree', 'add', '--quiet', '-b', branch, path, resolved.out]);
  if (!added.ok && (existsSync(path) || git(repo, ['rev-parse', '--verify', '--quiet', `refs/heads/${branch}`]).ok)) {
    // Another start of the same name got there between our checks and git's: it won the name.
    throw new SubagentError('E_NAME_EXISTS', `a run named "${name}" is being started by another command (its worktree or branch appeared first)`, {
      name,
      branch,
      hint: 'choose another name, or resume it with resume-subagent once it exists',
    });
  }
  if (!added.ok) {
    throw new SubagentError('E_ARG_INVALID', `git worktree add failed: ${added.err}`, { hint: "see git's message; the main checkout was not changed" });
  }
  const sub = relative(repo, realpathSync(cwd));
  const runCwd = join(realpathSync(path), sub);
  mkdirSync(runCwd, { recursive: true });
  return { worktree: { path: realpathSync(path), branch, base: resolved.out, repo }, cwd: runCwd };
}

/** Undoes a worktree we just made (the start failed after it): only a fresh, unchanged one. */
export function discardFreshWorktree(w: Worktree): void {
  git(w.repo, ['worktree', 'remove', w.path]);
  git(w.repo, ['branch', '-D', w.branch]);
}

/**
 * The command that puts a removed run worktree back on its own branch (what a resume needs). `prune`
 * first: it only forgets worktrees whose directories are gone, so one deleted with rm is accepted too.
 */
export function restoreWorktreeCommand(w: Worktree): string {
  const q = (s: string) => (/^[A-Za-z0-9_./+@:-]+$/.test(s) ? s : `'${s.replaceAll("'", "'\\''")}'`);
  return `git -C ${q(w.repo)} worktree prune && git -C ${q(w.repo)} worktree add ${q(w.path)} ${q(w.branch)}`;
}

/**
 * A branch that keeps git from creating `branch`: refs are paths, so `subagents/a` cannot exist next
 * to `subagents/a/b` — one above it (a prefix) or one below it. Null when there is none.
 */
function branchInTheWay(repo: string, branch: string): string | null {
  const parts = branch.split('/');
  for (let i = 1; i < parts.length; i++) {
    const above = parts.slice(0, i).join('/');
    if (git(repo, ['rev-parse', '--verify', '--quiet', `refs/heads/${above}`]).ok) return above;
  }
  const below = git(repo, ['for-each-ref', '--count=1', '--format=%(refname:short)', `refs/heads/${branch}/`]);
  return below.ok && below.out.trim() !== '' ? below.out.trim() : null;
}

/**
 * `subagent-prune --worktrees`: why a name's worktree may not go (null when it may): git sees modified
 * or untracked files in it, or it is not the worktree this registry made for the name
 * (`<registry>/worktrees/<name>`, never through a symlink). Asked before the name is removed, so that a
 * worktree with work in it keeps its name's latest run.
 */
export function worktreeKept(registry: string, name: string, w: Worktree): string | null {
  if (!existsSync(w.path)) return null;
  let own: string;
  try {
    const mine = join(registry, 'worktrees', encodeName(name));
    own = lstatSync(mine).isDirectory() ? realpathSync(mine) : '';
  } catch {
    own = '';
  }
  if (own !== w.path) return `${w.path} is not the worktree this registry made for "${name}"`;
  const st = git(w.path, ['status', '--porcelain']);
  if (!st.ok) return st.err || 'git status failed in it';
  return st.out === '' ? null : `it has modified or untracked files (git status: ${st.out.split('\n').slice(0, 3).join('; ')})`;
}

/**
 * Removes a name's worktree through git, and only when git agrees nothing is lost: `git worktree
 * remove` without `--force` refuses a worktree with changes, untracked files or a lock; its branch (and
 * so every commit on it) stays. Null when it is gone (or was already), else git's reason for keeping it.
 */
export function removeWorktree(w: Worktree): string | null {
  if (!existsSync(w.path)) return null;
  const removed = git(w.repo, ['worktree', 'remove', w.path]);
  return removed.ok ? null : removed.err || 'git worktree remove refused it';
}
