// The supervisor process itself: what it runs as (the lean bundle and flags of docs/design.md), that it
// says nothing on an ordinary run, that progress reaches the record while the agent runs, and that an
// agent that cannot be executed ends the run as spawn-failed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { NODE_FLAGS } from '../../lib/supervisor/spawn.js';
import { ROOT } from '../support/paths.js';
import { runDirOf } from '../support/registry.js';
import { makeBox } from '../support/box.js';
import { gate, open, startShell, untilStatus, waitTerminal } from '../support/shell.js';

const b = makeBox('supervisor');

test('the supervisor runs the CommonJS bundle with its flags, records progress while the agent runs, and leaves supervisor.log empty', async () => {
  const go = join(b.dir, 'go');
  startShell(b, 'lean', `echo first line; ${gate(go)}; echo done`);
  const running = await untilStatus(b, 'lean', (a) => a.status === 'running' && a.lastActivityAt !== null, 'running, with progress from its first line');
  const dir = runDirOf(b.registry, 'lean');
  const argv = readFileSync(`/proc/${running.pid}/cmdline`, 'latin1').split('\0').slice(0, -1);
  assert.deepEqual(argv.slice(1), [...NODE_FLAGS, join(ROOT, 'dist', 'bin', 'supervisor.cjs'), b.registry, dir]);
  open(go);
  const a = waitTerminal(b, ['lean']).lean;
  assert.equal(a.outcome, 'succeeded');
  assert.equal(readFileSync(join(dir, 'supervisor.log'), 'utf8'), '', 'no warnings, no noise');
});

test('an agent CLI that cannot be executed ends the run failed, as spawn-failed, with the reason', () => {
  const bin = join(b.dir, 'broken-bin');
  mkdirSync(bin);
  // On PATH and executable, so start-subagent accepts it; exec fails (the interpreter does not exist).
  writeFileSync(join(bin, 'codex'), '#!/nonexistent/interpreter\n');
  chmodSync(join(bin, 'codex'), 0o755);
  const env = { ...b.env, PATH: `${bin}:${b.env.PATH}` };
  const r = b.run('start-subagent', ['--name', 'broken', '--cli', 'codex', '--prompt', 'hi'], { env });
  assert.equal(r.json?.ok, true, r.stdout + r.stderr);
  const a = waitTerminal(b, ['broken'], { env }).broken;
  assert.equal(a.outcome, 'failed');
  assert.equal(a.endReason, 'spawn-failed');
  assert.equal(a.error, 'cannot start codex: spawn codex ENOENT');
  assert.equal(readFileSync(join(runDirOf(b.registry, 'broken'), 'supervisor.log'), 'utf8'), '');
});

test('under --pending-deprecation neither start-subagent, the supervisor nor a listing prints a warning (no deprecated API is used)', () => {
  const env = { ...b.env, NODE_OPTIONS: '--pending-deprecation' };
  const r = b.run('start-subagent', ['--name', 'strict', '--cli', 'shell', '--prompt', 'echo strict'], { env });
  assert.equal(r.json?.ok, true, r.stdout + r.stderr);
  assert.equal(r.stderr, '', "nothing on the caller's stderr");
  assert.equal(waitTerminal(b, ['strict']).strict.outcome, 'succeeded');
  assert.equal(readFileSync(join(runDirOf(b.registry, 'strict'), 'supervisor.log'), 'utf8'), '', 'nothing in supervisor.log');
  const s = b.run('status', [], { env }); // the listing: the status cache's CRC-32 and stat keys
  assert.equal(s.stderr, '');
});
