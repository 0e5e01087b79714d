/**
 * `make bench` — the benchmark suite. It measures every row of the targets' table against
 * its floor in the same run (ratios and counts: the machine is noisy), with the fast paths on (the default)
 * and with all of them off (the plain paths), measures each fast path's gain A/B, interleaved, repeats the
 * main rows on other Nodes, prints a table, and writes docs/benchmarks.md with the machine, the date, the
 * method of each row and the figures, plus a CPU profile summary to guide optimisation.
 *
 * Environment:
 *   BENCH_QUICK=1              fewer repetitions, to try the bench itself out (the figures are rough)
 *   BENCH_ONLY="floor,row 2"   run only the sections whose titles start with one of these; the page is not
 *                              written (titles: floor, row 1 … row 7, fast paths, node <version>, profile)
 *   SUBAGENT_BENCH_NODES       other Nodes to measure beside the main one, colon-separated, each a `node`
 *                              binary or the directory that holds it, e.g.
 *                              SUBAGENT_BENCH_NODES=/opt/node22/bin/node:/opt/node26/bin/node
 *                              Each gets the main rows (floor, start, status 1 000 / 10 000, wait latency,
 *                              supervisor memory) with that Node first on PATH. Unset: only the main Node.
 *
 * The main Node is the `node` first on PATH (Node 24 under `make bench`): every row, the plain paths and the
 * A/B of the fast paths run on it. The bin/* shims are `#!/usr/bin/env node`, and a supervisor runs on the
 * Node that started it, so putting a Node first on the children's PATH is all it takes to measure it.
 * The fast paths (lib/base/fast-paths.ts) are switched by SUBAGENT_FAST_PATHS in each child's environment; the
 * caller's own value, NODE_OPTIONS and Node's compile-cache variables are not passed on.
 *
 * It runs the real executables of bin/ on real registries in a temp directory, with the built-in `shell`
 * CLI. It never fails on a number (exit 0 unless the bench itself breaks), and it ends every process it
 * started (by pid, identity-checked) and removes every temp file, also on Ctrl-C.
 */
import { spawnSync } from 'node:child_process';
import {
  closeSync,
  constants,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  linkSync,
  readlinkSync,
  realpathSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { cpus, freemem, loadavg, release, tmpdir, totalmem } from 'node:os';
import { randomUUID } from 'node:crypto';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { summarise, type ProfileSummary } from './profile.js';
import { slurmRow } from './slurm.js';
import {
  BENCH_DIST,
  BIN,
  ROOT,
  cleanEnv,
  cleanup,
  cpuMsOf,
  fmtMB,
  fmtMs,
  fmtRatio,
  inotifyWatches,
  isAlive,
  json,
  max,
  mean,
  median,
  medianDiffInterval,
  memoryOf,
  monoMs,
  nodeBin,
  ownArea,
  procStat,
  quantile,
  realtimeNs,
  recordsOf,
  removeTree,
  run,
  sleep,
  useNode,
  verb,
  waitQuiet,
  which,
  type Done,
} from './util.js';

// ------------------------------------------------------------------------------------------ set-up

const QUICK = process.env.BENCH_QUICK === '1';
const ONLY = (process.env.BENCH_ONLY ?? '')
  .split(',')
  .map((s) => s.trim())
  .filter(Boolean);
const loadAtStart = loadavg()
  .map((x) => x.toFixed(2))
  .join(' ');
const busyAtStart = loadavg()[0]! > cpus().length * 0.75;
const benchStart = monoMs();
const AREA = mkdtempSync(join(tmpdir(), 'subagents-bench-'));
ownArea(AREA);

let cleaned = false;
function finalCleanup(): void {
  if (cleaned) return;
  cleaned = true;
  const { killed } = cleanup();
  if (killed) log(`clean-up: ended ${killed} leftover process${killed === 1 ? '' : 'es'}`);
}
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.on(sig, () => {
    process.stderr.write(`\nbench: ${sig}: cleaning up\n`);
    finalCleanup();
    process.exit(130);
  });
}
process.on('exit', finalCleanup);

function log(message: string): void {
  process.stderr.write(`[bench ${((monoMs() - benchStart) / 1000).toFixed(1).padStart(5)} s] ${message}\n`);
}

const fmtDelta = (kb: number) => (Math.abs(kb) < 52 ? '±' : kb > 0 ? '+' : '−') + fmtMB(Math.abs(kb));
const fmtSignedMs = (ms: number) => (Number.isFinite(ms) ? `${ms >= 0 ? '+' : '−'}${fmtMs(Math.abs(ms))}` : 'n/a');
const fmtPct = (x: number) => (Number.isFinite(x) ? `${x >= 0 ? '+' : '−'}${Math.abs(x * 100).toFixed(1)} %` : 'n/a');
const q = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;
const pad = (i: number, w = 3) => String(i).padStart(w, '0');

log('tools: test/bench/install-tools.sh');
spawnSync('bash', [join(ROOT, 'test/bench/install-tools.sh')], { stdio: ['ignore', 'inherit', 'inherit'] });
const HYPERFINE = which('hyperfine');
const GNU_TIME = existsSync('/usr/bin/time') ? '/usr/bin/time' : null;
const hyperfineVersion = HYPERFINE ? spawnSync(HYPERFINE, ['--version'], { encoding: 'utf8' }).stdout.trim() : null;
log(`hyperfine: ${hyperfineVersion ?? 'missing (own timing loop)'}; /usr/bin/time: ${GNU_TIME ? 'yes' : 'missing (getrusage preload)'}`);

const problems: string[] = [];

// ------------------------------------------------------------------------------------------- Nodes

interface NodeBin {
  exec: string;
  version: string;
  /** a short tag for file names: v24 */
  tag: string;
}

function nodeAt(path: string): NodeBin | null {
  let exec = resolve(path);
  try {
    if (statSync(exec).isDirectory()) exec = join(exec, 'node');
    statSync(exec);
  } catch {
    return null;
  }
  const r = spawnSync(exec, ['-p', 'process.version'], { encoding: 'utf8', env: cleanEnv() });
  const version = r.stdout?.trim() ?? '';
  if (r.status !== 0 || !/^v\d+/.test(version)) return null;
  return { exec, version, tag: version.split('.')[0]! };
}

const onPath = which('node');
const MAIN: NodeBin = (onPath && nodeAt(onPath)) || nodeAt(process.execPath)!;
if (!onPath) problems.push(`no \`node\` on PATH: the bench measures the Node running it (${process.execPath})`);
useNode(MAIN.exec);
const mainIsSelf = (() => {
  try {
    return realpathSync(MAIN.exec) === realpathSync(process.execPath);
  } catch {
    return false;
  }
})();
const OTHERS: NodeBin[] = [];
for (const p of (process.env.SUBAGENT_BENCH_NODES ?? '')
  .split(':')
  .map((s) => s.trim())
  .filter(Boolean)) {
  const n = nodeAt(p);
  if (!n) problems.push(`SUBAGENT_BENCH_NODES: \`${p}\` is not a Node that runs (skipped)`);
  else if (n.version === MAIN.version || OTHERS.some((o) => o.version === n.version))
    log(`SUBAGENT_BENCH_NODES: ${p} is ${n.version}, already measured (skipped)`);
  else OTHERS.push(n);
}
log(`main Node: ${MAIN.version} (${MAIN.exec}); beside it: ${OTHERS.map((o) => o.version).join(', ') || 'none (SUBAGENT_BENCH_NODES unset)'}`);

// ------------------------------------------------------------------------------------- fast paths

/** The fast paths lib/base/fast-paths.ts names (read from its source: the bench does not import the product). */
const FAST_PATHS: string[] = (() => {
  try {
    const m = /export type FastPath\s*=\s*([^;]+);/.exec(readFileSync(join(ROOT, 'lib/base/fast-paths.ts'), 'utf8'));
    return m ? [...m[1]!.matchAll(/'([a-z0-9-]+)'/g)].map((x) => x[1]!) : [];
  } catch {
    return [];
  }
})();
if (!FAST_PATHS.length) problems.push('no fast path found in lib/base/fast-paths.ts (`export type FastPath = …`): the A/B section has nothing to turn off');
/** SUBAGENT_FAST_PATHS=0: every fast path off, the plain paths. */
const PLAIN: Record<string, string> = { SUBAGENT_FAST_PATHS: '0' };
/** Every fast path on but one. */
const without = (fp: string): Record<string, string> => ({ SUBAGENT_FAST_PATHS: FAST_PATHS.filter((x) => x !== fp).join(',') || '0' });
const shellEnv = (env: Record<string, string>) =>
  Object.entries(env)
    .map(([k, v]) => `${k}=${q(v)} `)
    .join('');

// ------------------------------------------------------------------------------------------ results

interface Row {
  what: string;
  target: string;
  on: string;
  plain: string | null;
  floor: string;
  verdict: string;
}
const rows: Row[] = [];
/** Where a target is missed: by how much, and why. */
const misses: string[] = [];
const methods: Array<{ title: string; text: string }> = [];
const details: string[] = [];

/** The main rows of one Node, for the table of Nodes side by side. */
interface NodeRows {
  node: NodeBin;
  floor?: number;
  start?: { ms: number; ratio: number };
  status?: Record<number, { ms: number; ratio: number }>;
  wait?: { median: number; p95: number; n: number };
  memory?: { rssAlone: number; pssMean: number; n: number; idleRss: number; idlePss: number; idleAnon: number; anonMean: number };
}
const nodeRows = new Map<string, NodeRows>();
const rowsOf = (n: NodeBin): NodeRows => {
  let r = nodeRows.get(n.version);
  if (!r) {
    r = { node: n };
    nodeRows.set(n.version, r);
  }
  return r;
};

function ratioVerdict(r: number, limit: number): string {
  if (!Number.isFinite(r)) return 'n/a';
  return r <= limit
    ? 'meets'
    : `**misses** by ${(r - limit).toFixed(2)} × (${fmtRatio(r)} vs ≤ ${limit} ×, ${(((r - limit) / limit) * 100).toFixed(0)} % over)`;
}

async function section(title: string, body: () => Promise<void>): Promise<void> {
  if (ONLY.length && !ONLY.some((o) => title.startsWith(o))) return;
  const t0 = monoMs();
  log(`${title} …`);
  try {
    await body();
  } catch (err) {
    const msg = (err as Error).stack ?? String(err);
    problems.push(`${title}: ${(err as Error).message}`);
    log(`${title}: FAILED: ${msg}`);
  }
  log(`${title}: ${((monoMs() - t0) / 1000).toFixed(1)} s`);
}

// ------------------------------------------------------------------------------------ timing helpers

interface Timing {
  name: string;
  mean: number;
  median: number;
  stddev: number;
  min: number;
  max: number;
  times: number[];
  failures: number;
  /** warm-up runs (not timed, but run: a start's warm-ups are starts too) */
  warmups: number;
}

const FLOOR_CMD = 'node -e 0';

function timingOf(name: string, times: number[], failures: number, warmups: number): Timing {
  const m = mean(times);
  return {
    name,
    mean: m,
    median: median(times),
    stddev: Math.sqrt(mean(times.map((t) => (t - m) ** 2))),
    min: Math.min(...times),
    max: Math.max(...times),
    times,
    failures,
    warmups,
  };
}

