/**
 * The process backends (lib/proc/): the ps output parser, the start-time forms each backend records and
 * how each checks the other's, and the choice of backend. What the verbs do with them is proven through
 * the executables in test/cli/proc-backend.test.ts and by the CLI and fault suites run with
 * SUBAGENT_PROC_BACKEND=ps.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { chooseBackend } from '../../lib/proc/backend.js';
import { epochOfTicks, linux, readStat } from '../../lib/proc/linux.js';
import { cpuMsOf, parsePs, parsePsCpu, parsePsMemory, parseVmStat, ps, snapshotOf } from '../../lib/proc/ps.js';
import { pageSize } from '../../lib/proc/linux.js';
import { cpuUsedSince, treeCpu } from '../../lib/proc/cpu.js';
import { epochStartTime, readStartTime } from '../../lib/proc/start-time.js';
import { SubagentError } from '../../lib/base/errors.js';
import { until } from '../support/wait.js';

const BOOT = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
const btime = () => Number(/^btime (\d+)$/m.exec(readFileSync('/proc/stat', 'latin1'))![1]);
/** A live process's start time in the ps backend's form, from /proc: what procps's lstart shows. */
const epochOf = (pid: number) => epochStartTime(epochOfTicks(readStat(pid)!.startTime, btime()));

// Rows as procps-ng prints `ps -A -ww -o pid= -o ppid= -o pgid= -o stat= -o lstart= -o comm=` with
// LC_ALL=C TZ=UTC, and as macOS/BSD ps print them (lstart padded to 28 columns, "-" without a start time).
const SAMPLE = [
  '    1     0     0 Ss   Tue Nov 24 16:59:49 2026 init',
  '  812     1   812 S<sl Wed Jan  7 03:04:05 2026 Web Content',
  '  813   812   812 Z    Wed Jan  7 03:04:06 2026 defunct thing',
  '  814   812   814 R+   Sun Mar  1 00:00:00 2026     ',
  '  900     1   900 Z    -                            zombie-bsd',
  '  901     1   901 Ss   Mon Feb  2 10:20:30 2026     spaced   name  ',
  'garbage that is not a row',
  '  902     1   902 S    Foo Bar 99 10:20:30 2026 bad-date',
  '',
].join('\n');

test('ps rows: start times in UTC epoch seconds, comm with spaces kept, zombies kept with their state, non-rows skipped', () => {
  const rows = parsePs(SAMPLE);
  assert.deepEqual(
    rows.map((r) => [r.pid, r.ppid, r.pgid, r.state, r.startTime, r.comm]),
    [
      [1, 0, 0, 'Ss', `epoch:${Date.UTC(2026, 10, 24, 16, 59, 49) / 1000}`, 'init'],
      [812, 1, 812, 'S<sl', `epoch:${Date.UTC(2026, 0, 7, 3, 4, 5) / 1000}`, 'Web Content'],
      [813, 812, 812, 'Z', `epoch:${Date.UTC(2026, 0, 7, 3, 4, 6) / 1000}`, 'defunct thing'],
      [814, 812, 814, 'R+', `epoch:${Date.UTC(2026, 2, 1) / 1000}`, ''],
      [900, 1, 900, 'Z', 'none', 'zombie-bsd'],
      [901, 1, 901, 'Ss', `epoch:${Date.UTC(2026, 1, 2, 10, 20, 30) / 1000}`, 'spaced   name'],
    ],
  );
});

test('a ps snapshot knows when ps itself started: what started before and is missing is gone', () => {
  const s = snapshotOf(SAMPLE, 812);
  assert.equal(s.since, Date.UTC(2026, 0, 7, 3, 4, 5) / 1000);
  assert.equal(s.byPid.get(901)?.comm, 'spaced   name');
  assert.equal(snapshotOf(SAMPLE, 4242).since, -Infinity, 'without its own row nothing missing is taken for dead');
});

