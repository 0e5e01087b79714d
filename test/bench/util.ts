/**
 * Helpers of the benchmark suite (test/bench/run.ts): processes, /proc, statistics, the temp area and
 * the clean-up of everything the bench started. Nothing here imports the product: the bench drives the
 * real executables in bin/ and reads the registry on disk as an outsider would.
 */
import { spawn, spawnSync, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root (this file runs from dist/test/bench/). */
export const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
export const BIN = join(ROOT, 'bin');
export const BENCH_DIST = fileURLToPath(new URL('./', import.meta.url));

/**
 * The Node the bench's children run on: `node` (first on their PATH, which the bin/* shims' `#!/usr/bin/env
 * node` line and `node -e 0` resolve) and the verbs the bench spawns itself. The supervisor a start spawns
 * runs on the Node that started it. run.ts switches it to measure other Nodes (SUBAGENT_BENCH_NODES).
 */
let nodeExec = process.execPath;
export function useNode(exec: string): void {
  nodeExec = exec;
}
export function nodeBin(): string {
  return nodeExec;
}

/**
 * The environment every child gets: the caller's, without anything that would point it at another registry
 * or run, or change what is measured (NODE_OPTIONS; Node's own compile-cache switches, which would turn the
 * cache on or off for everything; the caller's SUBAGENT_FAST_PATHS), with the bench's Node first on PATH.
 */
export function cleanEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (k.startsWith('SUBAGENT_') || k.startsWith('OPENCODE_PSA_') || k === 'NODE_OPTIONS' || k === 'NODE_COMPILE_CACHE' || k === 'NODE_DISABLE_COMPILE_CACHE')
      continue;
    env[k] = v;
  }
  env.PATH = `${dirname(nodeExec)}:${env.PATH ?? '/usr/local/bin:/usr/bin:/bin'}`;
  return { ...env, ...extra };
}

// ---------------------------------------------------------------------------------------------- time

/** Wall-clock nanoseconds with sub-millisecond resolution (comparable with `date +%s%N`). */
export function realtimeNs(): bigint {
  return BigInt(Math.round((performance.timeOrigin + performance.now()) * 1000)) * 1000n;
}

export function monoMs(): number {
  return performance.now();
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

// ---------------------------------------------------------------------------------------- statistics

export function sorted(xs: number[]): number[] {
  return [...xs].sort((a, b) => a - b);
}

export function quantile(xs: number[], q: number): number {
  if (xs.length === 0) return NaN;
  const s = sorted(xs);
  // nearest rank
  const rank = Math.max(1, Math.ceil(q * s.length));
  return s[Math.min(s.length, rank) - 1]!;
}

export const median = (xs: number[]) => {
  if (xs.length === 0) return NaN;
  const s = sorted(xs);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};
export const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : NaN);
export const max = (xs: number[]) => (xs.length ? Math.max(...xs) : NaN);
export const min = (xs: number[]) => (xs.length ? Math.min(...xs) : NaN);

/**
 * A 95 % bootstrap interval of median(b) − median(a) (the two samples resampled independently, 2 000
 * times, with a fixed seed so that a page is reproducible from its samples).
 */
export function medianDiffInterval(a: number[], b: number[], resamples = 2000): [number, number] {
  if (a.length < 2 || b.length < 2) return [NaN, NaN];
  let seed = 0x9e3779b9;
  const rnd = () => {
    seed ^= seed << 13;
    seed ^= seed >>> 17;
    seed ^= seed << 5;
    return (seed >>> 0) / 2 ** 32;
  };
  const pick = (xs: number[]) => median(Array.from({ length: xs.length }, () => xs[Math.floor(rnd() * xs.length)]!));
  const diffs = Array.from({ length: resamples }, () => pick(b) - pick(a)).sort((x, y) => x - y);
  return [diffs[Math.floor(0.025 * resamples)]!, diffs[Math.ceil(0.975 * resamples) - 1]!];
}

