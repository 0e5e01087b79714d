/**
 * Runs for the rows: their records, starts and waits, FIFO gates, a waiter seen ready, a command's wall
 * time and peak RSS, and the big registries of 1 000 and 10 000 finished runs (built once, shared).
 */
import { spawn, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { closeSync, constants, linkSync, mkdirSync, openSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { AREA, GNU_TIME, problems } from './setup.js';
import {
  BENCH_DIST,
  BIN,
  type Done,
  type Identity,
  cleanEnv,
  identityOf,
  inotifyWatches,
  isAlive,
  json,
  monoMs,
  procStat,
  run,
  sleep,
  track,
  verb,
  waitQuiet,
} from './util.js';

function recordFile(registry: string, name: string, runNo = 1): string {
  return join(registry, 'agents', name.replaceAll('/', '+'), String(runNo), 'record.json');
}

export function readRecord(registry: string, name: string, runNo = 1): Record<string, any> | null {
  try {
    return JSON.parse(readFileSync(recordFile(registry, name, runNo), 'utf8'));
  } catch {
    return null;
  }
}

export async function until(cond: () => boolean, timeoutMs: number, stepMs = 5): Promise<boolean> {
  const end = monoMs() + timeoutMs;
  while (monoMs() < end) {
    if (cond()) return true;
    await sleep(stepMs);
  }
  return cond();
}

export async function start(registry: string, name: string, prompt: string, env: Record<string, string> = {}): Promise<Done> {
  const d = await verb('start-subagent', ['--registry', registry, '--cli', 'shell', '--name', name, '--prompt', prompt], {
    cwd: AREA,
    env: cleanEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  if (json(d)?.ok !== true) throw new Error(`start-subagent ${name} failed (${d.code}): ${d.stdout.slice(0, 500)} ${d.stderr.slice(0, 500)}`);
  return d;
}

export async function waitTerminal(registry: string, sel: string[], timeoutSec: number): Promise<any> {
  const d = await verb('status', ['--registry', registry, '--wait-terminal', ...sel, '--timeout', String(timeoutSec)], {
    cwd: AREA,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const j = json(d);
  if (j?.ok !== true) throw new Error(`status --wait-terminal ${sel.join(' ')} failed (${d.code}): ${d.stdout.slice(0, 500)} ${d.stderr.slice(0, 300)}`);
  return j;
}

export function mkfifo(path: string): void {
  const r = spawnSync('mkfifo', [path]);
  if (r.status !== 0) throw new Error(`mkfifo ${path} failed: ${r.stderr}`);
}

/** Opens the gate of a script blocked in `read _ < fifo`: open for writing (once it reads), close (EOF). */
export async function openGate(fifo: string, timeoutMs = 10_000): Promise<boolean> {
  const end = monoMs() + timeoutMs;
  for (;;) {
    try {
      closeSync(openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK));
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENXIO' || monoMs() > end) return false;
      await sleep(2);
    }
  }
}

/** A waiter is ready when it holds inotify watches and has gone idle (or, with no watch, idle for longer). */
export async function waiterReady(pid: number): Promise<'inotify' | 'idle' | 'timeout' | 'exited'> {
  const t0 = monoMs();
  let lastCpu = -1;
  let stableSince = monoMs();
  while (monoMs() - t0 < 3000) {
    const st = procStat(pid);
    if (!st) return 'exited';
    const cpu = st.utime + st.stime;
    if (cpu !== lastCpu) {
      lastCpu = cpu;
      stableSince = monoMs();
    }
    const idle = monoMs() - stableSince;
    const watches = inotifyWatches(pid);
    if (watches > 0 && idle >= 40 && st.state === 'S') return 'inotify';
    if (watches <= 0 && monoMs() - t0 > 1000 && idle >= 150 && st.state === 'S') return 'idle';
    await sleep(5);
  }
  return 'timeout';
}

/** Runs a command under /usr/bin/time (or the getrusage preload); wall ms from the bench, peak RSS kB. */
export async function measured(cmd: string[], env: Record<string, string> = {}): Promise<{ d: Done; wallMs: number; maxRssKb: number }> {
  const f = join(AREA, `rss-${randomUUID()}`);
  let d: Done;
  if (GNU_TIME) {
    d = await run(GNU_TIME, ['-f', '%M', '-o', f, ...cmd], { cwd: AREA, env: cleanEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
  } else {
    const penv = cleanEnv({ ...env, NODE_OPTIONS: `--import=${pathToFileURL(join(BENCH_DIST, 'maxrss-preload.js')).href}`, BENCH_MAXRSS_FILE: f });
    d = await run(cmd[0]!, cmd.slice(1), { cwd: AREA, env: penv, stdio: ['ignore', 'pipe', 'pipe'] });
  }
  let rss = NaN;
  try {
    rss = Number(readFileSync(f, 'utf8').trim().split('\n').pop());
  } catch {}
  return { d, wallMs: d.t1 - d.t0, maxRssKb: rss };
}

/** A verb run as a user runs it (`bin/<verb>`, through its #! line), stdout kept or sent to /dev/null. */
export function timedVerb(v: string, args: string[], env: Record<string, string>, keepStdout: boolean): Promise<Done> {
  const devNull = keepStdout ? null : openSync('/dev/null', 'w');
  const p = run(join(BIN, v), args, { cwd: AREA, env: cleanEnv(env), stdio: ['ignore', devNull ?? 'pipe', 'pipe'] });
  if (devNull !== null) closeSync(devNull);
  return p;
}

// ---------------------------------------------------------------------------- shared registries

let templateDir = '';
/** One real finished run: the template of the big registries. */
export async function templateRun(): Promise<string> {
  if (templateDir) return templateDir;
  const reg = join(AREA, 'template');
  await start(reg, 'template', 'echo "hello from the template run"');
  await waitTerminal(reg, ['--name', 'template'], 30);
  await waitQuiet(reg, 10_000);
  templateDir = reg;
  return reg;
}

/** Runs that stay `running` in every big registry, beside its finished ones. */
export const RUNNING = 50;
let holder: Identity | null = null;
/**
 * A process the bench owns, alive until its clean-up: the supervisor of the big registries' running
 * runs (a run is `running` while its supervisor's identity is alive).
 */
export function runningHolder(): Identity {
  if (holder && isAlive(holder)) return holder;
  const child = track(spawn('sleep', ['86400'], { stdio: 'ignore' }));
  child.unref();
  const id = child.pid === undefined ? null : identityOf(child.pid);
  if (!id) throw new Error('cannot start the process that holds the running runs');
  holder = id;
  return id;
}

export interface BigRegistry {
  dir: string;
  buildMs: number;
  listed: number;
  done: number;
  running: number;
  problems: number;
  outMB: number;
}
const bigRegistries = new Map<number, BigRegistry>();
/**
 * A registry of n finished runs and RUNNING running ones (copies of the template run's record, in the
 * record format the runs themselves write, with their own names and run ids; the running ones name a
 * live process the bench owns as their supervisor), built once and kept for the rest of the bench (the
 * A/B, the anchor's row and the other Nodes list it too), its status cache filled. No run is started:
 * writing 10 000 records takes a second or two.
 */
export async function bigRegistry(n: number): Promise<BigRegistry> {
  const known = bigRegistries.get(n);
  if (known) return known;
  const templateReg = await templateRun();
  const tdir = join(templateReg, 'agents', 'template', '1');
  const files = readdirSync(tdir).filter((f) => f !== 'record.json' && !f.endsWith('.lock'));
  const template = JSON.parse(readFileSync(join(tdir, 'record.json'), 'utf8'));
  const t0 = monoMs();
  const reg = join(AREA, `status-${n}`);
  mkdirSync(join(reg, 'agents'), { recursive: true });
  mkdirSync(join(reg, 'tmp'));
  writeFileSync(join(reg, '.gitignore'), readFileSync(join(templateReg, '.gitignore')));
  for (let i = 0; i < n; i++) {
    const name = `run-${String(i).padStart(5, '0')}`;
    const dir = join(reg, 'agents', name, '1');
    mkdirSync(dir, { recursive: true });
    // the template's other files are shared as hard links (identical content, and far fewer blocks to
    // write and to free again than copies: this disk is mounted with online discard)
    for (const f of files) linkSync(join(tdir, f), join(dir, f));
    writeFileSync(join(dir, 'record.json'), JSON.stringify({ ...template, name, runId: randomUUID() }, null, 1) + '\n');
  }
  const sup = runningHolder();
  for (let i = 0; i < RUNNING; i++) {
    const name = `live-${String(i).padStart(3, '0')}`;
    const dir = join(reg, 'agents', name, '1');
    mkdirSync(dir, { recursive: true });
    for (const f of files) linkSync(join(tdir, f), join(dir, f));
    const supervisor = { pid: sup.pid, startTime: sup.startTime, bootId: template.supervisor?.bootId ?? '' };
    const running = { ...template, name, runId: randomUUID(), status: 'running', outcome: null, exitCode: null, signal: null, finishedAt: null };
    for (const k of ['reason', 'endReason', 'error']) if (k in running) running[k] = null;
    // its supervisor and its agent alive, as a running run's are
    const agentProcess = { ...template.agentProcess, pid: sup.pid, startTime: sup.startTime, bootId: supervisor.bootId };
    writeFileSync(join(dir, 'record.json'), JSON.stringify({ ...running, supervisor, agentProcess }, null, 1) + '\n');
  }
  const buildMs = monoMs() - t0;
  // Finished runs are listed from the status cache once their records are 2 s old (docs/design.md, "The
  // status cache"): the check listing below waits for that and fills the cache.
  await sleep(2200);
  const check = await verb('status', ['--registry', reg], { cwd: AREA, stdio: ['ignore', 'pipe', 'pipe'] });
  const j = json(check);
  const listed = Array.isArray(j?.agents) ? j.agents.length : 0;
  const done = Array.isArray(j?.agents) ? j.agents.filter((a: any) => a.status === 'done').length : 0;
  const running = Array.isArray(j?.agents) ? j.agents.filter((a: any) => a.status === 'running').length : 0;
  const probs = Array.isArray(j?.problems) ? j.problems.length : 0;
  if (listed !== n + RUNNING || done !== n || running !== RUNNING || probs)
    problems.push(`status registry of ${n}: status listed ${listed} of ${n + RUNNING} runs, ${done} done, ${running} running (${probs} problems)`);
  const out = { dir: reg, buildMs, listed, done, running, problems: probs, outMB: check.stdout.length / 1e6 };
  bigRegistries.set(n, out);
  return out;
}