test('the real ps parses: every live process of /proc that outlives the snapshot is in it, with the start time procps computes', () => {
  // pid -> start time of each live non-zombie process in /proc, read before and after the snapshot.
  const fromProc = () =>
    new Map(
      readdirSync('/proc')
        .filter((e) => /^\d+$/.test(e))
        .map((e) => readStat(Number(e)))
        .filter((s) => s !== null && s.state !== 'Z' && s.state !== 'X')
        .map((s) => [s!.pid, s!.startTime]),
    );
  const a = fromProc();
  const snapshot = ps.processes();
  const b = fromProc();
  const seen = new Map(snapshot.map((p) => [p.pid, p]));
  let compared = 0;
  for (const [pid, t] of a) {
    if (b.get(pid) !== t) continue;
    assert.equal(seen.get(pid)?.startTime, epochStartTime(epochOfTicks(t, btime())), `pid ${pid}`);
    compared++;
  }
  assert.ok(compared > 1);
  const me = seen.get(process.pid);
  assert.ok(me, 'this process is in the snapshot');
  assert.equal(me.ppid, process.ppid);
  assert.equal(me.startTime, epochOf(process.pid));
  assert.equal(me.startTime, ps.identityOf(process.pid)?.startTime);
});

test('start-time forms: ticks (Linux, and every older registry), epoch seconds (ps), gone, foreign', () => {
  assert.deepEqual(readStartTime('987654'), { clock: 'ticks', ticks: '987654' });
  assert.deepEqual(readStartTime('epoch:1718000000'), { clock: 'epoch', seconds: 1718000000 });
  assert.deepEqual(readStartTime('exited'), { clock: 'gone' });
  assert.deepEqual(readStartTime('gone'), { clock: 'gone' });
  for (const t of ['', 'none', 'epoch:', 'epoch:12x', '-5', '12.5']) assert.deepEqual(readStartTime(t), { clock: 'foreign' }, t);
  // procps: btime + ticks / Hertz, truncated.
  assert.equal(epochOfTicks('199', 1000), 1001);
  assert.equal(epochOfTicks('200', 1000), 1002);
});

test('each backend checks its own form and what it can of the other: ticks are exact, seconds are converted, nothing is guessed', async () => {
  const child = spawn('sleep', ['60'], { stdio: 'ignore' });
  try {
    const pid = child.pid!;
    await until('the sleep runs', () => readStat(pid)?.startTime, 10_000);
    const ticks = { pid, startTime: readStat(pid)!.startTime, bootId: BOOT };
    const epoch = { pid, startTime: epochOf(pid), bootId: BOOT };
    const off = (id: typeof epoch, by: number) => ({ ...id, startTime: id.startTime.replace(/\d+$/, (n) => String(Number(n) + by)) });
    // Linux: its own ticks exactly; the ps backend's seconds through btime.
    assert.equal(linux.liveness(ticks), 'alive');
    assert.equal(linux.liveness(off(ticks, 1)), 'dead');
    assert.equal(linux.liveness(epoch), 'alive');
    assert.equal(linux.liveness(off(epoch, 1)), 'dead');
    // ps: its own seconds; ticks it cannot compare — the pid lives, so it cannot say dead either.
    assert.equal(ps.liveness(epoch), 'alive');
    assert.equal(ps.liveness(off(epoch, -1)), 'dead');
    assert.equal(ps.liveness(ticks), 'unchecked');
    // A form no backend knows is unchecked while the pid lives; a process recorded as gone is dead.
    for (const b of [linux, ps]) {
      assert.equal(b.liveness({ ...ticks, startTime: 'from-the-future' }), 'unchecked', b.name);
      assert.equal(b.liveness({ ...ticks, startTime: 'exited' }), 'dead', b.name);
    }
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
    // The pid vanished: dead in every form, for both backends (no process holds it to be unsure about).
    for (const b of [linux, ps])
      for (const id of [ticks, epoch, { ...ticks, startTime: 'from-the-future' }]) assert.equal(b.liveness(id), 'dead', `${b.name} ${id.startTime}`);
  } finally {
    child.kill('SIGKILL');
  }
});

