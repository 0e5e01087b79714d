/**
 * Timing shell commands: hyperfine in rounds (or an own loop without it), the floor `node -e 0`, and the
 * same again without the machine's NODE_EXTRA_CA_CERTS.
 */
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { AREA, HYPERFINE } from './setup.js';
import { cleanEnv, fmtMs, fmtRatio, mean, median, run } from './util.js';

export interface Timing {
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

export const FLOOR_CMD = 'node -e 0';

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
export async function timeCommands(
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

export function timingText(t: Timing): string {
  return `mean ${fmtMs(t.mean)} ± ${fmtMs(t.stddev)}, median ${fmtMs(t.median)}, min ${fmtMs(t.min)}, max ${fmtMs(t.max)} (${t.times.length} runs${t.failures ? `, ${t.failures} failed` : ''})`;
}

/**
 * NODE_EXTRA_CA_CERTS, when the machine sets it, may make every node parse that CA bundle while it starts
 * (Node 20 did, ~35 ms on the test VM): a constant that would inflate the floor and flatter every ratio.
 * Rows 1 and 2 are therefore timed again without it, and both ratios are printed; the verdicts stay on the
 * machine as it is. Null when the variable is not set (then there is nothing to take away).
 */
export async function timedWithoutCaCerts(
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
export function withoutCaCertsText(lean: { floor: Timing; cmd: Timing }, name: string): { cell: string; line: string } {
  const ratio = fmtRatio(lean.cmd.median / lean.floor.median);
  return {
    cell: `; without the machine's NODE_EXTRA_CA_CERTS: median ${fmtMs(lean.cmd.median)} vs ${fmtMs(lean.floor.median)} → ${ratio}`,
    line: `without NODE_EXTRA_CA_CERTS (this machine sets it for every process): \`node -e 0\` ${timingText(lean.floor)}; \`${name}\` ${timingText(lean.cmd)}; ratio of medians **${ratio}**`,
  };
}
