/**
 * Row 12 of `make bench`: `--after`, a dependency's end → its dependent's start. One pair at a time: a shell
 * run blocked on a FIFO, and a run started `--after` it; the figure is from the dependency's last command to
 * the dependent's first (both stamp the wall clock in ns). Target: a median within 50 ms.
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { details, methods, misses, rows } from './results.js';
import { mkfifo, openGate, readRecord, until, waitTerminal } from './runs.js';
import { AREA, QUICK, problems } from './setup.js';
import { cleanEnv, fmtMs, json, max, median, pad, q, quantile, removeTree, verb, waitQuiet } from './util.js';

const TARGET_MS = 50;

export async function afterRow(): Promise<void> {
  const R = join(AREA, 'after');
  const gates = join(AREA, 'gates-after');
  mkdirSync(gates);
  const N = QUICK ? 8 : 30;
  const W = 2;
  const lat: number[] = [];
  for (let i = 0; i < N + W; i++) {
    const dep = `dep-${pad(i)}`;
    const next = `next-${pad(i)}`;
    const fifo = join(gates, dep);
    const stamp = (n: string) => join(gates, `${n}.stamp`);
    mkfifo(fifo);
    const started = async (name: string, prompt: string, extra: string[]) => {
      const d = await verb('start-subagent', ['--registry', R, '--cli', 'shell', '--name', name, '--prompt', prompt, ...extra], {
        cwd: AREA,
        env: cleanEnv({}),
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      if (json(d)?.ok !== true) throw new Error(`start-subagent ${name} failed (${d.code}): ${d.stdout.slice(0, 500)}`);
    };
    await started(dep, `read _ < ${q(fifo)}; date +%s%N > ${q(stamp(dep))}`, []);
    await started(next, `date +%s%N > ${q(stamp(next))}`, ['--after', dep]);
    // Both supervisors settled: the dependency's agent running, the dependent's supervisor waiting on it.
    const ready = await until(() => readRecord(R, dep)?.status === 'running' && readRecord(R, next)?.waitingFor?.[0] === dep, 15_000);
    if (!ready) throw new Error(`${dep} never ran, or ${next} never waited`);
    await until(() => false, 100); // the dependent's supervisor asleep in its wait
    if (!(await openGate(fifo))) throw new Error(`the gate of ${dep} never opened`);
    const done = await waitTerminal(R, ['--name', dep, '--name', next], 60);
    try {
      const ns = (n: string) => BigInt(readFileSync(stamp(n), 'utf8').trim());
      const ms = Number(ns(next) - ns(dep)) / 1e6;
      if (done.agents.every((a: any) => a.outcome === 'succeeded')) {
        if (i >= W) lat.push(ms);
      } else problems.push(`row 13: ${dep}/${next}: ${JSON.stringify(done.agents.map((a: any) => [a.name, a.outcome, a.reason]))}`);
    } catch (err) {
      problems.push(`row 13: ${dep}/${next}: no stamp (${(err as Error).message})`);
    }
    await waitQuiet(R, 10_000);
  }
  removeTree(R);
  removeTree(gates);
  report(lat);
}

function report(lat: number[]): void {
  const med = median(lat);
  const verdict = !lat.length ? 'n/a' : med <= TARGET_MS ? 'meets' : `**misses**: median ${fmtMs(med - TARGET_MS)} over 50 ms`;
  if (verdict.startsWith('**')) misses.push(`row 13 (--after: a dependency's end → its dependent's start): ${verdict}`);
  rows.push({
    what: "`--after`: a dependency's end → its dependent's start",
    target: 'median ≤ 50 ms',
    on: lat.length ? `median **${fmtMs(med)}**, p95 ${fmtMs(quantile(lat, 0.95))} (max ${fmtMs(max(lat))}, n = ${lat.length})` : 'n/a',
    plain: null,
    floor: 'absolute',
    verdict,
  });
  methods.push({
    title: "Row 12: --after, a dependency's end → its dependent's start",
    text:
      'One pair at a time: a shell run whose script is `read _ < FIFO; date +%s%N > STAMP` and a shell run started `--after` it whose script is `date +%s%N > STAMP2`. ' +
      "Once the first is `running` and the second's record says it waits for it (its supervisor watching), and 100 ms later, the bench opens the FIFO; the figure is STAMP2 − STAMP: " +
      "the dependency's shell exiting, its supervisor recording `done`, the dependent's supervisor waking on inotify, reading, recording, and spawning its agent. 2 warm-up pairs discarded.",
  });
  details.push(
    `- \`--after\`: ${lat.length} pairs: ${[...lat]
      .sort((a, b) => a - b)
      .map((x) => x.toFixed(1))
      .join(' ')} ms`,
  );
}
