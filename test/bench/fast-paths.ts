/**
 * The fast paths' A/B of `make bench`. Each fast path is turned off alone (SUBAGENT_FAST_PATHS listing all
 * the others) and compared with all of them on, on the measures it can affect, interleaved in the same
 * run: every round runs each arm once, in an order that rotates (and reverses every other round), so
 * drifts of the machine's load hit all arms alike. All off (SUBAGENT_FAST_PATHS=0) is one more arm of
 * every measure.
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { FAST_PATHS, MAIN, PLAIN, without } from './nodes.js';
import { mdTable } from './results.js';
import { timedVerb, mkfifo, until, readRecord, openGate, bigRegistry, templateRun } from './runs.js';
import { AREA, QUICK, log, problems } from './setup.js';
import {
  fmtMs,
  median,
  medianDiffInterval,
  monoMs,
  removeTree,
  type Done,
  json,
  waitQuiet,
  realtimeNs,
  isAlive,
  sleep,
  memoryOf,
  cpuMsOf,
  recordsOf,
  fmtPct,
  fmtSignedMs,
  pad,
  q,
} from './util.js';

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
  'status-cache': {
    does: "a plain listing serves done runs from registry/status-cache (their views as last rendered, proven current by the registry's journal of changes, with no stat per run) instead of reading every record",
    why: 'It matters only in listings of registries with many done runs: `status` on 1 000 and on 10 000 runs.',
    measures: ['status-1000', 'status-10000'],
  },
  'plain-pattern': {
    does: 'search matches a pattern that cannot backtrack (literals, classes, anchors, top-level |) in its own thread instead of the worker thread that bounds matching in time',
    why: "It saves starting the worker thread, a fixed cost of every search with such a pattern: it shows most on a short run's search, which is what an orchestrator runs.",
    measures: ['search'],
  },
};

const abData = new Map<string, Map<string, Record<string, number[]>>>();
const abMeasures: Measure[] = [];
const abFailures: string[] = [];
let abRan = false;

/** A sample of one verb's wall time, spawn to exit, its stdout to /dev/null; null when it failed. */
const verbWall =
  (v: string, args: () => Promise<string[]>) =>
  async (arm: Arm): Promise<Record<string, number> | null> => {
    const d = await timedVerb(v, await args(), arm.env, false);
    return d.code === 0 ? { wall: d.t1 - d.t0 } : null;
  };

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
      sample: verbWall('status', async () => ['--registry', (await bigRegistry(1000)).dir]),
    },
    {
      id: 'status-10000',
      title: '`status` with 10 000 runs',
      how: 'the same on the 10 000-run registry.',
      figures: [{ key: 'wall', title: 'status, 10 000 runs', unit: 'ms', felt: true }],
      rounds: QUICK ? 2 : 6,
      warmupRounds: 1,
      sample: verbWall('status', async () => ['--registry', (await bigRegistry(10000)).dir]),
    },
    {
      id: 'search',
      title: '`search` of a short run',
      how: "`bin/search --registry R --name template --pattern 'error|fail'` on the done shell run the big registries are copied from, timed from spawn to exit.",
      figures: [{ key: 'wall', title: 'search, short run', unit: 'ms', felt: true }],
      rounds: QUICK ? 4 : 14,
      warmupRounds: 1,
      sample: verbWall('search', async () => ['--registry', await templateRun(), '--name', 'template', '--pattern', 'error|fail']),
    },
  ];
}

/** The fast paths measured on a measure (each one turned off alone). */
function fastPathsOn(measureId: string): string[] {
  return FAST_PATHS.filter((fp) => (FAST_PATH_WHY[fp]?.measures ?? ['start', 'status-1000']).includes(measureId));
}

export async function fastPathsAB(): Promise<void> {
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

export const fmtVal = (x: number, unit: 'ms' | 'MB') => (unit === 'ms' ? fmtMs(x) : Number.isFinite(x) ? `${x.toFixed(1)} MB` : 'n/a');
export const fmtGain = (x: number, unit: 'ms' | 'MB') =>
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
export function comparisonsOf(offKey: string): Comparison[] {
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
export function fastPathVerdict(cs: Comparison[]): { label: string; text: string } {
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

export function abPage(): string {
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