export function fmtMs(ms: number, digits = 1): string {
  if (!Number.isFinite(ms)) return 'n/a';
  if (ms >= 10_000) return `${(ms / 1000).toFixed(1)} s`;
  return `${ms.toFixed(digits)} ms`;
}

export function fmtMB(kb: number): string {
  return Number.isFinite(kb) ? `${(kb / 1024).toFixed(1)} MB` : 'n/a';
}

export function fmtRatio(x: number): string {
  return Number.isFinite(x) ? `${x.toFixed(2)} ×` : 'n/a';
}

/** A difference in kB as MB with its sign (± when it is under 0.05 MB). */
export const fmtDelta = (kb: number) => (Math.abs(kb) < 52 ? '±' : kb > 0 ? '+' : '−') + fmtMB(Math.abs(kb));
/** A signed time. */
export const fmtSignedMs = (ms: number) => (Number.isFinite(ms) ? `${ms >= 0 ? '+' : '−'}${fmtMs(Math.abs(ms))}` : 'n/a');
/** A signed fraction as a percentage. */
export const fmtPct = (x: number) => (Number.isFinite(x) ? `${x >= 0 ? '+' : '−'}${Math.abs(x * 100).toFixed(1)} %` : 'n/a');
/** A word quoted for the shell. */
export const q = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;
/** A number with leading zeros, for names. */
export const pad = (i: number, w = 3) => String(i).padStart(w, '0');

// ------------------------------------------------------------------------------------------- /proc

export interface Identity {
  pid: number;
  startTime: string;
}

/** The start time (field 22 of /proc/<pid>/stat) and state of a live, non-zombie process; null otherwise. */
export function procStat(pid: number): { state: string; startTime: string; utime: number; stime: number } | null {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'latin1');
  } catch {
    return null;
  }
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  const state = fields[0] ?? '?';
  if (state === 'Z' || state === 'X') return null;
  return { state, startTime: fields[19] ?? '', utime: Number(fields[11]), stime: Number(fields[12]) };
}

export function isAlive(id: Identity | null | undefined): boolean {
  if (!id || !Number.isInteger(id.pid) || id.pid <= 0) return false;
  const s = procStat(id.pid);
  return s !== null && s.startTime === String(id.startTime);
}

export function identityOf(pid: number): Identity | null {
  const s = procStat(pid);
  return s ? { pid, startTime: s.startTime } : null;
}

/** Fields of /proc/<pid>/status and /proc/<pid>/smaps_rollup, in kB (NaN when unreadable). */
export function memoryOf(pid: number): { rssKb: number; hwmKb: number; pssKb: number; pssAnonKb: number; pssFileKb: number } {
  const field = (text: string, key: string) => {
    const m = new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(text);
    return m ? Number(m[1]) : NaN;
  };
  let status = '';
  let rollup = '';
  try {
    status = readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {}
  try {
    rollup = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
  } catch {}
  return {
    rssKb: field(status, 'VmRSS'),
    hwmKb: field(status, 'VmHWM'),
    pssKb: field(rollup, 'Pss'),
    pssAnonKb: field(rollup, 'Pss_Anon'),
    pssFileKb: field(rollup, 'Pss_File'),
  };
}

/** CPU time a process has had so far, in ms (first field of /proc/<pid>/schedstat, ns); NaN when unreadable. */
export function cpuMsOf(pid: number): number {
  try {
    return Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0]) / 1e6;
  } catch {
    return NaN;
  }
}

/** Number of inotify watches a process holds (from /proc/<pid>/fdinfo), or -1 when it cannot be read. */
export function inotifyWatches(pid: number): number {
  let fds: string[];
  try {
    fds = readdirSync(`/proc/${pid}/fd`);
  } catch {
    return -1;
  }
  let n = 0;
  for (const fd of fds) {
    try {
      if (readlinkSync(`/proc/${pid}/fd/${fd}`) !== 'anon_inode:inotify') continue;
      n += readFileSync(`/proc/${pid}/fdinfo/${fd}`, 'utf8')
        .split('\n')
        .filter((l) => l.startsWith('inotify wd:')).length;
    } catch {}
  }
  return n;
}

