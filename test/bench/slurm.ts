/**
 * Row 7 of `make bench`: runs placed on Slurm (`--executor slurm`) on the one-node test cluster
 * (test/slurm/cluster.sh), against Slurm's own submit → running time on the same cluster:
 *
 *   - `start-subagent --executor slurm` spawned → the run's record says `running` (the supervisor ran on
 *     the node and started its agent);
 *   - the agent's end → a waiter's return (`status --wait-terminal --name X`, started before the end and
 *     idle in its watch), the agent being a shell blocked on a FIFO that the bench closes;
 *   - Slurm's own: `sbatch --parsable` spawned → the job's first instruction (it writes the time).
 *
 * The cluster is brought up when none answers (root and apt-get, else the row is skipped with why) and
 * down again after, when this row brought it up.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { until } from './runs.js';
import { BIN, ROOT, cleanEnv, fmtMs, median, monoMs, quantile, realtimeNs, run, sleep, verb, json } from './util.js';

export interface SlurmRow {
  row: { what: string; target: string; on: string; plain: string | null; floor: string; verdict: string };
  method: { title: string; text: string };
  details: string;
}

const SCRIPT = join(ROOT, 'test', 'slurm', 'cluster.sh');

function status(registry: string, name: string): string | null {
  try {
    return JSON.parse(readFileSync(join(registry, 'agents', name, '1', 'record.json'), 'utf8')).status;
  } catch {
    return null;
  }
}

function inotify(pid: number): boolean {
  try {
    return spawnSync('ls', ['-l', `/proc/${pid}/fd`], { encoding: 'utf8' }).stdout.includes('inotify');
  } catch {
    return false;
  }
}

export async function slurmRow(area: string, n: number): Promise<SlurmRow | string> {
  const up = spawnSync('bash', [SCRIPT, 'up'], { encoding: 'utf8', timeout: 300_000 });
  const conf = up.stdout?.split('\n').find((l) => l.startsWith('SLURM_CONF='));
  if (up.status !== 0 || !conf) return `skipped: no Slurm test cluster (${(up.stderr ?? '').trim() || `cluster.sh exited ${up.status}`})`;
  const started = up.stdout.trim().endsWith('started');
  const env = cleanEnv({ SLURM_CONF: conf.slice('SLURM_CONF='.length) });
  const R = join(area, 'slurm');
  mkdirSync(R, { recursive: true });
  const toRunning: number[] = [];
  const endToWaiter: number[] = [];
  const slurmOwn: number[] = [];
  try {
    // A first job warms the controller (the first job after its start takes ~3 s).
    spawnSync('sbatch', ['--parsable', '--output=/dev/null', '--wrap=true'], { env });
    // Each measure starts on an idle cluster: a job submitted while another is completing starts later.
    const idle = () => until(() => spawnSync('squeue', ['-h', '-o', '%i'], { env, encoding: 'utf8' }).stdout.trim() === '', 60_000, 20);
    for (let i = 0; i < n; i++) {
      await idle();
      // Slurm's own: submit → the job's first instruction.
      const mark = join(R, `own-${i}`);
      const t0 = realtimeNs();
      const sb = spawnSync('sbatch', ['--parsable', '--output=/dev/null', `--wrap=date +%s%N > ${mark}`], { env, encoding: 'utf8' });
      if (sb.status !== 0) throw new Error(`sbatch: ${sb.stderr}`);
      await until(() => existsSync(mark) && readFileSync(mark, 'utf8').endsWith('\n'), 30_000, 2);
      slurmOwn.push(Number(BigInt(readFileSync(mark, 'utf8').trim()) - t0) / 1e6);

      // start --executor slurm → running.
      await idle();
      const fifo = join(R, `fifo-${i}`);
      spawnSync('mkfifo', [fifo]);
      const name = `b${i}`;
      const s0 = monoMs();
      const d = await verb('start-subagent', ['--registry', R, '--executor', 'slurm', '--cli', 'shell', '--name', name, '--prompt', `read _ < ${fifo}`], {
        cwd: area,
        env,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      if (json(d)?.ok !== true) throw new Error(`start --executor slurm: ${d.stdout} ${d.stderr}`);
      if (!(await until(() => status(R, name) === 'running', 30_000, 2))) throw new Error(`${name} never ran`);
      toRunning.push(monoMs() - s0);

      // The agent's end → a waiter's return.
      const waiter = run(join(BIN, 'status'), ['--registry', R, '--wait-terminal', '--name', name, '--timeout', '60'], {
        cwd: area,
        env,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      await until(() => waiter.child.pid !== undefined && inotify(waiter.child.pid), 5000, 5);
      await sleep(50);
      const e0 = monoMs();
      writeFileSync(fifo, '');
      const w = await waiter;
      endToWaiter.push(monoMs() - e0);
      if (json(w)?.agents?.[0]?.status !== 'done') throw new Error(`waiter: ${w.stdout.slice(0, 300)}`);
    }
  } finally {
    if (started) spawnSync('bash', [SCRIPT, 'down'], { stdio: 'ignore', timeout: 120_000 });
  }
  const own = median(slurmOwn);
  const ours = median(toRunning);
  const wait = median(endToWaiter);
  const cell = `start → running median **${fmtMs(ours, 0)}** (p90 ${fmtMs(quantile(toRunning, 0.9), 0)}); agent end → waiter return median **${fmtMs(wait, 0)}** (p90 ${fmtMs(quantile(endToWaiter, 0.9), 0)})`;
  return {
    row: {
      what: '`start-subagent --executor slurm` → `running`; the agent’s end → a waiter’s return (one-node Slurm)',
      target: 'measured against Slurm’s own submit → running (no target yet)',
      on: cell,
      plain: null,
      floor: `Slurm’s own submit → job running: median ${fmtMs(own, 0)}`,
      verdict: `+${fmtMs(ours - own, 0)} over Slurm’s own (the start verb, the supervisor’s boot on the node, the agent’s spawn)`,
    },
    method: {
      title: '7. runs on Slurm',
      text:
        `${n} rounds on the one-node test cluster (test/slurm/cluster.sh, Debian's Slurm): Slurm's own figure is \`sbatch --parsable --wrap 'date +%s%N > F'\` ` +
        'spawned → the time the job wrote; ours is `bin/start-subagent --executor slurm --cli shell` spawned → its record says `running`, polled every 2 ms; ' +
        'then `bin/status --wait-terminal --name X` is started and, once it watches (an inotify fd), the FIFO the agent reads is closed: end → the waiter’s exit.',
    },
    details: `### 7. runs on Slurm\n\n- Slurm's own submit → running (ms): ${slurmOwn.map((x) => x.toFixed(0)).join(', ')}\n- start → running (ms): ${toRunning.map((x) => x.toFixed(0)).join(', ')}\n- agent end → waiter return (ms): ${endToWaiter.map((x) => x.toFixed(0)).join(', ')}`,
  };
}
