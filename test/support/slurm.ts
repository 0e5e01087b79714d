/**
 * The one-node Slurm cluster of test/slurm/cluster.sh, for the tests of the slurm executor: brought up
 * before a file's tests (installed first with apt-get when missing and the machine allows it) and torn
 * down after them when this file brought it up. Where it cannot come up (no root, no apt-get), the
 * tests skip and say why — and fail under CI, where `make test` must run them.
 */
import { spawnSync } from 'node:child_process';
import { after, before } from 'node:test';
import { join } from 'node:path';
import { ROOT } from './paths.js';
import { skipUnlessCi } from './machine.js';

const SCRIPT = join(ROOT, 'test', 'slurm', 'cluster.sh');

export interface Cluster {
  /** SLURM_CONF=… for the box's environment; null when the cluster could not come up. */
  conf: string | null;
  /** Why it could not come up. */
  why: string | null;
}

/** Brings the cluster up for this file (before) and down after it, if this file brought it up. */
export function slurmCluster(): Cluster {
  const c: Cluster = { conf: null, why: null };
  let started = false;
  before(() => {
    const r = spawnSync('bash', [SCRIPT, 'up'], { encoding: 'utf8', timeout: 300_000 });
    const lines = (r.stdout ?? '').trim().split('\n');
    const conf = lines.find((l) => l.startsWith('SLURM_CONF='));
    if (r.status !== 0 || !conf) {
      c.why = `no Slurm test cluster here: ${(r.stderr ?? '').trim() || r.error?.message || `cluster.sh up exited ${r.status}`}`;
      return;
    }
    c.conf = conf.slice('SLURM_CONF='.length);
    started = lines[lines.length - 1] === 'started';
  });
  after(() => {
    if (started) spawnSync('bash', [SCRIPT, 'down'], { stdio: 'ignore', timeout: 120_000 });
  });
  return c;
}

/** The cluster's configuration, or a skip (a failure under CI) that says why there is none. */
export function needCluster(c: Cluster, t: { skip(message?: string): void }): string | null {
  if (c.conf) return c.conf;
  skipUnlessCi(t, c.why ?? 'no Slurm test cluster');
  return null;
}

/** A Slurm client command against the test cluster, bounded; its stdout. */
export function slurmCmd(conf: string, program: string, args: string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(program, args, { encoding: 'utf8', timeout: 30_000, env: { ...process.env, SLURM_CONF: conf } });
  return { status: r.status, stdout: r.stdout ?? '', stderr: r.stderr ?? '' };
}

/** A job's state as Slurm tells it (`squeue --states=all`), or null when Slurm no longer knows it. */
export function jobState(conf: string, jobId: string): { state: string; reason: string } | null {
  const r = slurmCmd(conf, 'squeue', ['--states=all', '-h', '-j', jobId, '-O', 'State:|,Reason:|']);
  const [state, reason] = r.stdout.trim().split('|');
  return state ? { state, reason: reason ?? '' } : null;
}

/** A job submitted straight to Slurm (not a run): e.g. one that fills the node. Returns its id. */
export function submitRaw(conf: string, args: string[]): string {
  const r = slurmCmd(conf, 'sbatch', ['--parsable', ...args]);
  const id = r.stdout.trim();
  if (r.status !== 0 || !/^[0-9]+$/.test(id)) throw new Error(`sbatch ${args.join(' ')} failed: ${r.stderr}`);
  return id;
}

/** Cancels jobs the test submitted (by id), and waits until Slurm says each ended. */
export function cancelJobs(conf: string, ids: string[]): void {
  if (!ids.length) return;
  slurmCmd(conf, 'scancel', ids);
}
