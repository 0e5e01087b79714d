/**
 * Row 8 of `make bench`: what a run's memory sampling (docs/memory.md) costs — the CPU an idle supervisor
 * uses, its samples included, with each process backend.
 */
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { details, methods, rows } from './results.js';
import { mkfifo, openGate, readRecord, start, until, waitTerminal } from './runs.js';
import { AREA, QUICK } from './setup.js';
import { median, max, monoMs, pad, procStat, q, removeTree, sleep, waitQuiet } from './util.js';

/** The CPU time of a process and of the children it has waited for (a `ps` it ran), in ms, from /proc/<pid>/stat. */
function cpuWithChildrenMs(pid: number): number {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'latin1');
    const f = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])) * 10;
  } catch {
    return NaN;
  }
}

/** Per supervisor, the share of one core used while its run's agent sits idle, over `seconds`. */
async function idleShare(backend: 'linux' | 'ps', n: number, seconds: number): Promise<number[]> {
  const R = join(AREA, `sampling-${backend}`);
  const gates = join(AREA, `gates-sampling-${backend}`);
  mkdirSync(gates);
  const names = Array.from({ length: n }, (_, i) => `idle/${pad(i)}`);
  for (const name of names) {
    const gate = join(gates, name.replace('/', '-'));
    mkfifo(gate);
    // Stalls are not watched: the figure is the memory sampling's and the supervisor's own.
    await start(R, name, `read _ < ${q(gate)}`, { SUBAGENT_PROC_BACKEND: backend, SUBAGENT_STALL_SEC: '0' });
  }
  // With ps the recorded start time is in seconds since the epoch, not /proc's ticks: the pid alone is
  // checked here (these supervisors were started a moment ago and are waited for below).
  const supOf = (name: string) => {
    const r = readRecord(R, name);
    return r?.status === 'running' && r.supervisor && procStat(r.supervisor.pid) !== null ? (r.supervisor.pid as number) : null;
  };
  if (!(await until(() => names.every((x) => supOf(x) !== null), 60_000, 50)))
    throw new Error(`not every run reached running: ${names.map((x) => `${x} ${readRecord(R, x)?.status}`).join(', ')}`);
  await sleep(1000);
  const pids = names.map((x) => supOf(x)!);
  const before = pids.map(cpuWithChildrenMs);
  const t0 = monoMs();
  await sleep(seconds * 1000);
  const wall = monoMs() - t0;
  const shares = pids.map((p, i) => (cpuWithChildrenMs(p) - before[i]!) / wall);
  for (const name of names) await openGate(join(gates, name.replace('/', '-')));
  await waitTerminal(R, ['--prefix', 'idle'], 60);
  await waitQuiet(R, 30_000);
  removeTree(R);
  removeTree(gates);
  return shares;
}

export async function samplingRow(): Promise<void> {
  const n = QUICK ? 4 : 10;
  const seconds = QUICK ? 11 : 31;
  const processes = readdirSync('/proc').filter((e) => /^\d+$/.test(e)).length;
  const linux = await idleShare('linux', n, seconds);
  const ps = await idleShare('ps', n, seconds);
  const pct = (x: number) => `${(x * 100).toFixed(2)} %`;
  const cell = (xs: number[]) => `median **${pct(median(xs))}** of a core, max ${pct(max(xs))}`;
  rows.push({
    what: 'memory sampling (idle supervisor, samples included)',
    target: '≤ 1 % of one core per run at the default period (5 s)',
    on: `linux (/proc): ${cell(linux)}; ps: ${cell(ps)}`,
    plain: null,
    floor: `${processes} processes on the machine`,
    verdict: max([...linux, ...ps]) <= 0.01 ? 'meets' : '**misses**',
  });
  details.push(
    `### 8. Memory sampling\n\n- ${n} idle runs a backend, ${seconds} s each, ${processes} processes on the machine\n` +
      `- linux: ${linux.map(pct).join(', ')}\n- ps: ${ps.map(pct).join(', ')}\n`,
  );
  methods.push({
    title: '8. memory sampling',
    text:
      `${n} runs whose script blocks in \`read _ < FIFO\`, started with \`SUBAGENT_PROC_BACKEND=linux\`, then ${n} with \`ps\` (stalls not watched, so ` +
      "nothing but the supervisor's own timers and its memory samples run). Once every supervisor is running (+1 s), each one's CPU time " +
      `(utime + stime + cutime + cstime of /proc/<pid>/stat: with \`ps\` the ps processes it ran and waited for count too) is read, again ${seconds} s later; ` +
      'the difference over the wall time is its share of one core. A sample reads every process of the machine (a walk of /proc, or one `ps`), so ' +
      'the cost grows with the number of processes, which the row states.',
  });
}
