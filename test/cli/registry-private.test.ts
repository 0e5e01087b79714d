/**
 * The registry is private to its owner (lib/registry/private.ts): whatever the umask, every directory
 * it holds is 0700 and every file 0600; and a registry that belongs to another user is refused with
 * E_REGISTRY_FOREIGN by every verb, before anything is read or written.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, chownSync, existsSync, lstatSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { testBox, type Box } from '../support/box.js';
import { listTree } from '../support/registry.js';
import { skipUnlessCi } from '../support/machine.js';
import { assertOk } from '../support/run.js';
import { expectError, gate, open, startShell, untilStatus, waitTerminal } from '../support/shell.js';
import { LONG, until } from '../support/wait.js';
import { pidAlive } from '../support/procs.js';

/** Every path of the registry with its mode, type and owner. */
function modes(registry: string): Array<{ path: string; mode: number; dir: boolean; uid: number; mtimeMs: number }> {
  return ['', ...listTree(registry)].map((p) => {
    const st = lstatSync(join(registry, p));
    return { path: p || '.', mode: st.mode & 0o7777, dir: st.isDirectory(), uid: st.uid, mtimeMs: st.mtimeMs };
  });
}

/** Runs `fn` with this process's umask (and so its children's) set to `mask`. */
async function withUmask<T>(mask: number, fn: () => Promise<T>): Promise<T> {
  const old = process.umask(mask);
  try {
    return await fn();
  } finally {
    process.umask(old);
  }
}

test('under umask 000 every directory of the registry is 0700 and every file 0600', async (t) => {
  const b = testBox(t, 'private');
  await withUmask(0o000, async () => {
    const go = join(b.dir, 'go');
    // A limit makes the queue's files; a resume, a cancel and a cached listing make the rest.
    startShell(b, 'p/one', 'echo one', ['--max-concurrent', '4']);
    waitTerminal(b, ['p/one']);
    assertOk(b.run('resume-subagent', ['--name', 'p/one', '--prompt', 'echo two']));
    waitTerminal(b, ['p/one']);
    startShell(b, 'p/held', gate(go));
    await untilStatus(b, 'p/held', (a) => a.status === 'running', 'running');
    assertOk(b.run('cancel', ['--name', 'p/held']));
    open(go);
    // The status cache keeps only records settled for 2 s: list until it is written.
    await until('the status cache', () => assertOk(b.run('status', [])) && existsSync(join(b.registry, 'status-cache')), LONG, 500);
  });
  const all = modes(b.registry);
  for (const want of [
    '.',
    'status-cache',
    '.gitignore',
    'queue/limit',
    'agents/p+one/2/record.json',
    'agents/p+one/1/supervisor.log',
    'agents/p+one/1/events.log',
  ])
    assert.ok(
      all.some((m) => m.path === want),
      `${want} in ${all.map((m) => m.path).join(' ')}`,
    );
  for (const m of all) assert.equal(m.mode, m.dir ? 0o700 : 0o600, `${m.path}: ${m.mode.toString(8)}`);
});

test('a registry the suite made, made world-readable since, becomes private at its next start; a directory it did not make is never chmodded', (t) => {
  const b = testBox(t, 'private-old');
  startShell(b, 'first', 'echo first');
  waitTerminal(b, ['first']);
  chmodSync(b.registry, 0o755);
  startShell(b, 'second', 'echo second');
  assert.equal(statSync(b.registry).mode & 0o777, 0o700);
  waitTerminal(b, ['second']);
  // A directory of yours named as the registry: used as it is (its mode is yours to choose).
  const mine = join(b.dir, 'mine');
  mkdirSync(mine, { mode: 0o755 });
  chmodSync(mine, 0o755);
  const s = startShell(b, 'third', 'echo third', ['--registry', mine]);
  assert.equal(s.registry, mine);
  waitTerminal(b, ['third'], { env: { SUBAGENT_DIR: mine } });
  assert.equal(statSync(mine).mode & 0o777, 0o755, 'a directory the suite did not create was chmodded');
});

test('a registry owned by another user is refused by every verb (E_REGISTRY_FOREIGN) and never written into', async (t) => {
  if (process.getuid?.() !== 0) return skipUnlessCi(t, 'making a registry of another user needs root (chown)');
  const b = testBox(t, 'foreign');
  startShell(b, 'theirs', 'echo theirs');
  const done = waitTerminal(b, ['theirs']).theirs;
  // The supervisor may still hold the record's lock a moment after the end became visible: the snapshot
  // below is taken once it has left, so that every change after it is a verb's.
  await until('the supervisor of theirs has left', () => !pidAlive(done.pid), LONG);
  const batch = join(b.dir, 'batch.jsonl');
  writeFileSync(batch, `${JSON.stringify({ name: 'mine', cli: 'shell', prompt: 'echo mine' })}\n`);
  const nobody = 65534;
  for (const m of modes(b.registry)) chownSync(join(b.registry, m.path), nobody, nobody);
  const before = modes(b.registry);
  const calls: Array<[Parameters<Box['run']>[0], string[]]> = [
    ['start-subagent', ['--name', 'mine', '--cli', 'shell', '--prompt', 'echo mine']],
    ['start-subagent', ['--batch', batch]],
    ['resume-subagent', ['--name', 'theirs', '--prompt', 'echo again']],
    ['status', []],
    ['status', ['--name', 'theirs']],
    ['result', ['--name', 'theirs']],
    ['search', ['--name', 'theirs', '--pattern', 'theirs']],
    ['cancel', ['--name', 'theirs']],
  ];
  for (const [verb, args] of calls) {
    const e = expectError(b, verb, args, 'E_REGISTRY_FOREIGN');
    assert.equal(e.details.owner, nobody, `${verb}: ${JSON.stringify(e)}`);
    assert.equal(e.details.path, b.registry);
  }
  assert.deepEqual(modes(b.registry), before);
});
