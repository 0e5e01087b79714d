// spawnUnwaited through the posix_spawn addon (lib/native/spawn.c): what the child inherits — exactly the
// given environment, stdio, cwd, a session of its own, default signal dispositions, no blocked signals,
// no other fd of ours — how a failed exec is reported, and the gate that holds a child until release().
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, readdirSync, readlinkSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { nativeAddon } from '../../lib/native/addon.js';
import { spawnUnwaited } from '../../lib/proc/unwaited-spawn.js';
import { ROOT, killPids, skipUnlessCi, until } from '../helpers.js';

const dir = realpathSync(mkdtempSync(join(tmpdir(), 'subagents-spawn-')));
const started: number[] = [];
after(() => {
  killPids(started);
  rmSync(dir, { recursive: true, force: true });
});

function statusField(pid: number, field: string): string {
  const line = readFileSync(`/proc/${pid}/status`, 'latin1').split('\n').find((l) => l.startsWith(`${field}:`));
  return line!.split(/\s+/)[1]!;
}
const argvOf = (pid: number) => readFileSync(`/proc/${pid}/cmdline`, 'latin1').split('\0').slice(0, -1);

test('the addon is built and loads (make build compiles it; CI has the compiler and the headers)', (t) => {
  if (!existsSync(join(ROOT, 'dist', 'bin', 'native.node'))) return skipUnlessCi(t, 'dist/bin/native.node was not built');
  assert.notEqual(nativeAddon(), null);
});

test('a child gets exactly what it is given, and nothing of this process: signals, fds, session, cwd, env', async (t) => {
  if (!nativeAddon()) return skipUnlessCi(t, 'the addon is not built');
  // This process (Node) ignores SIGPIPE; the child must not inherit that.
  assert.notEqual(BigInt('0x' + statusField(process.pid, 'SigIgn')) & (1n << 12n), 0n, 'Node ignores SIGPIPE here');
  const out = join(dir, 'out.log');
  const log = openSync(out, 'a');
  const leak = openSync(join(dir, 'not-for-the-child'), 'w'); // opened close-on-exec, as Node opens everything
  let pid: number;
  try {
    pid = spawnUnwaited('/bin/sh', ['-c', 'echo "cwd=$(pwd) only=$ONLY"; exec sleep 60'], { cwd: dir, env: { ONLY: 'this', PATH: '/usr/bin:/bin' }, stdio: ['ignore', log, log], detached: true }).pid;
  } finally {
    closeSync(log);
    closeSync(leak);
  }
  started.push(pid);
  await until('the child is sleep', () => argvOf(pid)[0] === 'sleep', 10_000);
  // Signals 1-31 at their default action, as libuv leaves them (this process ignores SIGPIPE and SIGXFSZ);
  // glibc's posix_spawn sets its two internal signals (32, 33) to ignored in every child it starts.
  assert.equal(BigInt('0x' + statusField(pid, 'SigIgn')) & 0x7fffffffn, 0n, `no standard signal ignored: SigIgn ${statusField(pid, 'SigIgn')}`);
  assert.equal(statusField(pid, 'SigBlk'), '0000000000000000', 'no signal blocked');
  const stat = readFileSync(`/proc/${pid}/stat`, 'latin1').split(') ')[1]!.split(' ');
  assert.equal(Number(stat[3]), pid, 'its own session (setsid)');
  // Not even an fd this process inherited without close-on-exec (harnesses leave pipes open that way).
  assert.deepEqual(readdirSync(`/proc/${pid}/fd`).sort(), ['0', '1', '2']);
  assert.equal(readlinkSync(`/proc/${pid}/fd/0`), '/dev/null');
  assert.equal(readlinkSync(`/proc/${pid}/fd/1`), out);
  assert.equal(readlinkSync(`/proc/${pid}/fd/2`), out);
  // Exactly the given variables (PWD is the shell's own, exported as it starts).
  assert.deepEqual(readFileSync(`/proc/${pid}/environ`, 'latin1').split('\0').filter(Boolean).sort(), ['ONLY=this', 'PATH=/usr/bin:/bin', `PWD=${dir}`]);
  assert.equal(readFileSync(out, 'utf8'), `cwd=${dir} only=this\n`);
});

test('a command that cannot be executed throws the error child_process would, and leaves nothing behind', (t) => {
  if (!nativeAddon()) return skipUnlessCi(t, 'the addon is not built');
  const fds = readdirSync('/proc/self/fd').length;
  assert.throws(
    () => spawnUnwaited(join(dir, 'no-such-program'), [], { cwd: dir, env: {}, stdio: ['ignore', 'ignore', 'ignore'], detached: true }),
    (e: any) => e.code === 'ENOENT' && e.syscall === `spawn ${join(dir, 'no-such-program')}` && e.message === `spawn ${join(dir, 'no-such-program')} ENOENT`,
  );
  assert.throws(
    () => spawnUnwaited('/bin/true', [], { cwd: join(dir, 'no-such-dir'), env: {}, stdio: ['ignore', 'ignore', 'ignore'], detached: true, gated: true }),
    (e: any) => e.code === 'ENOENT',
  );
  assert.equal(readdirSync('/proc/self/fd').length, fds, 'no fd left open (the gate pipe is closed on failure)');
});

test('a gated child is a shell until release(), then the command itself: same pid, same start time, stdin /dev/null', async (t) => {
  if (!nativeAddon()) return skipUnlessCi(t, 'the addon is not built');
  const child = spawnUnwaited('/bin/sleep', ['60'], { cwd: dir, env: { PATH: '/usr/bin:/bin' }, stdio: ['ignore', 'ignore', 'ignore'], detached: true, gated: true });
  started.push(child.pid);
  await until('the gate shell waits', () => argvOf(child.pid)[0] === '/bin/sh' && readFileSync(`/proc/${child.pid}/stat`, 'latin1').split(') ')[1]![0] === 'S', 10_000);
  const startTime = readFileSync(`/proc/${child.pid}/stat`, 'latin1').split(') ')[1]!.split(' ')[19];
  assert.equal(argvOf(child.pid)[0], '/bin/sh', 'blocked in its read: nothing but release() (or this process ending) opens the gate');
  child.release();
  child.release(); // idempotent
  await until('the command runs', () => argvOf(child.pid)[0] === '/bin/sleep', 10_000);
  assert.deepEqual(argvOf(child.pid), ['/bin/sleep', '60']);
  assert.equal(readFileSync(`/proc/${child.pid}/stat`, 'latin1').split(') ')[1]!.split(' ')[19], startTime);
  assert.equal(readlinkSync(`/proc/${child.pid}/fd/0`), '/dev/null');
});