// -------------------------------------------------------------------------------- our own children

const children = new Set<ChildProcess>();

/** Spawns a child the bench owns (killed by pid at clean-up if still running). */
export function track(child: ChildProcess): ChildProcess {
  children.add(child);
  child.on('exit', () => children.delete(child));
  return child;
}

export interface Done {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** monotonic ms at spawn and at the 'exit' event */
  t0: number;
  t1: number;
  /** wall clock (ns) at the 'exit' event */
  exitNs: bigint;
}

/** Runs a command to its end, collecting output (stdout capped at 64 MiB). */
export function run(cmd: string, args: string[], opts: SpawnOptions & { input?: string } = {}): Promise<Done> & { child: ChildProcess } {
  const t0 = monoMs();
  const child = track(spawn(cmd, args, { stdio: ['pipe', 'pipe', 'pipe'], ...opts }));
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  let outBytes = 0;
  child.stdout?.on('data', (b: Buffer) => {
    outBytes += b.length;
    if (outBytes < 64 * 1024 * 1024) out.push(b);
  });
  child.stderr?.on('data', (b: Buffer) => err.push(b));
  child.stdin?.on('error', () => {});
  child.stdin?.end(opts.input ?? '');
  const p = new Promise<Done>((resolve) => {
    let exit: { code: number | null; signal: NodeJS.Signals | null; t1: number; exitNs: bigint } | null = null;
    child.on('error', (e) => {
      err.push(Buffer.from(String(e)));
      resolve({ code: -1, signal: null, stdout: '', stderr: String(e), t0, t1: monoMs(), exitNs: realtimeNs() });
    });
    child.on('exit', (code, signal) => {
      exit = { code, signal, t1: monoMs(), exitNs: realtimeNs() };
    });
    child.on('close', () => {
      const e = exit ?? { code: child.exitCode, signal: child.signalCode, t1: monoMs(), exitNs: realtimeNs() };
      resolve({ ...e, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8'), t0 });
    });
  }) as Promise<Done> & { child: ChildProcess };
  p.child = child;
  return p;
}

/** A verb of bin/ run through node (no shell), like a caller would, to its end. */
export function verb(name: string, args: string[], opts: SpawnOptions & { input?: string } = {}) {
  return run(nodeExec, [join(BIN, name), ...args], { env: cleanEnv(), ...opts });
}

export function json(d: Done): any {
  try {
    return JSON.parse(d.stdout.trim().split('\n').pop() ?? '');
  } catch {
    return null;
  }
}

export function which(cmd: string): string | null {
  const r = spawnSync('sh', ['-c', `command -v ${cmd}`], { encoding: 'utf8' });
  const p = r.stdout.trim();
  return r.status === 0 && p ? p : null;
}

// ------------------------------------------------------------------------------ registry, read-only

export interface RecordLite {
  name: string;
  run: number;
  status: string;
  outcome: string | null;
  supervisor: Identity | null;
  agentProcess: (Identity & { pgid?: number }) | null;
  dir: string;
}

/** The names in a directory; none when it cannot be read. */
function entriesOf(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

/** Every run record of a registry, read straight from disk (unreadable ones are skipped). */
export function recordsOf(registry: string): RecordLite[] {
  const agents = join(registry, 'agents');
  const out: RecordLite[] = [];
  for (const n of entriesOf(agents)) {
    const runs = entriesOf(join(agents, n)).filter((r) => /^[0-9]+$/.test(r));
    for (const r of runs) {
      const dir = join(agents, n, r);
      try {
        const rec = JSON.parse(readFileSync(join(dir, 'record.json'), 'utf8'));
        let supervisor: Identity | null = rec.supervisor ?? null;
        if (!supervisor) {
          // until the supervisor records itself, the start command keeps its identity in a side file
          try {
            supervisor = JSON.parse(readFileSync(join(dir, 'supervisor.json'), 'utf8'));
          } catch {}
        }
        out.push({ name: rec.name, run: rec.run, status: rec.status, outcome: rec.outcome, supervisor, agentProcess: rec.agentProcess, dir });
      } catch {}
    }
  }
  return out;
}

/** True while some supervisor or agent recorded in the registry is alive (by identity). */
export function anyAlive(registry: string): boolean {
  return recordsOf(registry).some((r) => isAlive(r.supervisor) || isAlive(r.agentProcess));
}

export async function waitQuiet(registry: string, timeoutMs: number): Promise<boolean> {
  const end = monoMs() + timeoutMs;
  while (monoMs() < end) {
    if (!anyAlive(registry)) return true;
    await sleep(10);
  }
  return !anyAlive(registry);
}

// -------------------------------------------------------------------------------------- clean-up

const areas = new Set<string>();

export function ownArea(dir: string): void {
  areas.add(dir);
}

/**
 * Ends every process the bench started that still runs — its direct children, then every supervisor and
 * agent (its process group) recorded in its registries, each checked by identity first — and removes the
 * temp areas. Never signals anything by name.
 */
export function cleanup(): { killed: number } {
  let killed = 0;
  for (const c of children) {
    if (c.pid !== undefined && c.exitCode === null && c.signalCode === null) {
      try {
        process.kill(c.pid, 'SIGKILL');
        killed++;
      } catch {}
    }
  }
  for (const area of areas) {
    if (!existsSync(area)) continue;
    for (const reg of registriesUnder(area)) {
      for (const r of recordsOf(reg)) {
        if (isAlive(r.supervisor)) {
          try {
            process.kill(r.supervisor!.pid, 'SIGKILL');
            killed++;
          } catch {}
        }
        if (isAlive(r.agentProcess)) {
          const a = r.agentProcess!;
          try {
            // the agent leads its own process group (its own session): end the group it leads
            process.kill(a.pgid === a.pid ? -a.pid : a.pid, 'SIGKILL');
            killed++;
          } catch {}
        }
      }
    }
  }
  // Last resort: a process we started (through a start command) whose command line or SUBAGENT_DIR still
  // points into one of our temp areas — e.g. a supervisor that died before its identity was recorded.
  for (const pid of descendantsOfAreas()) {
    try {
      process.kill(pid, 'SIGKILL');
      killed++;
    } catch {}
  }
  for (const area of areas) {
    removeTree(area);
    areas.delete(area);
  }
  return { killed };
}

/** rm -rf (much faster than fs.rmSync on trees of tens of thousands of files), fs.rmSync as a fallback. */
export function removeTree(path: string): void {
  const r = spawnSync('rm', ['-rf', '--', path], { stdio: 'ignore' });
  if (r.status !== 0 || existsSync(path)) {
    try {
      rmSync(path, { recursive: true, force: true, maxRetries: 3 });
    } catch {}
  }
}

function descendantsOfAreas(): number[] {
  const out: number[] = [];
  if (areas.size === 0) return out;
  let pids: string[] = [];
  try {
    pids = readdirSync('/proc').filter((p) => /^[0-9]+$/.test(p));
  } catch {
    return out;
  }
  for (const p of pids) {
    const pid = Number(p);
    if (pid === process.pid) continue;
    let text = '';
    try {
      text = readFileSync(`/proc/${pid}/cmdline`, 'latin1');
      text +=
        '\0' +
        readFileSync(`/proc/${pid}/environ`, 'latin1')
          .split('\0')
          .filter((e) => e.startsWith('SUBAGENT_DIR='))
          .join('\0');
    } catch {}
    if ([...areas].some((a) => text.includes(a + '/')) && procStat(pid) !== null) out.push(pid);
  }
  return out;
}

function registriesUnder(area: string): string[] {
  return entriesOf(area)
    .filter((e) => existsSync(join(area, e, 'agents')))
    .map((e) => join(area, e));
}