test('a kept ps view never invents a death: a process started after the view is looked for again', () => {
  ps.processes(); // a view, kept for this synchronous stretch
  const child = spawn('sleep', ['60'], { stdio: 'ignore' });
  try {
    // Until exec is done, without yielding (the view stays kept).
    const end = Date.now() + 10_000;
    while (readStat(child.pid!)?.comm !== 'sleep') assert.ok(Date.now() < end, 'sleep did not start');
    const id = { pid: child.pid!, startTime: epochOf(child.pid!), bootId: BOOT };
    assert.equal(ps.liveness(id), 'alive');
  } finally {
    child.kill('SIGKILL');
  }
});

test('CPU time: ps prints it as procps and as macOS do; a row that is not one is skipped', () => {
  assert.equal(cpuMsOf('00:00:01'), 1000);
  assert.equal(cpuMsOf('01:02:03'), (3600 + 2 * 60 + 3) * 1000);
  assert.equal(cpuMsOf('2-01:00:00'), (2 * 24 + 1) * 3600 * 1000);
  assert.equal(cpuMsOf('0:00.03'), 30);
  assert.equal(cpuMsOf('123:45.67'), (123 * 60 + 45.67) * 1000);
  for (const bad of ['-', '', '1:2:3:4', 'abc']) assert.equal(cpuMsOf(bad), null, bad);
  assert.deepEqual(parsePsCpu('    1     0 00:00:01\nnot a row\n  812     1   0:00.50\n  813   812 -\n'), [
    { pid: 1, ppid: 0, cpuMs: 1000 },
    { pid: 812, ppid: 1, cpuMs: 500 },
  ]);
});

test('CPU time of a tree: both backends see a busy grandchild; what a look adds over the last one', async () => {
  // sh → sh → the busy loop: the tree is walked by parent pid.
  const child = spawn('/bin/sh', ['-c', "sh -c 'while :; do :; done' & wait"], { stdio: 'ignore', detached: true });
  try {
    const root = child.pid!;
    const busy = await until('the loop runs', () => linux.cpuTimes().find((p) => p.ppid === root), 10_000);
    await until('the loop used a second and a half of CPU', () => (treeCpu(root).get(busy.pid) ?? 0) >= 1500, 30_000);
    const fromProc = linux.cpuTimes().find((p) => p.pid === busy.pid)!.cpuMs;
    const fromPs = ps.cpuTimes().find((p) => p.pid === busy.pid)!.cpuMs;
    // ps looked later, in whole seconds (procps): at least what /proc said, truncated.
    assert.ok(fromPs >= Math.floor(fromProc / 1000) * 1000, `ps ${fromPs} ms, /proc ${fromProc} ms`);
    const tree = treeCpu(root);
    assert.deepEqual([...tree.keys()].sort(), [root, busy.pid].sort(), 'the root and its descendant, nothing else');
    assert.deepEqual(treeCpu(999_999_999), new Map(), 'a gone root: no tree');
  } finally {
    process.kill(-child.pid!, 'SIGKILL'); // its group: the shell and the loop
  }
  assert.equal(
    cpuUsedSince(
      new Map([
        [1, 100],
        [2, 50],
      ]),
      new Map([
        [1, 160],
        [3, 40],
      ]),
    ),
    60 + 40,
    'growth, and all of a new process',
  );
  assert.equal(cpuUsedSince(new Map([[1, 500]]), new Map([[1, 20]])), 20, 'a pid whose count went down is a new process');
});