/** hyperfine (or, without it, an own loop) over shell commands; times in ms, failures counted. */
async function timeCommands(
  cmds: Array<{ name: string; cmd: string }>,
  o: { runs: number; warmup: number; prepare?: string; rounds?: number },
): Promise<Timing[]> {
  const rounds = o.rounds ?? 1;
  if (rounds > 1) {
    // several hyperfine invocations, each [floor, command, …] with runs/rounds runs: slow drifts of the
    // machine's load then hit every command alike instead of favouring the one measured in a quiet spell
    const parts: Timing[][] = [];
    for (let r = 0; r < rounds; r++)
      parts.push(await timeCommands(cmds, { ...o, rounds: 1, runs: Math.ceil(o.runs / rounds), warmup: r === 0 ? o.warmup : 1 }));
    return cmds.map((c, i) =>
      timingOf(
        c.name,
        parts.flatMap((p) => p[i]!.times),
        parts.reduce((a, p) => a + p[i]!.failures, 0),
        parts.reduce((a, p) => a + p[i]!.warmups, 0),
      ),
    );
  }
  if (HYPERFINE) {
    const out = join(AREA, `hyperfine-${randomUUID()}.json`);
    const args = ['--style', 'none', '--ignore-failure', '--export-json', out, '--runs', String(o.runs), '--warmup', String(o.warmup)];
    if (o.prepare) args.push('--prepare', o.prepare);
    for (const c of cmds) args.push('-n', c.name, c.cmd);
    const d = await run(HYPERFINE, args, { cwd: AREA, env: cleanEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    if (d.code !== 0 || !existsSync(out)) throw new Error(`hyperfine failed (${d.code}): ${d.stderr.slice(-2000)}`);
    const res = JSON.parse(readFileSync(out, 'utf8')).results as Array<Record<string, any>>;
    return res.map((r, i) =>
      timingOf(
        cmds[i]!.name,
        (r.times as number[]).map((t) => t * 1000),
        ((r.exit_codes as Array<number | null> | undefined) ?? []).filter((c) => c !== 0).length,
        o.warmup,
      ),
    );
  }
  const out: Timing[] = [];
  for (const c of cmds) {
    const times: number[] = [];
    let failures = 0;
    for (let i = 0; i < o.warmup + o.runs; i++) {
      if (o.prepare) await run('sh', ['-c', o.prepare], { cwd: AREA, env: cleanEnv(), stdio: 'ignore' });
      const d = await run('sh', ['-c', c.cmd], { cwd: AREA, env: cleanEnv(), stdio: 'ignore' });
      if (i >= o.warmup) {
        times.push(d.t1 - d.t0);
        if (d.code !== 0) failures++;
      }
    }
    out.push(timingOf(c.name, times, failures, o.warmup));
  }
  return out;
}

function timingText(t: Timing): string {
  return `mean ${fmtMs(t.mean)} ± ${fmtMs(t.stddev)}, median ${fmtMs(t.median)}, min ${fmtMs(t.min)}, max ${fmtMs(t.max)} (${t.times.length} runs${t.failures ? `, ${t.failures} failed` : ''})`;
}

/**
 * NODE_EXTRA_CA_CERTS, when the machine sets it, may make every node parse that CA bundle while it starts
 * (Node 20 did, ~35 ms on the test VM): a constant that would inflate the floor and flatter every ratio.
 * Rows 1 and 2 are therefore timed again without it, and both ratios are printed; the verdicts stay on the
 * machine as it is. Null when the variable is not set (then there is nothing to take away).
 */
async function timedWithoutCaCerts(
  name: string,
  cmd: string,
  o: { runs: number; warmup: number; prepare?: string; rounds: number },
): Promise<{ floor: Timing; cmd: Timing } | null> {
  if (!process.env.NODE_EXTRA_CA_CERTS) return null;
  const unset = 'unset NODE_EXTRA_CA_CERTS; ';
  const [floor, timed] = await timeCommands(
    [
      { name: 'node -e 0 (no NODE_EXTRA_CA_CERTS)', cmd: unset + FLOOR_CMD },
      { name: `${name} (no NODE_EXTRA_CA_CERTS)`, cmd: unset + cmd },
    ],
    o,
  );
  return { floor: floor!, cmd: timed! };
}

/** The table cell's addition and the figures' line for a timedWithoutCaCerts result. */
function withoutCaCertsText(lean: { floor: Timing; cmd: Timing }, name: string): { cell: string; line: string } {
  const ratio = fmtRatio(lean.cmd.median / lean.floor.median);
  return {
    cell: `; without the machine's NODE_EXTRA_CA_CERTS: median ${fmtMs(lean.cmd.median)} vs ${fmtMs(lean.floor.median)} → ${ratio}`,
    line: `without NODE_EXTRA_CA_CERTS (this machine sets it for every process): \`node -e 0\` ${timingText(lean.floor)}; \`${name}\` ${timingText(lean.cmd)}; ratio of medians **${ratio}**`,
  };
}

// ------------------------------------------------------------------------------ registry helpers

function recordFile(registry: string, name: string, runNo = 1): string {
  return join(registry, 'agents', name.replaceAll('/', '+'), String(runNo), 'record.json');
}

function readRecord(registry: string, name: string, runNo = 1): Record<string, any> | null {
  try {
    return JSON.parse(readFileSync(recordFile(registry, name, runNo), 'utf8'));
  } catch {
    return null;
  }
}

async function until(cond: () => boolean, timeoutMs: number, stepMs = 5): Promise<boolean> {
  const end = monoMs() + timeoutMs;
  while (monoMs() < end) {
    if (cond()) return true;
    await sleep(stepMs);
  }
  return cond();
}

async function start(registry: string, name: string, prompt: string, env: Record<string, string> = {}): Promise<Done> {
  const d = await verb('start-subagent', ['--registry', registry, '--cli', 'shell', '--name', name, '--prompt', prompt], {
    cwd: AREA,
    env: cleanEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  if (json(d)?.ok !== true) throw new Error(`start-subagent ${name} failed (${d.code}): ${d.stdout.slice(0, 500)} ${d.stderr.slice(0, 500)}`);
  return d;
}

async function waitTerminal(registry: string, sel: string[], timeoutSec: number): Promise<any> {
  const d = await verb('status', ['--registry', registry, '--wait-terminal', ...sel, '--timeout', String(timeoutSec)], {
    cwd: AREA,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const j = json(d);
  if (j?.ok !== true) throw new Error(`status --wait-terminal ${sel.join(' ')} failed (${d.code}): ${d.stdout.slice(0, 500)} ${d.stderr.slice(0, 300)}`);
  return j;
}

function mkfifo(path: string): void {
  const r = spawnSync('mkfifo', [path]);
  if (r.status !== 0) throw new Error(`mkfifo ${path} failed: ${r.stderr}`);
}

/** Opens the gate of a script blocked in `read _ < fifo`: open for writing (once it reads), close (EOF). */
async function openGate(fifo: string, timeoutMs = 10_000): Promise<boolean> {
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
async function waiterReady(pid: number): Promise<'inotify' | 'idle' | 'timeout' | 'exited'> {
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
async function measured(cmd: string[], env: Record<string, string> = {}): Promise<{ d: Done; wallMs: number; maxRssKb: number }> {
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
function timedVerb(v: string, args: string[], env: Record<string, string>, keepStdout: boolean): Promise<Done> {
  const devNull = keepStdout ? null : openSync('/dev/null', 'w');
  const p = run(join(BIN, v), args, { cwd: AREA, env: cleanEnv(env), stdio: ['ignore', devNull ?? 'pipe', 'pipe'] });
  if (devNull !== null) closeSync(devNull);
  return p;
}

// ---------------------------------------------------------------------------- shared registries

let templateDir = '';
/** One real finished run: the template of the big registries. */
async function templateRun(): Promise<string> {
  if (templateDir) return templateDir;
  const reg = join(AREA, 'template');
  await start(reg, 'template', 'echo "hello from the template run"');
  await waitTerminal(reg, ['--name', 'template'], 30);
  await waitQuiet(reg, 10_000);
  templateDir = reg;
  return reg;
}

const bigRegistries = new Map<number, { dir: string; buildMs: number; listed: number; done: number; problems: number; outMB: number }>();
/**
 * A registry of n finished runs (copies of the template run with their own names and run ids), built once
 * and kept for the rest of the bench (the A/B and the other Nodes list it too), its status cache filled.
 */
async function bigRegistry(n: number): Promise<{ dir: string; buildMs: number; listed: number; done: number; problems: number; outMB: number }> {
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
  const buildMs = monoMs() - t0;
  // Finished runs are listed from the status cache once their records are 2 s old (docs/design.md, "The
  // status cache"): the check listing below waits for that and fills the cache.
  await sleep(2200);
  const check = await verb('status', ['--registry', reg], { cwd: AREA, stdio: ['ignore', 'pipe', 'pipe'] });
  const j = json(check);
  const listed = Array.isArray(j?.agents) ? j.agents.length : 0;
  const done = Array.isArray(j?.agents) ? j.agents.filter((a: any) => a.status === 'done').length : 0;
  const probs = Array.isArray(j?.problems) ? j.problems.length : 0;
  if (listed !== n || probs) problems.push(`status registry of ${n}: status listed ${listed} of ${n} runs (${probs} problems)`);
  const out = { dir: reg, buildMs, listed, done, problems: probs, outMB: check.stdout.length / 1e6 };
  bigRegistries.set(n, out);
  return out;
}

// --------------------------------------------------------------------------------------- the rows
//
// Each row is a function of the Node it measures: on the main Node (main = true) it measures the fast
// paths on and the plain paths, and writes the results table; on another Node only the default (fast
// paths on), for the table of Nodes side by side.

/** Figures lines of the other Nodes, per version. */
const nodeDetails = new Map<string, string[]>();
const noteFor = (node: NodeBin, line: string) => {
  const l = nodeDetails.get(node.version) ?? [];
  l.push(line);
  nodeDetails.set(node.version, l);
};

async function floorRow(node: NodeBin, main: boolean): Promise<void> {
  const [t] = await timeCommands([{ name: 'node -e 0', cmd: FLOOR_CMD }], { runs: QUICK ? 10 : 20, warmup: 3 });
  rowsOf(node).floor = t!.median;
  if (!main) return noteFor(node, `- \`node -e 0\`: ${timingText(t!)}`);
  details.push(
    `### Floor: \`node -e 0\` (${node.version})\n\n${timingText(t!)}. Each row below measures its own floor again, right next to it, and uses that one for its ratio.`,
  );
  methods.push({
    title: 'Floor',
    text: "`node -e 0` under hyperfine (3 warm-up runs, then 20 runs), through the same shell as every timed command (hyperfine subtracts the shell's own start-up).",
  });
}

// Row 1 ---------------------------------------------------------------------------------------------
async function startRow(node: NodeBin, main: boolean): Promise<void> {
  const R = join(AREA, `start-${node.tag}`);
  const runs = QUICK ? 8 : main ? 30 : 15;
  const rounds = QUICK ? 1 : main ? 5 : 3;
  const warmup = 3;
  const prepare = `node ${q(join(BENCH_DIST, 'quiesce.js'))} ${q(R)} 10000`;
  const startCmd = (letter: string) => `${q(join(BIN, 'start-subagent'))} --registry ${q(R)} --cli shell --name "${letter}$$" --prompt true >/dev/null`;
  const cmds = [
    { name: 'node -e 0', cmd: FLOOR_CMD },
    { name: 'start-subagent', cmd: startCmd('s') },
  ];
  if (main) cmds.push({ name: 'start-subagent (plain paths)', cmd: shellEnv(PLAIN) + startCmd('p') });
  const [floor, on, plain] = await timeCommands(cmds, { runs, warmup, prepare, rounds });
  const lean = main ? await timedWithoutCaCerts('start-subagent', startCmd('l'), { runs: QUICK ? 6 : 20, warmup: 1, prepare, rounds: QUICK ? 1 : 4 }) : null;
  await waitQuiet(R, 20_000);
  const recs = recordsOf(R);
  const ok = recs.filter((r) => r.status === 'done' && r.outcome === 'succeeded').length;
  const expected = [on!, plain, lean?.cmd].reduce((a, t) => a + (t ? t.times.length + t.warmups : 0), 0);
  removeTree(R);
  if (recs.length !== expected) problems.push(`row 1 (${node.version}): ${recs.length} of ${expected} starts were recorded`);
  const ratio = (t: Timing) => t.median / floor!.median;
  rowsOf(node).start = { ms: on!.median, ratio: ratio(on!) };
  const checked = `${recs.length} of ${expected} starts recorded, ${ok} ended \`done\`/\`succeeded\``;
  if (!main)
    return noteFor(node, `- \`start-subagent\`: ${timingText(on!)}; floor ${timingText(floor!)}; ratio of medians **${fmtRatio(ratio(on!))}**; ${checked}`);
  const cell = (t: Timing) =>
    `median ${fmtMs(t.median)} → **${fmtRatio(ratio(t))}** (mean ${fmtRatio(t.mean / floor!.mean)}, min ${fmtRatio(t.min / floor!.min)})`;
  const leanText = lean ? withoutCaCertsText(lean, 'start-subagent') : null;
  rows.push({
    what: '`start-subagent --cli shell`, whole process',
    target: '≤ 1.3 × `node -e 0`',
    on: cell(on!) + (leanText?.cell ?? ''),
    plain: cell(plain!),
    floor: `median ${fmtMs(floor!.median)} (mean ${fmtMs(floor!.mean)})`,
    verdict: `on: ${ratioVerdict(ratio(on!), 1.3)}; plain: ${ratioVerdict(ratio(plain!), 1.3)}`,
  });
  const startMisses = (
    [
      [on!, 'fast paths on'],
      [plain!, 'plain paths'],
    ] as const
  ).filter(([t]) => ratio(t) > 1.3);
  if (startMisses.length)
    misses.push(
      `\`start-subagent\`: ${startMisses.map(([t, what]) => `${what} ${fmtRatio(ratio(t))} of \`node -e 0\` (${fmtMs(t.median)} vs ${fmtMs(floor!.median)}: ${(ratio(t) - 1.3).toFixed(2)} × over the 1.3 × target, ${fmtMs(t.median - 1.3 * floor!.median)} too slow)`).join('; ')}. ` +
        'A start is a whole Node process (the floor) plus loading its bundle, creating the run\'s directory and record (fsync\'d) and spawning the supervisor; "Where the time goes" below shows the shares.',
    );
  details.push(
    `### 1. \`start-subagent\`, whole process\n\n` +
      `- \`node -e 0\`: ${timingText(floor!)}\n- \`start-subagent\` (fast paths on): ${timingText(on!)}\n- \`start-subagent\` (plain paths): ${timingText(plain!)}\n` +
      `- ratio of medians **${fmtRatio(ratio(on!))}** on, **${fmtRatio(ratio(plain!))}** plain; of minimums ${fmtRatio(on!.min / floor!.min)} on, ${fmtRatio(plain!.min / floor!.min)} plain (target ≤ 1.3 ×)\n` +
      (leanText ? `- ${leanText.line}\n` : '') +
      `- ${checked}${on!.failures + plain!.failures ? `; ${on!.failures + plain!.failures} timed starts exited non-zero` : ''}`,
  );
  methods.push({
    title: '1. start-subagent',
    text:
      'hyperfine, `node -e 0`, `bin/start-subagent --registry R --cli shell --name "s$$" --prompt true` and the same with `SUBAGENT_FAST_PATHS=0` in one invocation ' +
      `(${warmup} warm-up + ${runs} runs each, in ${rounds} rounds of [floor, start, start plain] so that drifts of the machine's load hit all alike; \`$$\` of hyperfine's per-run shell makes every name unique). ` +
      "The supervisor a start spawns outlives the command, so hyperfine's `--prepare` (run before every timed run of every command, untimed) " +
      'waits until every supervisor and agent recorded in R has exited (identity-checked via /proc): each start is timed on a machine ' +
      "its predecessor's supervisor no longer loads. Afterwards every start is checked to be recorded and `done`/`succeeded`. " +
      'When the environment sets NODE_EXTRA_CA_CERTS (this machine does, for every process), floor and start are timed again with it unset ' +
      '(20 runs in 4 rounds): Node 20 parsed that CA bundle while it started, a constant that made the floor slower and every ratio look better; these figures show whether this Node still does.',
  });
}

// Row 2 ---------------------------------------------------------------------------------------------
async function statusRow(node: NodeBin, main: boolean): Promise<void> {
  const figures: string[] = [];
  for (const n of [1000, 10000]) {
    const big = await bigRegistry(n);
    const dir = big.dir;
    const runs = QUICK ? 5 : n === 1000 ? (main ? 40 : 20) : main ? 8 : 6;
    const rounds = QUICK ? 1 : n === 1000 ? (main ? 10 : 4) : 2;
    const statusCmd = `${q(join(BIN, 'status'))} --registry ${q(dir)} >/dev/null`;
    const cmds = [
      { name: 'node -e 0', cmd: FLOOR_CMD },
      { name: `status ${n}`, cmd: statusCmd },
    ];
    if (main) cmds.push({ name: `status ${n} (plain paths)`, cmd: shellEnv(PLAIN) + statusCmd });
    const [floor, on, plain] = await timeCommands(cmds, { runs, warmup: n === 1000 ? 2 : 1, rounds });
    const ratio = (t: Timing) => t.median / floor!.median;
    const limit = n === 1000 ? 1.5 : 5;
    const forNode = rowsOf(node);
    forNode.status ??= {};
    forNode.status[n] = { ms: on!.median, ratio: ratio(on!) };
    if (!main) {
      noteFor(node, `- \`status\` with ${n} runs: ${timingText(on!)}; floor ${timingText(floor!)}; ratio of medians **${fmtRatio(ratio(on!))}**`);
      continue;
    }
    // the same listing with no cache (each timed run first deletes it): what the first listing after the runs ended costs
    const [coldFloor, cold] = await timeCommands(
      [
        { name: 'node -e 0', cmd: FLOOR_CMD },
        { name: `status ${n} (no cache)`, cmd: statusCmd },
      ],
      { runs: QUICK ? 3 : n === 1000 ? 10 : 4, warmup: 0, rounds: 1, prepare: `rm -f ${q(join(dir, 'status-cache'))}` },
    );
    const lean = await timedWithoutCaCerts('status', statusCmd, { runs: QUICK ? 4 : n === 1000 ? 20 : 6, warmup: 1, rounds: QUICK ? 1 : n === 1000 ? 4 : 2 });
    const leanText = lean ? withoutCaCertsText(lean, 'status') : null;
    const cell = (t: Timing) =>
      `median ${fmtMs(t.median)} → **${fmtRatio(ratio(t))}** (mean ${fmtRatio(t.mean / floor!.mean)}, min ${fmtRatio(t.min / floor!.min)})`;
    const count = n.toLocaleString('en-US').replace(',', ' ');
    rows.push({
      what: `\`status\` with ${count} runs in the registry`,
      target: `≤ ${limit} × \`node -e 0\``,
      on: cell(on!) + (leanText?.cell ?? ''),
      plain: cell(plain!),
      floor: `median ${fmtMs(floor!.median)}`,
      verdict: `on: ${ratioVerdict(ratio(on!), limit)}; plain: ${ratioVerdict(ratio(plain!), limit)}`,
    });
    const statusMisses = (
      [
        [
          on!,
          'fast paths on',
          "done runs come from the status cache; what remains is Node's start-up, the bundle, a stat per run to check the cache, and printing the listing",
        ],
        [plain!, 'plain paths', "without the status cache every run's record.json is read and parsed, and its view rendered, on every listing"],
      ] as const
    ).filter(([t]) => ratio(t) > limit);
    if (statusMisses.length)
      misses.push(
        `\`status\` with ${count} runs: ${statusMisses.map(([t, what, why]) => `${what} ${fmtRatio(ratio(t))} of \`node -e 0\` (${fmtMs(t.median)} vs ${fmtMs(floor!.median)}: ${(ratio(t) - limit).toFixed(2)} × over the ${limit} × target, ${fmtMs(t.median - limit * floor!.median)} too slow; ${why})`).join('; ')}.`,
      );
    figures.push(
      `- ${n} runs (registry built in ${fmtMs(big.buildMs, 0)}; checked: status lists ${big.listed}, ${big.done} \`done\`, ${big.problems} problems; output ${big.outMB.toFixed(1)} MB)\n` +
        `  - \`node -e 0\`: ${timingText(floor!)}\n  - \`status\` (fast paths on): ${timingText(on!)}\n  - \`status\` (plain paths): ${timingText(plain!)}\n` +
        `  - ratio of medians **${fmtRatio(ratio(on!))}** on, **${fmtRatio(ratio(plain!))}** plain; of minimums ${fmtRatio(on!.min / floor!.min)} on, ${fmtRatio(plain!.min / floor!.min)} plain (target ≤ ${limit} ×)\n` +
        (leanText ? `  - ${leanText.line}\n` : '') +
        `  - the first listing after the runs ended (no status cache yet: every record read, the cache written): median ${fmtMs(cold!.median)} → ${fmtRatio(cold!.median / coldFloor!.median)} (floor median ${fmtMs(coldFloor!.median)})`,
    );
  }
  if (!main) return;
  details.push(`### 2. \`status\` on big registries\n\n${figures.join('\n')}`);
  methods.push({
    title: '2. status with 1 000 / 10 000 runs',
    text:
      'One real run (`--cli shell`, `echo …`) is started and waited for; its run directory (record.json, prompt, events.log, stderr.log, ' +
      "supervisor.log) is the template. Each big registry is `agents/run-NNNNN/1/` × N: hard links to the template's files, and its own record.json with " +
      'its own `name` and a fresh `runId` (same format, a finished run). Once the records are 2 s old (the age at which the status cache keeps a finished run), one `status` must list all N runs, with no ' +
      "`problems` (it fills the cache). Then hyperfine times `node -e 0`, `bin/status --registry R >/dev/null` and the same with `SUBAGENT_FAST_PATHS=0` (40 runs each at 1 000 in 10 rounds, as this row sits closest to its target, 8 at 10 000 in 2 rounds). The verdict uses the ratio of medians; the ratio of minimums (each command's least disturbed run) is shown too, as the machine may be shared. The first listing after the runs ended (no cache yet) is timed too, 10 runs (4 at 10 000) each after deleting `status-cache` (hyperfine `--prepare`); it is not the row's verdict. With NODE_EXTRA_CA_CERTS set (as on this machine), floor and listing are timed again with it unset (20 runs at 1 000 in 4 rounds, 6 at 10 000), as in row 1.",
  });
}

// Row 3 ---------------------------------------------------------------------------------------------
async function waitRow(node: NodeBin, main: boolean): Promise<void> {
  const R = join(AREA, `wait-${node.tag}`);
  const gates = join(AREA, `gates-wait-${node.tag}`);
  mkdirSync(gates);
  const variants: Array<{ key: 'on' | 'plain'; env: Record<string, string> }> = main
    ? [
        { key: 'on', env: {} },
        { key: 'plain', env: PLAIN },
      ]
    : [{ key: 'on', env: {} }];
  const N = QUICK ? 8 : main ? 40 : 20; // per variant
  const W = 2; // warm-up iterations per variant, discarded
  const budgetMs = QUICK ? 30_000 : main ? 100_000 : 35_000;
  const lat = { on: [] as number[], plain: [] as number[] };
  const readiness = new Map<string, number>();
  let bad = 0;
  // a time budget keeps the whole bench within minutes on a crowded machine (at least 15 samples each)
  const budgetEnd = monoMs() + budgetMs;
  let cut = false;
  for (let i = 0; i < (N + W) * variants.length; i++) {
    const v = variants[i % variants.length]!;
    if (i % variants.length === 0 && variants.every((x) => lat[x.key].length >= 15) && monoMs() > budgetEnd) {
      cut = true;
      break;
    }
    const name = `lat-${pad(i)}`;
    const fifo = join(gates, name);
    const stamp = join(gates, `${name}.stamp`);
    mkfifo(fifo);
    await start(R, name, `read _ < ${q(fifo)}; date +%s%N > ${q(stamp)}`, v.env);
    if (!(await until(() => readRecord(R, name)?.status === 'running', 15_000))) throw new Error(`${name} never reached running`);
    const waiter = verb('status', ['--registry', R, '--wait-terminal', '--name', name, '--timeout', '60'], {
      cwd: AREA,
      env: cleanEnv(v.env),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const how = await waiterReady(waiter.child.pid!);
    readiness.set(how, (readiness.get(how) ?? 0) + 1);
    if (!(await openGate(fifo))) throw new Error(`the gate of ${name} never opened`);
    const d = await waiter;
    const j = json(d);
    let stampNs: bigint | null = null;
    try {
      stampNs = BigInt(readFileSync(stamp, 'utf8').trim());
    } catch {}
    if (j?.ok !== true || j.agents?.[0]?.status !== 'done' || stampNs === null) {
      bad++;
      problems.push(`row 3 (${node.version}): ${name}: waiter said ${d.stdout.slice(0, 200)} (stamp ${stampNs})`);
    } else if (i >= W * variants.length) lat[v.key].push(Number(d.exitNs - stampNs) / 1e6);
    await waitQuiet(R, 10_000);
  }
  removeTree(R);
  removeTree(gates);
  const stats = (xs: number[]) => ({ med: median(xs), p95: quantile(xs, 0.95) });
  const on = stats(lat.on);
  rowsOf(node).wait = { median: on.med, p95: on.p95, n: lat.on.length };
  const cutText = cut ? `; stopped short of ${N} each by the ${budgetMs / 1000} s time budget` : '';
  if (!main)
    return noteFor(
      node,
      `- \`status --wait-terminal\` latency: ${lat.on.length} runs${cutText}: median **${fmtMs(on.med)}**, p95 **${fmtMs(on.p95)}**, max ${fmtMs(max(lat.on))}`,
    );
  const plain = stats(lat.plain);
  const verdictOf = (s: { med: number; p95: number }, xs: number[]) => {
    if (!xs.length) return 'n/a';
    if (s.med <= 30 && s.p95 <= 100) return 'meets';
    return `**misses**: ${[s.med > 30 ? `median ${fmtMs(s.med - 30)} over 30 ms` : '', s.p95 > 100 ? `p95 ${fmtMs(s.p95 - 100)} over 100 ms` : ''].filter(Boolean).join(', ')}`;
  };
  const cell = (s: { med: number; p95: number }, xs: number[]) =>
    `median **${fmtMs(s.med)}**, p95 **${fmtMs(s.p95)}** (max ${fmtMs(max(xs))}, n = ${xs.length})`;
  rows.push({
    what: '`status --wait-terminal`: agent exit → waiter return',
    target: 'median ≤ 30 ms, p95 ≤ 100 ms',
    on: cell(on, lat.on),
    plain: cell(plain, lat.plain),
    floor: 'absolute',
    verdict: `on: ${verdictOf(on, lat.on)}; plain: ${verdictOf(plain, lat.plain)}`,
  });
  const waitMisses = (
    [
      [on, lat.on, 'fast paths on'],
      [plain, lat.plain, 'plain paths'],
    ] as const
  ).filter(([st, xs]) => xs.length && !(st.med <= 30 && st.p95 <= 100));
  if (waitMisses.length)
    misses.push(
      `\`status --wait-terminal\`: ${waitMisses.map(([st, , what]) => `${what} median ${fmtMs(st.med)}, p95 ${fmtMs(st.p95)}`).join('; ')} (targets 30 / 100 ms). ` +
        "The latency is the supervisor noticing its agent's exit and recording it, then the waiter waking on inotify, reading and printing; on a shared machine the p95 is the scheduler's.",
    );
  const sortedText = (xs: number[]) =>
    [...xs]
      .sort((a, b) => a - b)
      .map((x) => x.toFixed(0))
      .join(' ');
  details.push(
    `### 3. \`status --wait-terminal\` latency\n\n` +
      `- fast paths on: ${lat.on.length} runs measured: median **${fmtMs(on.med)}**, p95 **${fmtMs(on.p95)}**, mean ${fmtMs(mean(lat.on))}, min ${fmtMs(Math.min(...lat.on))}, max ${fmtMs(max(lat.on))}; sorted: ${sortedText(lat.on)} ms\n` +
      `- plain paths: ${lat.plain.length} runs measured: median **${fmtMs(plain.med)}**, p95 **${fmtMs(plain.p95)}**, mean ${fmtMs(mean(lat.plain))}, min ${fmtMs(Math.min(...lat.plain))}, max ${fmtMs(max(lat.plain))}; sorted: ${sortedText(lat.plain)} ms\n` +
      `- ${W} warm-up iterations of each discarded${bad ? `, ${bad} failed` : ''}${cutText}; waiter readiness before the gate opened: ${[...readiness].map(([k, v]) => `${k} ${v}`).join(', ')}`,
  );
  methods.push({
    title: '3. status --wait-terminal latency',
    text:
      'One run at a time (the machine otherwise idle), alternately with the fast paths on and with `SUBAGENT_FAST_PATHS=0` (given to the start, hence its supervisor, and to the waiter): a shell run whose script is `read _ < FIFO; date +%s%N > STAMP` is started and ' +
      'seen `running`; then `bin/status --wait-terminal --name N` is spawned and given time to settle (it holds inotify watches — read ' +
      'from /proc/<pid>/fdinfo — and its CPU time has stopped moving, i.e. it sleeps in its wait); then the bench opens the FIFO for ' +
      "writing and closes it, the script reads EOF, stamps the wall clock in ns as its last command and exits. The latency is the bench's " +
      "wall clock at the waiter's exit event (performance.timeOrigin + now, sub-ms) minus that stamp, so it covers: the shell exiting, " +
      'the supervisor noticing and recording `done`, the waiter waking, reading, printing and exiting. 2 warm-up iterations of each are discarded; ' +
      `p95 is nearest-rank; a ${budgetMs / 1000} s budget may cut the samples short (at least 15 of each).`,
  });
}

// Row 4 ---------------------------------------------------------------------------------------------
interface Fanout {
  n: number;
  recorded: number;
  errors: number;
  codes: Map<string, number>;
  finished: number;
  succeeded: number;
  launched: number;
  allBlocked: boolean;
  returned: number;
  perStartMedian: number;
  allDone: number;
  quiet: number;
  waitNote: string;
}
async function fanout(N: number, env: Record<string, string>, tag: string): Promise<Fanout> {
  const R = join(AREA, `fanout-${tag}`);
  // A barrier: every start is a shell blocked reading a FIFO whose only writer is the bench; once all N
  // are blocked there, closing it gives them all EOF at once and each execs its start-subagent.
  const gate = join(AREA, `fanout-gate-${tag}`);
  mkfifo(gate);
  const gateReal = realpathSync(gate);
  const holder = openSync(gate, constants.O_RDWR); // on Linux a FIFO opened read-write never blocks
  const tSpawn = monoMs();
  const starts: Array<ReturnType<typeof run>> = [];
  for (let i = 0; i < N; i++) {
    const args = [join(BIN, 'start-subagent'), '--registry', R, '--cli', 'shell', '--name', `fan/${pad(i)}`, '--prompt', 'true'];
    starts.push(run('sh', ['-c', 'read _ < "$0"; exec "$@"', gate, nodeBin(), ...args], { cwd: AREA, env: cleanEnv(env), stdio: ['ignore', 'pipe', 'pipe'] }));
  }
  const blocked = (pid: number | undefined) => {
    try {
      return readlinkSync(`/proc/${pid}/fd/0`) === gateReal;
    } catch {
      return false;
    }
  };
  const allBlocked = await until(() => starts.every((st) => blocked(st.child.pid)), 120_000, 20);
  const launched = monoMs() - tSpawn;
  const t0 = monoMs();
  closeSync(holder);
  const results = await Promise.all(starts);
  const returned = max(results.map((r) => r.t1)) - t0;
  if (!allBlocked) problems.push(`row 4 (${tag}): not every start was waiting at the barrier when it opened`);
  const errors = results.filter((r) => r.code !== 0 || json(r)?.ok !== true);
  const codes = new Map<string, number>();
  for (const e of errors) {
    const c = json(e)?.code ?? `exit ${e.code}`;
    codes.set(c, (codes.get(c) ?? 0) + 1);
  }
  const recorded = recordsOf(R).filter((r) => r.name?.startsWith('fan/')).length;
  let finished = 0;
  let succeeded = 0;
  let waitNote = '';
  try {
    const j = await waitTerminal(R, ['--prefix', 'fan'], 300);
    finished = j.agents.filter((a: any) => a.status === 'done').length;
    succeeded = j.agents.filter((a: any) => a.status === 'done' && a.outcome === 'succeeded').length;
  } catch (err) {
    waitNote = ` (wait failed: ${(err as Error).message.slice(0, 200)})`;
  }
  const allDone = monoMs() - t0;
  await waitQuiet(R, 60_000);
  const quiet = monoMs() - t0;
  removeTree(R);
  return {
    n: N,
    recorded,
    errors: errors.length,
    codes,
    finished,
    succeeded,
    launched,
    allBlocked,
    returned,
    perStartMedian: median(results.map((r) => r.t1 - t0)),
    allDone,
    quiet,
    waitNote,
  };
}

async function fanoutRow(): Promise<void> {
  const N = QUICK ? 50 : 200;
  const on = await fanout(N, {}, 'on');
  const plain = await fanout(N, PLAIN, 'plain');
  const meets = (f: Fanout) => f.recorded === N && f.errors === 0 && f.finished === N;
  const cell = (f: Fanout) =>
    `**${f.recorded}/${N}** recorded, **${f.errors}** errors, **${f.finished}/${N}** finished (${f.succeeded} succeeded); all returned in ${fmtMs(f.returned, 0)}, all done in ${fmtMs(f.allDone, 0)}`;
  const verdictOf = (f: Fanout) => (meets(f) ? 'meets' : `**misses**: ${N - f.recorded} not recorded, ${f.errors} errors, ${N - f.finished} not finished`);
  rows.push({
    what: `${N} \`start-subagent\` launched at the same moment`,
    target: `${N} of ${N} recorded, 0 errors, all finish`,
    on: cell(on),
    plain: cell(plain),
    floor: 'count',
    verdict: `on: ${verdictOf(on)}; plain: ${verdictOf(plain)}`,
  });
  const fanMisses = (
    [
      [on, 'fast paths on'],
      [plain, 'plain paths'],
    ] as const
  ).filter(([f]) => !meets(f));
  if (fanMisses.length)
    misses.push(
      `${N} simultaneous starts: ${fanMisses.map(([f, what]) => `${what}: ${verdictOf(f).replace('**misses**: ', '')}${f.codes.size ? ` (${[...f.codes].map(([c, k]) => `${c} × ${k}`).join(', ')})` : ''}`).join('; ')}.`,
    );
  const text = (f: Fanout, what: string) =>
    `- ${what}: ${N} shells spawned and blocked at the barrier in ${fmtMs(f.launched, 0)} (${f.allBlocked ? 'all' : '**not all**'}); released at once: ` +
    `the last start returned after ${fmtMs(f.returned, 0)} (per start, release → exit, median ${fmtMs(f.perStartMedian, 0)}); ` +
    `recorded ${f.recorded}/${N}; errors ${f.errors}${f.codes.size ? ` (${[...f.codes].map(([c, k]) => `${c} × ${k}`).join(', ')})` : ''}; ` +
    `\`status --wait-terminal --prefix fan\` returned after ${fmtMs(f.allDone, 0)}: ${f.finished}/${N} done, ${f.succeeded} succeeded${f.waitNote}; every supervisor had exited after ${fmtMs(f.quiet, 0)}`;
  details.push(`### 4. ${N} concurrent starts\n\n${text(on, 'fast paths on')}\n${text(plain, 'plain paths')}`);
  methods.push({
    title: '4. concurrent starts',
    text:
      `${N} shells \`read _ < FIFO; exec node bin/start-subagent --cli shell --name fan/NNN --prompt true\` are spawned; once every one ` +
      "is blocked reading the FIFO (its fd 0 points at it, seen in /proc), the bench closes the FIFO's only writer and all of them get EOF " +
      'at the same moment and exec their start. The bench collects every exit code and JSON line, counts the records on disk, then waits ' +
      'with `bin/status --wait-terminal --prefix fan` and counts `done`. Wall times are from the release. Done once with the fast paths on, then once with `SUBAGENT_FAST_PATHS=0`, each in its own registry.',
  });
}

// Row 5 ---------------------------------------------------------------------------------------------
type Mem = ReturnType<typeof memoryOf>;

/** One supervisor alone, then n at once, each of a run blocked in `read _ < FIFO`; their /proc memory. */
async function supervisorMemory(node: NodeBin, env: Record<string, string>, tag: string, N: number): Promise<{ solo: Mem; many: Mem[] }> {
  const R = join(AREA, `memory-${node.tag}-${tag}`);
  const gates = join(AREA, `gates-memory-${node.tag}-${tag}`);
  mkdirSync(gates);
  const supOf = (name: string) => {
    const r = readRecord(R, name);
    return r?.status === 'running' && r.supervisor && isAlive(r.supervisor) ? (r.supervisor.pid as number) : null;
  };
  mkfifo(join(gates, 'solo'));
  await start(R, 'solo', `read _ < ${q(join(gates, 'solo'))}`, env);
  if (!(await until(() => supOf('solo') !== null, 15_000))) throw new Error('the solo run never reached running');
  await sleep(500);
  const solo = memoryOf(supOf('solo')!);
  await openGate(join(gates, 'solo'));
  await waitTerminal(R, ['--name', 'solo'], 30);
  await waitQuiet(R, 10_000);
  const names = Array.from({ length: N }, (_, i) => `mem/${pad(i)}`);
  for (const n of names) mkfifo(join(gates, n.replace('/', '-')));
  for (let i = 0; i < N; i += 5) {
    await Promise.all(names.slice(i, i + 5).map((n) => start(R, n, `read _ < ${q(join(gates, n.replace('/', '-')))}`, env)));
  }
  if (!(await until(() => names.every((n) => supOf(n) !== null), 60_000, 50))) throw new Error('not every run reached running');
  await sleep(1000);
  const many = names.map((n) => memoryOf(supOf(n)!));
  for (const n of names) await openGate(join(gates, n.replace('/', '-')));
  await waitTerminal(R, ['--prefix', 'mem'], 120);
  await waitQuiet(R, 30_000);
  removeTree(R); // each row frees its disk space as soon as it is done
  removeTree(gates);
  return { solo, many };
}

/** Idle bare Node processes (`node -e 'setTimeout(…)'`), k at once, measured the same way. */
async function idleNodes(k: number, env: NodeJS.ProcessEnv): Promise<Mem[]> {
  const procs = Array.from({ length: k }, () => run(nodeBin(), ['-e', 'setTimeout(() => {}, 120000)'], { cwd: AREA, env, stdio: 'ignore' }));
  await sleep(k > 1 ? 1500 : 700);
  const ms = procs.map((p) => memoryOf(p.child.pid!));
  for (const p of procs) p.child.kill('SIGKILL');
  await Promise.all(procs);
  return ms;
}

async function memoryRow(node: NodeBin, main: boolean): Promise<void> {
  const N = QUICK ? 10 : 50;
  const on = await supervisorMemory(node, {}, 'on', N);
  const plain = main ? await supervisorMemory(node, PLAIN, 'plain', N) : null;
  // the floor: idle bare Node, one alone and N at once, in the machine's environment; and, when the machine
  // sets NODE_EXTRA_CA_CERTS, without it too: a supervisor started with the held-env fast path runs without it
  const caSet = !!process.env.NODE_EXTRA_CA_CERTS;
  const idleMachine = { one: (await idleNodes(1, cleanEnv()))[0]!, many: await idleNodes(N, cleanEnv()) };
  const noCa = cleanEnv();
  delete noCa.NODE_EXTRA_CA_CERTS;
  const idleNoCa = caSet ? { one: (await idleNodes(1, noCa))[0]!, many: await idleNodes(N, noCa) } : idleMachine;
  // which floor a supervisor compares with: the environment it ran in
  const heldOn = FAST_PATHS.includes('held-env');
  const idleFor = (variant: 'on' | 'plain') => (variant === 'on' && heldOn ? idleNoCa : idleMachine);
  const sum = (s: { solo: Mem; many: Mem[] }, variant: 'on' | 'plain') => {
    const idle = idleFor(variant);
    const pssMean = mean(s.many.map((m) => m.pssKb));
    const idlePss = mean(idle.many.map((m) => m.pssKb));
    return {
      rssAlone: s.solo.rssKb,
      rssMax: max([s.solo.rssKb, ...s.many.map((m) => m.rssKb)]),
      pssMean,
      anonMean: mean(s.many.map((m) => m.pssAnonKb)),
      idleRss: idle.one.rssKb,
      idlePss,
      idleAnon: mean(idle.many.map((m) => m.pssAnonKb)),
    };
  };
  const o = sum(on, 'on');
  rowsOf(node).memory = { rssAlone: o.rssAlone, pssMean: o.pssMean, n: N, idleRss: o.idleRss, idlePss: o.idlePss, idleAnon: o.idleAnon, anonMean: o.anonMean };
  const line = (s: { solo: Mem; many: Mem[] }, x: ReturnType<typeof sum>) =>
    `one supervisor alone, its agent running: VmRSS ${fmtMB(s.solo.rssKb)}, VmHWM ${fmtMB(s.solo.hwmKb)}, PSS ${fmtMB(s.solo.pssKb)} (anon ${fmtMB(s.solo.pssAnonKb)}, file ${fmtMB(s.solo.pssFileKb)}); ` +
    `${N} running at once: VmRSS median ${fmtMB(median(s.many.map((m) => m.rssKb)))}, max ${fmtMB(max(s.many.map((m) => m.rssKb)))}; ` +
    `PSS mean ${fmtMB(x.pssMean)}, max ${fmtMB(max(s.many.map((m) => m.pssKb)))} (anon mean ${fmtMB(x.anonMean)}, file mean ${fmtMB(mean(s.many.map((m) => m.pssFileKb)))}); ` +
    `over an idle \`node\` of the same version in the same environment: ${fmtDelta(x.rssAlone - x.idleRss)} RSS, ${fmtDelta(x.pssMean - x.idlePss)} PSS, ${fmtDelta(x.anonMean - x.idleAnon)} anonymous`;
  const idleLine = (label: string, idle: { one: Mem; many: Mem[] }) =>
    `idle bare \`node\` (${label}): alone VmRSS ${fmtMB(idle.one.rssKb)}, PSS ${fmtMB(idle.one.pssKb)} (anon ${fmtMB(idle.one.pssAnonKb)}); ${N} at once: VmRSS median ${fmtMB(median(idle.many.map((m) => m.rssKb)))}, PSS mean ${fmtMB(mean(idle.many.map((m) => m.pssKb)))} (anon mean ${fmtMB(mean(idle.many.map((m) => m.pssAnonKb)))})`;
  if (!main) {
    noteFor(node, `- supervisor memory: ${line(on, o)}`);
    noteFor(
      node,
      `- ${idleLine(caSet ? 'without NODE_EXTRA_CA_CERTS' : "the machine's environment", idleNoCa)}${caSet ? `; ${idleLine('with it', idleMachine)}` : ''}`,
    );
    return;
  }
  const p = sum(plain!, 'plain');
  const cell = (x: ReturnType<typeof sum>) =>
    `RSS alone **${fmtMB(x.rssAlone)}** (max ${fmtMB(x.rssMax)}), PSS mean with ${N} running **${fmtMB(x.pssMean)}** (anon ${fmtMB(x.anonMean)}); over idle \`node\`: **${fmtDelta(x.rssAlone - x.idleRss)}** RSS, **${fmtDelta(x.pssMean - x.idlePss)}** PSS`;
  const verdictOf = (x: ReturnType<typeof sum>) => {
    if (!Number.isFinite(x.rssMax) || !Number.isFinite(x.pssMean)) return 'n/a';
    const over: string[] = [];
    if (x.rssMax > 40 * 1024) over.push(`RSS by ${fmtMB(x.rssMax - 40 * 1024)}`);
    if (x.pssMean > 8 * 1024) over.push(`PSS by ${fmtMB(x.pssMean - 8 * 1024)}`);
    return over.length ? `**misses**: ${over.join(', ')} (an idle \`node\` alone: ${fmtMB(x.idleRss)} RSS, ${fmtMB(x.idlePss)} PSS with ${N})` : 'meets';
  };
  rows.push({
    what: 'supervisor memory',
    target: '≤ 40 MB RSS each; PSS per supervisor with 50 running ≤ 8 MB',
    on: cell(o),
    plain: cell(p),
    floor: `idle \`node\`: RSS ${fmtMB(idleNoCa.one.rssKb)}, PSS mean with ${N} running ${fmtMB(mean(idleNoCa.many.map((m) => m.pssKb)))} (anon ${fmtMB(mean(idleNoCa.many.map((m) => m.pssAnonKb)))})${caSet ? `; with NODE_EXTRA_CA_CERTS: RSS ${fmtMB(idleMachine.one.rssKb)}, PSS ${fmtMB(mean(idleMachine.many.map((m) => m.pssKb)))}` : ''}`,
    verdict: `on: ${verdictOf(o)}; plain: ${verdictOf(p)}`,
  });
  const memMisses = (
    [
      [o, 'fast paths on'],
      [p, 'plain paths'],
    ] as const
  ).filter(([x]) => verdictOf(x).startsWith('**misses'));
  if (memMisses.length)
    misses.push(
      `Supervisor memory: ${memMisses.map(([x, what]) => `${what} RSS ${fmtMB(x.rssMax)}, PSS ${fmtMB(x.pssMean)} with ${N} running`).join('; ')} (targets 40 MB RSS, 8 MB PSS). ` +
        `An idle \`node -e "setTimeout(…)"\` of the same version (${node.version}) is already ${fmtMB(o.idleRss)} RSS alone and ${fmtMB(o.idlePss)} PSS with ${N} of them (${fmtMB(o.idleAnon)} of it anonymous, which no sharing divides): ` +
        `no Node process meets these targets on this Node, so the supervisor's own share is its excess over that floor: ${memMisses.map(([x, what]) => `${what} **${fmtDelta(x.rssAlone - x.idleRss)} RSS, ${fmtDelta(x.pssMean - x.idlePss)} PSS** (${fmtDelta(x.anonMean - x.idleAnon)} anonymous)`).join('; ')}. ` +
        'The targets were set when the project ran on Node 20, whose idle process measured 39.4 MB RSS and 6.8 MB PSS with 50 (this page, as of commit 3531f1f).',
    );
  details.push(
    `### 5. Supervisor memory\n\n` +
      `- fast paths on: ${line(on, o)}\n- plain paths: ${line(plain!, p)}\n` +
      `- ${idleLine(caSet ? 'without NODE_EXTRA_CA_CERTS, the floor of a supervisor started with held-env' : "the machine's environment", idleNoCa)}\n` +
      (caSet ? `- ${idleLine("with the machine's NODE_EXTRA_CA_CERTS, the floor of a plain supervisor", idleMachine)}\n` : ''),
  );
  methods.push({
    title: '5. supervisor memory',
    text:
      'Runs whose script blocks in `read _ < FIFO` (no CPU, no output). First one alone, then 50 (started 5 at a time); once every ' +
      "record says `running` with a live supervisor (+0.5 s alone, +1 s for the 50), each supervisor's `VmRSS`/`VmHWM` is read from " +
      '/proc/<pid>/status and its `Pss`/`Pss_Anon`/`Pss_File` from /proc/<pid>/smaps_rollup (the pid is the one recorded, identity-checked). Then every gate is ' +
      'opened and every run waited for. Done with the fast paths on, then with `SUBAGENT_FAST_PATHS=0`. The floor is the same measurement of idle bare Node processes of the same version (`node -e "setTimeout(…)"`), one alone ' +
      'and 50 at once, started and killed by the bench; when the machine sets NODE_EXTRA_CA_CERTS, once with it and once without, since a supervisor started with the held-env fast path runs without it. ' +
      "PSS divides each shared page among the processes that map it: with 50 supervisors (or 50 idle nodes) the `node` binary's pages count 1/50th each, and what remains is mostly anonymous memory (V8's heap, Node's own allocations), which a process cannot share.",
  });
}

// Row 6 ---------------------------------------------------------------------------------------------
async function bigLogRow(): Promise<void> {
  const R = join(AREA, 'biglog');
  const MiB = 1024 * 1024;
  const line = 'lorem ipsum dolor sit amet, consectetur adipiscing elit 0123456789 the quick brown fox jumps over';
  const script = (half: number) =>
    `echo needle-first; yes ${q(line)} | head -c ${half}; echo; echo needle-middle; yes ${q(line)} | head -c ${half}; echo; echo needle-last`;
  const sizes = [5, 50];
  for (const mb of sizes) await start(R, `big/${mb}`, script((mb * MiB) / 2));
  const t0 = monoMs();
  await waitTerminal(R, ['--prefix', 'big'], 300);
  const settle = monoMs() - t0;
  await waitQuiet(R, 30_000);
  const floorRuns: Array<{ wallMs: number; maxRssKb: number }> = [];
  for (let i = 0; i < 5; i++) floorRuns.push(await measured(['node', '-e', '0']));
  const floorWall = median(floorRuns.map((r) => r.wallMs));
  const floorRss = median(floorRuns.map((r) => r.maxRssKb));
  type Res = { wall: number; rss: number; runs: number; ok: boolean; note: string };
  const res: Record<string, Res> = {};
  const variants = [
    { key: 'on', env: {} },
    { key: 'plain', env: PLAIN },
  ];
  for (const mb of sizes) {
    const logSize = statSync(join(R, 'agents', `big+${mb}`, '1', 'events.log')).size;
    for (const v of ['result', 'search'] as const) {
      const args =
        v === 'result'
          ? ['--registry', R, '--name', `big/${mb}`]
          : ['--registry', R, '--name', `big/${mb}`, '--pattern', 'needle-[a-z]+', '--role', 'assistant'];
      const n = mb === 50 ? (QUICK ? 2 : 5) : 3;
      const out: Record<string, Array<{ wallMs: number; maxRssKb: number; d: Done }>> = { on: [], plain: [] };
      // on and plain interleaved, run by run
      for (let i = 0; i < n; i++) for (const x of i % 2 ? [...variants].reverse() : variants) out[x.key]!.push(await measured([join(BIN, v), ...args], x.env));
      for (const x of variants) {
        const last = out[x.key]!.at(-1)!.d;
        let ok: boolean;
        let note: string;
        if (v === 'result') {
          ok = last.code === 0 && last.stdout.trimEnd().endsWith('needle-last');
          note = `printed ${(last.stdout.length / MiB).toFixed(2)} MiB${ok ? ', ends with the last line' : `; exit ${last.code}: ${last.stdout.slice(0, 200)}`}`;
        } else {
          const j = json(last);
          ok = j?.ok === true && j.total === 3;
          note = ok ? `found ${j.total} matches` : `exit ${last.code}: ${last.stdout.slice(0, 200)}`;
        }
        res[`${v}-${mb}-${x.key}`] = {
          wall: median(out[x.key]!.map((o) => o.wallMs)),
          rss: max(out[x.key]!.map((o) => o.maxRssKb)),
          runs: n,
          ok,
          note: `${note}; log ${(logSize / MiB).toFixed(1)} MiB`,
        };
      }
    }
  }
  removeTree(R);
  const growth = (v: string, k: string) => res[`${v}-50-${k}`]!.rss - res[`${v}-5-${k}`]!.rss;
  const bounded = (v: string, k: string) => growth(v, k) < 20 * 1024;
  const cell = (k: string) =>
    `result **${fmtMs(res[`result-50-${k}`]!.wall, 0)}**, peak RSS ${fmtMB(res[`result-50-${k}`]!.rss)} (${fmtDelta(growth('result', k))} vs 5 MB log); ` +
    `search **${fmtMs(res[`search-50-${k}`]!.wall, 0)}**, peak RSS ${fmtMB(res[`search-50-${k}`]!.rss)} (${fmtDelta(growth('search', k))} vs 5 MB log)`;
  const verdictOf = (k: string) => {
    const r50 = res[`result-50-${k}`]!;
    const s50 = res[`search-50-${k}`]!;
    if (!r50.ok || !s50.ok) return 'n/a (a check failed)';
    const over: string[] = [];
    for (const [name, r] of [
      ['result', r50],
      ['search', s50],
    ] as const) {
      if (r.wall > 1000) over.push(`${name} by ${fmtMs(r.wall - 1000, 0)}`);
      if (!bounded(name, k)) over.push(`${name}'s memory grows ${fmtDelta(growth(name, k))} with the log`);
    }
    return over.length ? `**misses**: ${over.join(', ')}` : 'meets';
  };
  rows.push({
    what: '`result` / `search` on a 50 MB event log',
    target: '≤ 1 s, memory bounded (streamed)',
    on: cell('on'),
    plain: cell('plain'),
    floor: `\`node -e 0\`: ${fmtMs(floorWall, 0)}, ${fmtMB(floorRss)}`,
    verdict: `on: ${verdictOf('on')}; plain: ${verdictOf('plain')}`,
  });
  const logMisses = ['on', 'plain'].filter((k) => verdictOf(k).startsWith('**misses'));
  if (logMisses.length)
    misses.push(
      `\`result\`/\`search\` on a 50 MB log: ${logMisses.map((k) => `${k === 'on' ? 'fast paths on' : 'plain paths'}: ${verdictOf(k).replace('**misses**: ', '')}`).join('; ')}.`,
    );
  details.push(
    `### 6. \`result\` and \`search\` on big event logs\n\n` +
      `Both runs finished ${fmtMs(settle, 0)} after the wait began. \`node -e 0\` under the same measurement: median ${fmtMs(floorWall, 0)}, peak RSS ${fmtMB(floorRss)}.\n\n` +
      `| verb | log | paths | runs | median wall | peak RSS (max) | check |\n|---|---|---|---|---|---|---|\n` +
      Object.entries(res)
        .map(([key, r]) => {
          const [v, mb, k] = key.split('-');
          return `| ${v} | ${mb} MB | ${k === 'on' ? 'fast paths on' : 'plain'} | ${r.runs} | ${fmtMs(r.wall, 0)} | ${fmtMB(r.rss)} | ${r.ok ? 'ok' : '**FAILED**'}: ${r.note} |`;
        })
        .join('\n') +
      `\n\n"Memory bounded" is judged by the growth of peak RSS from the 5 MB to the 50 MB log: a verb that reads the log whole grows by ` +
      `about the 45 MB of extra log (or more, as strings); a streaming one stays flat.`,
  );
  methods.push({
    title: '6. result and search on a 50 MB event log',
    text:
      'Two shell runs print 5 MB and 50 MB (`yes LINE | head -c …` twice, with `needle-first/middle/last` lines at the start, middle and ' +
      `end), and are waited for. Then \`bin/result --name big/50\` and \`bin/search --name big/50 --pattern 'needle-[a-z]+' --role assistant\` run 5 times each ` +
      `with the fast paths on and 5 times with \`SUBAGENT_FAST_PATHS=0\`, alternately (3 times each on the 5 MB log), under ${GNU_TIME ? '`/usr/bin/time -f %M`' : 'a getrusage preload'} for the peak RSS; wall time is the bench's ` +
      'monotonic clock around the process. Checks: result ends with the last line, search finds the 3 needles. `node -e 0` is measured the same way.',
  });
}

// ------------------------------------------------------------------------------- fast paths, A/B
//
// Each fast path is turned off alone (SUBAGENT_FAST_PATHS listing all the others) and compared with all
// of them on, on the measures it can affect, interleaved in the same run: every round runs each arm once,
// in an order that rotates (and reverses every other round), so drifts of the machine's load hit all arms
// alike. All off (SUBAGENT_FAST_PATHS=0) is one more arm of every measure.

interface Arm {
  key: string;
  label: string;
  env: Record<string, string>;
}
const ARM_ON: Arm = { key: 'on', label: 'all on', env: {} };
const ARM_OFF: Arm = { key: 'all-off', label: 'all off', env: PLAIN };
const armWithout = (fp: string): Arm => ({ key: fp, label: `without ${fp}`, env: without(fp) });

interface Figure {
  key: string;
  title: string;
  unit: 'ms' | 'MB';
  /** a figure a user feels (the verdict counts it), or one that explains the others */
  felt: boolean;
  /** shown only for these fast paths (and all off); every fast path of the measure when absent */
  only?: string[];
}
interface Measure {
  id: string;
  title: string;
  how: string;
  figures: Figure[];
  rounds: number;
  warmupRounds: number;
  sample: (arm: Arm, tag: string) => Promise<Record<string, number> | null>;
}

/** Starts in a row in the A/B's burst measure. */
const BURST = QUICK ? 5 : 10;

/** What each fast path does, and why the measures below are the ones a user feels it in. */
const FAST_PATH_WHY: Record<string, { does: string; why: string; measures: string[] }> = {
  'compile-cache': {
    does: "Node's module compile cache (module.enableCompileCache in the bin/* shims) keeps what V8 compiled of a verb's bundle for the next run",
    why: "It saves compiling a verb's bundle at every start-up of every verb, so it shows in the two commands users run most, `start-subagent` and `status`, and in the time until a started agent runs (the start is on that path).",
    measures: ['start', 'status-1000', 'agent-runs'],
  },
  gate: {
    does: 'start/resume spawn the supervisor behind a /bin/sh gate reading a pipe that only the start holds: the supervisor boots once the start command has exited',
    why: `It keeps the supervisor's boot (a whole Node start-up) off the CPU while the start command finishes, so it shows in the start's wall time; where the next command follows at once (a second start) the boot competes with that one instead, and it delays the supervisor's boot, so the time until the agent runs and ${BURST} starts in a row until all are done are measured too: a gain in one must not be paid for in another.`,
    measures: ['start', 'start-start', 'agent-runs', 'burst'],
  },
  'status-cache': {
    does: 'a plain listing serves done runs from registry/status-cache (their views as last rendered, checked by a stat of each run) instead of reading every record',
    why: 'It matters only in listings of registries with many done runs: `status` on 1 000 and on 10 000 runs.',
    measures: ['status-1000', 'status-10000'],
  },
  'plain-pattern': {
    does: 'search matches a pattern that cannot backtrack (literals, classes, anchors, top-level |) in its own thread instead of the worker thread that bounds matching in time',
    why: "It saves starting the worker thread, a fixed cost of every search with such a pattern: it shows most on a short run's search, which is what an orchestrator runs.",
    measures: ['search'],
  },
  'held-env': {
    does: "NODE_EXTRA_CA_CERTS is moved out of the supervisor's environment and restored for its agent",
    why: `It can only make the supervisor's own start-up cheaper (Node 20 parsed that CA bundle while it started): so the time from the start until the agent runs, the supervisor's CPU time and memory through its boot, and ${BURST} starts in a row until all are done (where supervisors' boots compete for the CPU). It does nothing when NODE_EXTRA_CA_CERTS is not set.`,
    measures: ['agent-runs', 'burst'],
  },
};

const abData = new Map<string, Map<string, Record<string, number[]>>>();
const abMeasures: Measure[] = [];
const abFailures: string[] = [];
let abRan = false;

function measures(): Measure[] {
  const startArgs = (R: string, name: string, prompt: string) => ['--registry', R, '--cli', 'shell', '--name', name, '--prompt', prompt];
  const okStart = (d: Done) => d.code === 0 && json(d)?.ok === true;
  const K = BURST;
  return [
    {
      id: 'start',
      title: '`start-subagent`, whole process',
      how: "`bin/start-subagent --cli shell --prompt true`, spawned by the bench, timed from spawn to exit; before each, the bench waits until the previous run's supervisor and agent have exited.",
      figures: [{ key: 'wall', title: 'start, whole process', unit: 'ms', felt: true }],
      rounds: QUICK ? 4 : 14,
      warmupRounds: 1,
      sample: async (arm, tag) => {
        const R = join(AREA, 'ab-start');
        await waitQuiet(R, 10_000);
        const d = await timedVerb('start-subagent', startArgs(R, tag, 'true'), arm.env, true);
        return okStart(d) ? { wall: d.t1 - d.t0 } : null;
      },
    },
    {
      id: 'start-start',
      title: 'two starts back to back',
      how: "two `bin/start-subagent --prompt true`, the second spawned as soon as the first exits (as a script starting runs does): the first one's supervisor boots while the second runs. Timed: both (first spawn → second exit) and the second alone. The bench waits for quiet before each pair.",
      figures: [
        { key: 'both', title: 'both starts, first spawn → second exit', unit: 'ms', felt: true },
        { key: 'second', title: 'the second start, whole process', unit: 'ms', felt: true },
      ],
      rounds: QUICK ? 3 : 10,
      warmupRounds: 1,
      sample: async (arm, tag) => {
        const R = join(AREA, 'ab-start-start');
        await waitQuiet(R, 10_000);
        const a = await timedVerb('start-subagent', startArgs(R, `${tag}a`, 'true'), arm.env, true);
        const b = await timedVerb('start-subagent', startArgs(R, `${tag}b`, 'true'), arm.env, true);
        return okStart(a) && okStart(b) ? { both: b.t1 - a.t0, second: b.t1 - b.t0 } : null;
      },
    },
    {
      id: 'agent-runs',
      title: 'start → the agent runs',
      how: "a start whose script is `date +%s%N > STAMP; read _ < FIFO`: the wall clock at the start's spawn to the stamp is the time until the agent runs (the start, the supervisor's boot, the agent's spawn). While the agent blocks, the supervisor's CPU time so far (/proc/<pid>/schedstat: its boot and set-up) and its VmRSS and Pss_Anon are read, once its record says `running` and 100 ms later; then the FIFO is opened and the run waited for.",
      figures: [
        { key: 'agent', title: 'start → agent runs', unit: 'ms', felt: true },
        { key: 'cpu', title: 'supervisor CPU time through its boot', unit: 'ms', felt: false, only: ['held-env'] },
        { key: 'rss', title: 'supervisor RSS, one alone', unit: 'MB', felt: true, only: ['held-env'] },
        { key: 'anon', title: 'supervisor anonymous memory (Pss_Anon)', unit: 'MB', felt: false, only: ['held-env'] },
      ],
      rounds: QUICK ? 3 : 12,
      warmupRounds: 1,
      sample: async (arm, tag) => {
        const R = join(AREA, 'ab-agent');
        const gates = join(AREA, 'ab-agent-gates');
        mkdirSync(gates, { recursive: true });
        const fifo = join(gates, tag);
        const stamp = join(gates, `${tag}.stamp`);
        mkfifo(fifo);
        await waitQuiet(R, 10_000);
        const t0 = realtimeNs();
        const d = await timedVerb('start-subagent', startArgs(R, tag, `date +%s%N > ${q(stamp)}; read _ < ${q(fifo)}`), arm.env, true);
        if (!okStart(d)) return null;
        const got: { stamp: bigint | null; pid: number | null } = { stamp: null, pid: null };
        await until(
          () => {
            try {
              const t = readFileSync(stamp, 'utf8').trim();
              if (t) got.stamp = BigInt(t);
            } catch {}
            return got.stamp !== null;
          },
          15_000,
          2,
        );
        await until(() => {
          const r = readRecord(R, tag);
          got.pid = r?.status === 'running' && isAlive(r.supervisor) ? (r.supervisor.pid as number) : null;
          return got.pid !== null;
        }, 15_000);
        let out: Record<string, number> | null = null;
        if (got.stamp !== null && got.pid !== null) {
          await sleep(100);
          const m = memoryOf(got.pid);
          out = { agent: Number(got.stamp - t0) / 1e6, cpu: cpuMsOf(got.pid), rss: m.rssKb / 1024, anon: m.pssAnonKb / 1024 };
        }
        await openGate(fifo);
        await waitQuiet(R, 10_000);
        return out;
      },
    },
    {
      id: 'burst',
      title: `${K} starts in a row, until all are done`,
      how: `${K} \`bin/start-subagent --prompt true\` one after the other (each spawned when the previous exits), in a fresh registry; timed from the first spawn until the last start returned, and until every record says \`done\` (the bench polls the records every 10 ms). Supervisors' boots and ends compete for the CPU with the starts that follow.`,
      figures: [
        { key: 'returned', title: `${K} starts, until the last returned`, unit: 'ms', felt: true },
        { key: 'done', title: `${K} starts, until all are done`, unit: 'ms', felt: true },
      ],
      rounds: QUICK ? 1 : 3,
      warmupRounds: 0,
      sample: async (arm, tag) => {
        const R = join(AREA, `ab-burst-${tag}`);
        const t0 = monoMs();
        for (let k = 0; k < K; k++) {
          const d = await timedVerb('start-subagent', startArgs(R, `b${pad(k)}`, 'true'), arm.env, true);
          if (!okStart(d)) return null;
        }
        const returned = monoMs() - t0;
        const allDone = await until(
          () => {
            const recs = recordsOf(R);
            return recs.length === K && recs.every((r) => r.status === 'done');
          },
          60_000,
          10,
        );
        const done = monoMs() - t0;
        await waitQuiet(R, 20_000);
        removeTree(R);
        return allDone ? { returned, done } : null;
      },
    },
    {
      id: 'status-1000',
      title: '`status` with 1 000 runs',
      how: '`bin/status --registry R` (stdout to /dev/null) on the 1 000-run registry of row 2 (its status cache filled), timed from spawn to exit.',
      figures: [{ key: 'wall', title: 'status, 1 000 runs', unit: 'ms', felt: true }],
      rounds: QUICK ? 4 : 20,
      warmupRounds: 1,
      sample: async (arm) => {
        const d = await timedVerb('status', ['--registry', (await bigRegistry(1000)).dir], arm.env, false);
        return d.code === 0 ? { wall: d.t1 - d.t0 } : null;
      },
    },
    {
      id: 'status-10000',
      title: '`status` with 10 000 runs',
      how: 'the same on the 10 000-run registry.',
      figures: [{ key: 'wall', title: 'status, 10 000 runs', unit: 'ms', felt: true }],
      rounds: QUICK ? 2 : 6,
      warmupRounds: 1,
      sample: async (arm) => {
        const d = await timedVerb('status', ['--registry', (await bigRegistry(10000)).dir], arm.env, false);
        return d.code === 0 ? { wall: d.t1 - d.t0 } : null;
      },
    },
    {
      id: 'search',
      title: '`search` of a short run',
      how: "`bin/search --registry R --name template --pattern 'error|fail'` on the done shell run the big registries are copied from, timed from spawn to exit.",
      figures: [{ key: 'wall', title: 'search, short run', unit: 'ms', felt: true }],
      rounds: QUICK ? 4 : 14,
      warmupRounds: 1,
      sample: async (arm) => {
        const d = await timedVerb('search', ['--registry', await templateRun(), '--name', 'template', '--pattern', 'error|fail'], arm.env, false);
        return d.code === 0 ? { wall: d.t1 - d.t0 } : null;
      },
    },
  ];
}

/** The fast paths measured on a measure (each one turned off alone). */
function fastPathsOn(measureId: string): string[] {
  return FAST_PATHS.filter((fp) => (FAST_PATH_WHY[fp]?.measures ?? ['start', 'status-1000']).includes(measureId));
}

async function fastPathsAB(): Promise<void> {
  for (const fp of FAST_PATHS)
    if (!FAST_PATH_WHY[fp])
      problems.push(`fast path \`${fp}\` (lib/base/fast-paths.ts) has no A/B measures of its own in the bench: measured on start and status 1 000 only`);
  abRan = true;
  for (const m of measures()) {
    const arms = [ARM_ON, ...fastPathsOn(m.id).map(armWithout), ARM_OFF];
    const data = new Map<string, Record<string, number[]>>(arms.map((a) => [a.key, Object.fromEntries(m.figures.map((f) => [f.key, [] as number[]]))]));
    const t0 = monoMs();
    let failed = 0;
    for (let r = 0; r < m.warmupRounds + m.rounds; r++) {
      const rot = arms.map((_, i) => arms[(i + r) % arms.length]!);
      const order = r % 2 ? rot.reverse() : rot;
      for (const [i, arm] of order.entries()) {
        const res = await m.sample(arm, `x${pad(r)}-${i}`);
        if (!res) {
          failed++;
          continue;
        }
        if (r < m.warmupRounds) continue;
        for (const f of m.figures) if (Number.isFinite(res[f.key])) data.get(arm.key)![f.key]!.push(res[f.key]!);
      }
    }
    if (failed) abFailures.push(`${m.title}: ${failed} sample${failed === 1 ? '' : 's'} failed`);
    abMeasures.push(m);
    abData.set(m.id, data);
    log(`  A/B ${m.id}: ${arms.length} arms × ${m.rounds} rounds in ${((monoMs() - t0) / 1000).toFixed(1)} s${failed ? `, ${failed} failed` : ''}`);
  }
  removeTree(join(AREA, 'ab-start'));
  removeTree(join(AREA, 'ab-start-start'));
  removeTree(join(AREA, 'ab-agent'));
  removeTree(join(AREA, 'ab-agent-gates'));
  if (abFailures.length) problems.push(...abFailures.map((f) => `A/B: ${f}`));
}

interface Comparison {
  measure: Measure;
  figure: Figure;
  on: number[];
  off: number[];
  medOn: number;
  medOff: number;
  /** median off − median on: what the fast path saves (negative: it costs) */
  gain: number;
  pct: number;
  lo: number;
  hi: number;
  earns: boolean;
}

function compare(m: Measure, f: Figure, offKey: string): Comparison | null {
  const data = abData.get(m.id);
  const on = data?.get('on')?.[f.key] ?? [];
  const off = data?.get(offKey)?.[f.key] ?? [];
  if (!on.length || !off.length) return null;
  const medOn = median(on);
  const medOff = median(off);
  const gain = medOff - medOn;
  const pct = gain / medOff;
  const [lo, hi] = medianDiffInterval(on, off);
  const earns = f.unit === 'ms' ? gain >= 3 || pct >= 0.1 : pct >= 0.1;
  return { measure: m, figure: f, on, off, medOn, medOff, gain, pct, lo, hi, earns };
}

const fmtVal = (x: number, unit: 'ms' | 'MB') => (unit === 'ms' ? fmtMs(x) : Number.isFinite(x) ? `${x.toFixed(1)} MB` : 'n/a');
const fmtGain = (x: number, unit: 'ms' | 'MB') =>
  unit === 'ms' ? fmtSignedMs(x) : Number.isFinite(x) ? `${x >= 0 ? '+' : '−'}${Math.abs(x).toFixed(1)} MB` : 'n/a';

function comparisonVerdict(c: Comparison, together = false): string {
  if (!c.figure.felt) return '— (explains the others)';
  const noise = withinNoise(c) ? " (within this run's noise)" : '';
  const ms = c.figure.unit === 'ms';
  if (c.earns) return `**${together ? 'they gain it' : 'earns its place'}**${noise}`;
  if (ms ? c.gain <= -3 || c.pct <= -0.1 : c.pct <= -0.1)
    return `${together ? 'they cost it' : 'costs it'}: ${ms ? 'slower' : 'more'} with ${together ? 'them' : 'it'} on${noise}`;
  return `${together ? 'no gain' : 'does not earn it'} (${ms ? '< 3 ms and < 10 %' : '< 10 %'})`;
}

function comparisonRows(cs: Comparison[], together = false): string[][] {
  return cs.map((c) => [
    `${c.figure.title}`,
    `${fmtVal(c.medOn, c.figure.unit)} (n = ${c.on.length})`,
    `${fmtVal(c.medOff, c.figure.unit)} (n = ${c.off.length})`,
    `**${fmtGain(c.gain, c.figure.unit)}**`,
    `**${fmtPct(c.pct)}**`,
    `${fmtGain(c.lo, c.figure.unit)} … ${fmtGain(c.hi, c.figure.unit)}`,
    comparisonVerdict(c, together),
  ]);
}

/** The comparisons of one arm against all on, over every measure it was measured on. */
function comparisonsOf(offKey: string): Comparison[] {
  const out: Comparison[] = [];
  for (const m of abMeasures) {
    if (!abData.get(m.id)?.has(offKey)) continue;
    for (const f of m.figures) {
      if (f.only && offKey !== 'all-off' && !f.only.includes(offKey)) continue;
      const c = compare(m, f, offKey);
      if (c) out.push(c);
    }
  }
  return out;
}

/** True unless the gain's 95 % interval lies clearly on one side of 0 (unknown with too few samples). */
function withinNoise(c: Comparison): boolean {
  return !(Number.isFinite(c.lo) && Number.isFinite(c.hi) && (c.lo > 0 || c.hi < 0));
}

/**
 * A fast path's verdict from the figures a user feels, by the fast-path rule (CONTRIBUTING.md, "Fast paths"): it earns its place with a
 * gain of ≥ 3 ms or ≥ 10 % (memory: ≥ 10 %) of the medians on one of them. The verdict says so "within this
 * run's noise" when every such gain's interval holds 0. Where it also costs as much on another figure, beyond
 * the noise (with a handful of figures per fast path, one of them drifts past 3 ms by chance on a busy
 * machine), the verdict is "mixed" and names both, for the reader to weigh.
 */
function fastPathVerdict(cs: Comparison[]): { label: string; text: string } {
  const felt = cs.filter((c) => c.figure.felt);
  if (!felt.length) return { label: 'n/a', text: 'not measured' };
  const gains = felt.filter((c) => c.earns);
  const costs = felt.filter((c) => (c.figure.unit === 'ms' ? c.gain <= -3 || c.pct <= -0.1 : c.pct <= -0.1));
  const realCosts = costs.filter((c) => !withinNoise(c));
  const list = (xs: Comparison[], sign: 1 | -1) =>
    xs
      .map((c) => `${fmtGain(sign * c.gain, c.figure.unit)} (${fmtPct(sign * c.pct)}) on ${c.figure.title}${withinNoise(c) ? ' (within noise)' : ''}`)
      .join('; ');
  const costText = costs.length ? `; ${realCosts.length ? 'but it' : 'it'} costs ${list(costs, -1)}` : '';
  if (!gains.length) {
    const best = [...felt].sort((x, y) => y.pct - x.pct)[0]!;
    return {
      label: '**does not earn it**',
      text: `best gain ${fmtGain(best.gain, best.figure.unit)} (${fmtPct(best.pct)}) on ${best.figure.title}${costText}`,
    };
  }
  if (realCosts.length) return { label: '**mixed**', text: `gains ${list(gains, 1)}${costText}` };
  return { label: `**earns its place**${gains.every(withinNoise) ? " (within this run's noise)" : ''}`, text: `gains ${list(gains, 1)}${costText}` };
}

function abPage(): string {
  if (!abRan) return '';
  const out: string[] = [];
  out.push(
    `All on (the default) against one fast path off (\`SUBAGENT_FAST_PATHS\` listing all the others), on ${MAIN.version}, on the measures each one can affect, all interleaved in the same run ` +
      '(each round runs every arm of a measure once, in an order that rotates and reverses every other round; the first round of each measure is a discarded warm-up). ' +
      '**Gain** is median off − median on: what the fast path saves (negative: what it costs). The fast-path rule (CONTRIBUTING.md, "Fast paths"): a fast path earns its place with a gain of **≥ 3 ms or ≥ 10 %** ' +
      '(for memory, ≥ 10 %) on a figure a user feels; otherwise it goes, as simpler code at equal speed wins. ' +
      "The interval is a 95 % bootstrap interval of the gain (the two samples resampled independently): where it holds 0, this run cannot tell the gain from the machine's noise. " +
      "Commands are spawned by the bench itself (no shell, through the bin/* `#!/usr/bin/env node` line, the Node under test first on PATH), so the times include the bench's own spawn (~1 ms, alike for both arms), unlike the hyperfine rows above.",
  );
  if (!process.env.NODE_EXTRA_CA_CERTS)
    out.push('\nNODE_EXTRA_CA_CERTS was **not set** in this run: held-env had nothing to move, and its A/B measures noise only.');
  const summary: string[][] = [];
  for (const fp of FAST_PATHS) {
    const v = fastPathVerdict(comparisonsOf(fp));
    summary.push([`\`${fp}\``, FAST_PATH_WHY[fp]?.does ?? '(not described in the bench)', v.label, v.text]);
  }
  const allOff = fastPathVerdict(comparisonsOf('all-off'));
  summary.push(['all of them against none (`SUBAGENT_FAST_PATHS=0`)', 'the plain paths', allOff.label, allOff.text]);
  out.push('\n' + mdTable(['fast path', 'what it does', 'verdict', 'on the figures a user feels (gain = what turning it off costs)'], summary));
  const header = ['figure', 'on (median)', 'off (median)', 'gain', 'gain %', '95 % interval of the gain', 'verdict'];
  for (const fp of FAST_PATHS) {
    const why = FAST_PATH_WHY[fp];
    out.push(`\n### \`${fp}\`\n\n${why ? `${why.does}. ${why.why}` : ''}\n`);
    out.push(mdTable(header, comparisonRows(comparisonsOf(fp))));
  }
  out.push('\n### All off (`SUBAGENT_FAST_PATHS=0`) against all on\n\nEvery measure, all fast paths off at once: what the plain paths cost together.\n');
  out.push(mdTable(header, comparisonRows(comparisonsOf('all-off'), true)));
  out.push(
    `\n### How each A/B measure is taken\n\n${abMeasures.map((m) => `- **${m.title}** (${m.rounds} rounds${m.warmupRounds ? ` after ${m.warmupRounds} warm-up` : ''}; arms: ${['all on', ...fastPathsOn(m.id).map((f) => `without ${f}`), 'all off'].join(', ')}): ${m.how}`).join('\n')}`,
  );
  return out.join('\n');
}

// ------------------------------------------------------------------------------------ the sequence

await section('floor: node -e 0', () => floorRow(MAIN, true));
await section('row 1: start-subagent', () => startRow(MAIN, true));
await section('row 2: status with 1 000 and 10 000 runs', () => statusRow(MAIN, true));
await section('row 3: status --wait-terminal latency', () => waitRow(MAIN, true));
await section('row 4: 200 concurrent starts', fanoutRow);
await section('row 5: supervisor memory', () => memoryRow(MAIN, true));
await section('row 6: result and search on a 50 MB event log', bigLogRow);
await section('row 7: runs on Slurm', async () => {
  const r = await slurmRow(AREA, QUICK ? 3 : 10);
  if (typeof r === 'string') {
    problems.push(`row 7: ${r}`);
    return;
  }
  rows.push(r.row);
  methods.push(r.method);
  details.push(r.details);
});
await section('fast paths: A/B', fastPathsAB);

// The other Nodes: the main rows, with that Node first on the children's PATH (and running the verbs the
// bench spawns itself); the supervisors run on the Node that started them.
for (const n of OTHERS) {
  useNode(n.exec);
  try {
    await section(`node ${n.version}: floor`, () => floorRow(n, false));
    await section(`node ${n.version}: row 1 start-subagent`, () => startRow(n, false));
    await section(`node ${n.version}: row 2 status`, () => statusRow(n, false));
    await section(`node ${n.version}: row 3 wait latency`, () => waitRow(n, false));
    await section(`node ${n.version}: row 5 supervisor memory`, () => memoryRow(n, false));
  } finally {
    useNode(MAIN.exec);
  }
}

// Where the time goes ---------------------------------------------------------------------------------
let statusProfile: ProfileSummary | null = null;
let startProfile: ProfileSummary | null = null;
await section('profile: --cpu-prof of status (1 000 runs) and start-subagent', async () => {
  const P = join(AREA, 'profiles');
  const K = QUICK ? 2 : 5;
  const profileOf = async (label: string, args: (k: number) => string[]) => {
    const dir = join(P, label);
    mkdirSync(dir, { recursive: true });
    for (let k = 0; k < K; k++) {
      const d = await run(nodeBin(), ['--cpu-prof', '--cpu-prof-dir', dir, '--cpu-prof-interval', '100', ...args(k)], {
        cwd: AREA,
        env: cleanEnv(),
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      if (d.code !== 0) throw new Error(`${label} exited ${d.code}: ${d.stdout.slice(0, 200)}`);
    }
    return summarise(readdirSync(dir).map((f) => join(dir, f)));
  };
  const reg1000 = (await bigRegistry(1000)).dir;
  statusProfile = await profileOf('status', () => [join(BIN, 'status'), '--registry', reg1000]);
  const R = join(AREA, 'profile-start');
  startProfile = await profileOf('start', (k) => [join(BIN, 'start-subagent'), '--registry', R, '--cli', 'shell', '--name', `p${k}`, '--prompt', 'true']);
  await waitQuiet(R, 20_000);
});

// ----------------------------------------------------------------------------------------- report

function machine(): Record<string, string> {
  let model = cpus()[0]?.model ?? 'unknown';
  try {
    model = /^model name\s*:\s*(.+)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? model;
  } catch {}
  const git = spawnSync('git', ['-C', ROOT, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).stdout.trim();
  const dirty = spawnSync('git', ['-C', ROOT, 'status', '--porcelain', '--', 'lib', 'bin', 'scripts'], { encoding: 'utf8' }).stdout.trim();
  return {
    cpu: model,
    cores: String(cpus().length),
    memory: `${(totalmem() / 2 ** 30).toFixed(1)} GiB (${(freemem() / 2 ** 30).toFixed(1)} GiB free at the end)`,
    kernel: `Linux ${release()}`,
    node: `${MAIN.version} (\`${MAIN.exec}\`, the \`node\` first on PATH)${mainIsSelf ? '' : `; the bench itself ran on ${process.version}`}`,
    others: OTHERS.length ? OTHERS.map((o) => `${o.version} (\`${o.exec}\`)`).join(', ') : 'none (SUBAGENT_BENCH_NODES unset)',
    tools: `${hyperfineVersion ?? 'no hyperfine (own timing loop)'}; ${GNU_TIME ? 'GNU time' : 'getrusage preload'}`,
    code: git ? `commit ${git}${dirty ? ' + uncommitted changes in lib/, bin/ or scripts/' : ''}` : 'unknown',
    load: `load average (1/5/15 min) at the start ${loadAtStart}, at the end ${loadavg()
      .map((x) => x.toFixed(2))
      .join(' ')}`,
    ca: process.env.NODE_EXTRA_CA_CERTS ? `set (\`${process.env.NODE_EXTRA_CA_CERTS}\`), for every process` : 'not set',
  };
}

function mdTable(header: string[], body: string[][]): string {
  return [`| ${header.join(' | ')} |`, `|${header.map(() => '---').join('|')}|`, ...body.map((r) => `| ${r.join(' | ')} |`)].join('\n');
}

/** The main rows of every Node measured, side by side (fast paths on, the default). */
function nodesTable(): string {
  const all = [...nodeRows.values()]
    .filter((r) => r.node.version !== MAIN.version || OTHERS.length)
    .sort((a, b) => parseInt(a.node.version.slice(1), 10) - parseInt(b.node.version.slice(1), 10));
  if (all.length < 2) return '';
  const col = (r: NodeRows) => `${r.node.version}${r.node.version === MAIN.version ? ' (main)' : ''}`;
  const short = (v: string) => v.replace(/ \(.*\)$/, '').replace('**misses** by', 'misses by');
  const body: string[][] = [
    ['`node -e 0` (floor), median', '—', ...all.map((r) => fmtMs(r.floor ?? NaN))],
    [
      '`start-subagent`',
      '≤ 1.3 ×',
      ...all.map((r) => (r.start ? `${fmtMs(r.start.ms)} → **${fmtRatio(r.start.ratio)}**: ${short(ratioVerdict(r.start.ratio, 1.3))}` : 'n/a')),
    ],
    ...[1000, 10000].map((n) => [
      `\`status\`, ${n.toLocaleString('en-US').replace(',', ' ')} runs`,
      `≤ ${n === 1000 ? 1.5 : 5} ×`,
      ...all.map((r) => {
        const s = r.status?.[n];
        return s ? `${fmtMs(s.ms)} → **${fmtRatio(s.ratio)}**: ${short(ratioVerdict(s.ratio, n === 1000 ? 1.5 : 5))}` : 'n/a';
      }),
    ]),
    [
      '`status --wait-terminal` latency',
      'median ≤ 30 ms, p95 ≤ 100 ms',
      ...all.map((r) =>
        r.wait
          ? `median **${fmtMs(r.wait.median)}**, p95 **${fmtMs(r.wait.p95)}** (n = ${r.wait.n}): ${r.wait.median <= 30 && r.wait.p95 <= 100 ? 'meets' : 'misses'}`
          : 'n/a',
      ),
    ],
    [
      'supervisor RSS, one alone',
      '≤ 40 MB',
      ...all.map((r) =>
        r.memory
          ? `**${fmtMB(r.memory.rssAlone)}** (idle \`node\` ${fmtMB(r.memory.idleRss)}, so ${fmtDelta(r.memory.rssAlone - r.memory.idleRss)}): ${r.memory.rssAlone <= 40 * 1024 ? 'meets' : `misses by ${fmtMB(r.memory.rssAlone - 40 * 1024)}`}`
          : 'n/a',
      ),
    ],
    [
      `supervisor PSS, mean with ${[...nodeRows.values()].find((r) => r.memory)?.memory?.n ?? 50} running`,
      '≤ 8 MB',
      ...all.map((r) =>
        r.memory
          ? `**${fmtMB(r.memory.pssMean)}** (idle \`node\` ${fmtMB(r.memory.idlePss)}, so ${fmtDelta(r.memory.pssMean - r.memory.idlePss)}; anonymous ${fmtMB(r.memory.anonMean)} vs ${fmtMB(r.memory.idleAnon)}): ${r.memory.pssMean <= 8 * 1024 ? 'meets' : `misses by ${fmtMB(r.memory.pssMean - 8 * 1024)}`}`
          : 'n/a',
      ),
    ],
  ];
  return mdTable(['row (fast paths on)', 'target', ...all.map(col)], body);
}

function whereTheTimeGoes(): string {
  const out: string[] = [];
  const prof = (title: string, p: ProfileSummary | null) => {
    if (!p) return;
    out.push(
      `#### ${title}\n\n${p.profiles} profiles (\`node --cpu-prof --cpu-prof-interval 100\`, fast paths on), averaged: ${fmtMs(p.profiledMs)} profiled per run (the profiler starts after Node's own bootstrap).\n`,
    );
    out.push(
      'Self time by kind:\n\n' +
        mdTable(
          ['kind', 'ms / run', 'share'],
          p.byCategory.map((c) => [c.key, c.ms.toFixed(1), `${(c.share * 100).toFixed(0)} %`]),
        ),
    );
    out.push(
      '\nTop functions by self time:\n\n' +
        mdTable(
          ['function', 'ms / run', 'share'],
          p.byFunction.slice(0, 12).map((c) => [`\`${c.key}\``, c.ms.toFixed(1), `${(c.share * 100).toFixed(1)} %`]),
        ),
    );
    out.push(
      "\nInclusive time of the project's functions (and dependencies, and the module loader's entry points):\n\n" +
        mdTable(
          ['function', 'ms / run', 'share'],
          p.inclusive.slice(0, 12).map((c) => [`\`${c.key}\``, c.ms.toFixed(1), `${(c.share * 100).toFixed(1)} %`]),
        ),
    );
    out.push('');
  };
  prof('`status` with 1 000 runs', statusProfile);
  prof('`start-subagent --cli shell`', startProfile);
  return out.join('\n');
}

const m = machine();
const date = new Date().toISOString();
const table = mdTable(
  ['what', 'target', 'fast paths on (the default)', 'plain paths (`SUBAGENT_FAST_PATHS=0`)', 'floor (same run)', 'verdict'],
  rows.map((r) => [r.what, r.target, r.on, r.plain ?? '—', r.floor, r.verdict]),
);
const ab = abPage();
const nodes = nodesTable();
const otherFigures = OTHERS.filter((o) => nodeDetails.has(o.version))
  .map((o) => `### ${o.version}\n\n${nodeDetails.get(o.version)!.join('\n')}`)
  .join('\n\n');
const benchSeconds = ((monoMs() - benchStart) / 1000).toFixed(0);
const doc = `# Benchmarks

Written by \`make bench\` (test/bench/run.ts) — do not edit by hand; run it again. The targets are the
project's (the target column below): every row must meet them with the plain paths (\`SUBAGENT_FAST_PATHS=0\`), and each
fast path must show its gain A/B. Every ratio is taken against a floor measured in the same run, right next to
the measured command, because these machines are noisy. Benchmarks are not tests: a missed target does not
fail the build.

Run: \`make bench\` (builds first; installs hyperfine and GNU time from Debian's packages if missing; about
5–9 minutes on 2 cores with two other Nodes, then the clean-up of its temp registries). Everything runs on
the \`node\` first on PATH (Node 24 under \`make bench\`). \`SUBAGENT_BENCH_NODES=/path/to/node22:/path/to/node26\`
(colon-separated \`node\` binaries, or the directories holding them) adds the main rows measured on each of
those Nodes, side by side; unset, only the Node on PATH is reported. \`BENCH_QUICK=1 node dist/test/bench/run.js\`
does fewer repetitions, to try the bench itself out; \`BENCH_ONLY="floor,row 2"\` runs only the sections whose
titles start so and prints their table without writing this page.

- **date**: ${date} (the bench took ${benchSeconds} s before its clean-up${QUICK ? '; BENCH_QUICK=1: few repetitions, rough figures' : ''})
- **machine**: ${m.cpu}, ${m.cores} cores, ${m.memory}
- **kernel**: ${m.kernel}
- **node**: ${m.node}
- **other Nodes** (SUBAGENT_BENCH_NODES): ${m.others}
- **NODE_EXTRA_CA_CERTS**: ${m.ca}
- **tools**: ${m.tools}
- **code measured**: ${m.code}
- **${m.load}**
${busyAtStart ? `\n> **The machine was busy during this run** (1-min load average ${loadAtStart.split(' ')[0]} before the bench began, on ${cpus().length} cores: other work on the machine): absolute times are\n> inflated and noisy; the same-run ratios and the interleaved A/B are the figures to compare, and even they carry that noise.\n` : ''}
## Results (${MAIN.version})

${table}

${misses.length ? `### Where a target is missed\n\n${misses.map((x) => `- ${x}`).join('\n')}\n` : 'Every row meets its target, with the fast paths on and with the plain paths.\n'}
${problems.length ? `**Problems during this run** (figures above may be incomplete):\n\n${problems.map((p) => `- ${p}`).join('\n')}\n` : ''}
${ab ? `## Fast paths, A/B\n\n${ab}\n` : ''}
${nodes ? `## Other Nodes beside ${MAIN.version}\n\nThe main rows with each Node first on PATH (the verbs' \`#!/usr/bin/env node\` finds it; a supervisor runs on the Node that started it), fast paths on, each against its own \`node -e 0\`. Fewer repetitions than on the main Node (start 15 runs, status 20 / 6, wait latency 20 samples); the 200 simultaneous starts and the 50 MB log are measured on the main Node only.\n\n${nodes}\n` : ''}
## Figures

${details.join('\n\n')}
${otherFigures ? `\n### Other Nodes\n\n${otherFigures.replaceAll(/^### /gm, '#### ')}\n` : ''}
## Method

${methods.map((x) => `**${x.title}.** ${x.text}`).join('\n\n')}

All runs use the built-in \`shell\` CLI (the prompt is a /bin/sh script), each row its own registry in a
fresh temp directory, always passed with \`--registry\`; SUBAGENT_* variables of the caller, NODE_OPTIONS and
Node's compile-cache variables (NODE_COMPILE_CACHE, NODE_DISABLE_COMPILE_CACHE) are removed, and the Node under
test is put first on PATH. "Fast paths on" is SUBAGENT_FAST_PATHS unset; "plain paths" is SUBAGENT_FAST_PATHS=0,
given to the verb (and through it to the supervisor it starts). Verbs run as \`bin/<verb>\` (through their
\`#!/usr/bin/env node\` line) except where the bench spawns \`node bin/<verb>\` to watch the process itself. At the
end the bench ends whatever it started that still runs (by pid, identity-checked against /proc) and removes its
temp directory.

## Where the time goes

${whereTheTimeGoes()}
${readFileSync(join(ROOT, 'test', 'bench', 'by-hand.md'), 'utf8')}`;
if (!ONLY.length) writeFileSync(join(ROOT, 'docs', 'benchmarks.md'), doc);

process.stdout.write(`\n${table}\n\n`);
if (misses.length) process.stdout.write(`missed:\n${misses.map((x) => `- ${x}`).join('\n')}\n\n`);
if (ab) {
  const lines = [...FAST_PATHS, 'all-off'].flatMap((fp) =>
    comparisonsOf(fp).map(
      (c) =>
        `${fp.padEnd(13)} ${c.figure.title.padEnd(42)} on ${fmtVal(c.medOn, c.figure.unit).padStart(9)}  off ${fmtVal(c.medOff, c.figure.unit).padStart(9)}  gain ${fmtGain(c.gain, c.figure.unit).padStart(9)} ${fmtPct(c.pct).padStart(8)}  [${fmtGain(c.lo, c.figure.unit)} … ${fmtGain(c.hi, c.figure.unit)}]`,
    ),
  );
  process.stdout.write(`fast paths, A/B (gain = median off − median on):\n${lines.join('\n')}\n`);
  for (const fp of [...FAST_PATHS, 'all-off']) {
    const v = fastPathVerdict(comparisonsOf(fp));
    process.stdout.write(`${fp}: ${v.label.replaceAll('**', '')}: ${v.text}\n`);
  }
  process.stdout.write('\n');
}
if (nodes) process.stdout.write(`${nodes}\n\n`);
if (problems.length) process.stdout.write(`problems:\n${problems.map((p) => `- ${p}`).join('\n')}\n\n`);
process.stdout.write(
  `machine: ${m.cpu}, ${m.cores} cores, ${m.memory}, ${m.kernel}, node ${MAIN.version}${OTHERS.length ? ` (+ ${OTHERS.map((o) => o.version).join(', ')})` : ''}\n`,
);
process.stdout.write(`${ONLY.length ? 'not written (BENCH_ONLY)' : 'written'}: docs/benchmarks.md (${benchSeconds} s)\n`);
finalCleanup();
log('clean-up done');
// leave no handle behind (a waiter's watch, a timer): the bench is done
process.exit(0);
