import { closeSync } from 'node:fs';
import { jobEngine, type ExecutorName } from '../proc/engines.js';
import type { JobEngine } from '../proc/jobs.js';
import { openSupervisorLog, spawnSupervisor, supervisorCommand, supervisorEnv } from './spawn.js';

/**
 * Where a run's supervisor is placed: the executor interface (docs/scaling.md). `local` spawns it
 * detached on this machine (today's supervisor); a job engine submits it as a job whose one process it
 * is. Either way the supervisor is the same program and writes the same record.
 */
export interface Executor {
  readonly name: ExecutorName;
  /** Starts the supervisor of a published run and returns at once. */
  place(run: PlacedRun): Promise<Placed>;
}

export interface PlacedRun {
  registry: string;
  dir: string;
  env: NodeJS.ProcessEnv;
  /** Says which run, where the engine shows a name (a Slurm job name). */
  label: string;
  /** The caller's options for the engine (--slurm-arg), passed through. */
  args: string[];
  /** On a job engine: the jobs whose end this one waits for before it starts (--after). */
  after?: string[];
}

/** Local: the supervisor's pid. A job: its id (the supervisor's pid is on a node, recorded by it). */
export interface Placed {
  pid: number | null;
  jobId: string | null;
}

const local: Executor = {
  name: 'local',
  async place(run) {
    return { pid: await spawnSupervisor(run.registry, run.dir, run.env), jobId: null };
  },
};

function asJob(engine: JobEngine, name: ExecutorName): Executor {
  return {
    name,
    async place(run) {
      // The job's output goes into the run's supervisor.log, made private before the engine opens it.
      const log = openSupervisorLog(run.dir);
      closeSync(log.fd);
      const jobId = engine.submit({
        name: run.label,
        command: supervisorCommand(run.registry, run.dir),
        cwd: run.dir,
        env: supervisorEnv(run.env),
        output: log.path,
        args: run.args,
        after: run.after ?? [],
      });
      return { pid: null, jobId };
    },
  };
}

export function executorNamed(name: ExecutorName): Executor {
  const engine = jobEngine(name);
  return engine ? asJob(engine, name) : local;
}