test('memory: ps prints RSS in KiB; vm_stat (macOS) is read as free + inactive pages; rows that are not one are skipped', () => {
  assert.deepEqual(parsePsMemory('    1     0  1024\nnot a row\n  812     1     0\n  813   812 -\n'), [
    { pid: 1, ppid: 0, rssBytes: 1024 * 1024 },
    { pid: 812, ppid: 1, rssBytes: 0 },
  ]);
  // As macOS 15 prints it (vm_stat, LC_ALL=C).
  const vmStat = [
    'Mach Virtual Memory Statistics: (page size of 16384 bytes)',
    'Pages free:                                3713.',
    'Pages active:                            162843.',
    'Pages inactive:                          160283.',
    'Pages speculative:                         1403.',
    'Pages throttled:                              0.',
    'Pages wired down:                        103015.',
    'Pages purgeable:                           5034.',
    '"Translation faults":                 925371296.',
    '',
  ].join('\n');
  assert.equal(parseVmStat(vmStat), (3713 + 160283) * 16384);
  assert.equal(parseVmStat('Pages free: 12.\n'), null, 'no page size: not vm_stat');
  assert.equal(parseVmStat(''), null);
});

test("memory of a tree: both backends see what a grandchild holds, summed with its parents; the page size is the kernel's", async () => {
  assert.ok([4096, 16384, 65536].includes(pageSize()), `page size ${pageSize()}`);
  // sh → node holding 64 MiB it has written to (resident, not only reserved).
  const hold = "const b = Buffer.alloc(64 * 1024 * 1024, 1); setInterval(() => b[0]++, 1000); process.stdout.write('held\\n')";
  const child = spawn('/bin/sh', ['-c', `"${process.execPath}" -e "${hold}" & wait`], { stdio: ['ignore', 'pipe', 'ignore'], detached: true });
  try {
    const root = child.pid!;
    await new Promise<void>((resolve) => child.stdout!.once('data', () => resolve()));
    const holder = linux.memory().find((p) => p.ppid === root)!;
    assert.ok(holder.rssBytes >= 64 * 1024 * 1024, `the holder's RSS from /proc: ${holder.rssBytes}`);
    const fromPs = ps.memory().find((p) => p.pid === holder.pid)!;
    assert.ok(Math.abs(fromPs.rssBytes - holder.rssBytes) < 8 * 1024 * 1024, `ps ${fromPs.rssBytes}, /proc ${holder.rssBytes}`);
    const own = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${holder.pid}/status`, 'latin1'))!;
    assert.ok(Math.abs(Number(own[1]) * 1024 - holder.rssBytes) < 8 * 1024 * 1024, 'as the kernel says in VmRSS');
    const shell = linux.memory().find((p) => p.pid === root)!;
    assert.ok(shell.rssBytes > 0);
    const { treeRss } = await import('../../lib/proc/memory.js');
    const tree = treeRss(root)!;
    assert.ok(tree >= holder.rssBytes + shell.rssBytes - 8 * 1024 * 1024, `the tree ${tree}: the shell and the holder`);
    assert.equal(treeRss(999_999_999), null, 'a gone root: no tree');
  } finally {
    process.kill(-child.pid!, 'SIGKILL');
  }
});

test('the backend: the platform chooses, SUBAGENT_PROC_BACKEND overrides, anything else is a clear error', () => {
  assert.equal(chooseBackend({}, 'linux'), 'linux');
  assert.equal(chooseBackend({ SUBAGENT_PROC_BACKEND: '' }, 'linux'), 'linux');
  for (const p of ['darwin', 'freebsd', 'openbsd', 'netbsd'] as NodeJS.Platform[]) assert.equal(chooseBackend({}, p), 'ps', p);
  assert.equal(chooseBackend({ SUBAGENT_PROC_BACKEND: 'ps' }, 'linux'), 'ps');
  assert.equal(chooseBackend({ SUBAGENT_PROC_BACKEND: 'linux' }, 'linux'), 'linux');
  for (const bad of ['PS', 'proc', ' ps', 'auto']) {
    assert.throws(
      () => chooseBackend({ SUBAGENT_PROC_BACKEND: bad }, 'linux'),
      (e: SubagentError) =>
        e instanceof SubagentError && e.code === 'E_PROC_UNAVAILABLE' && e.details.value === bad && /linux or ps/.test(String(e.details.hint)),
      bad,
    );
  }
});
