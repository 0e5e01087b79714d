/**
 * Row 12 of `make bench`: `subagent-prune` of 10 000 runs, and a listing after it. A registry of N names
 * with two finished runs each (copies of the template run, as the status rows build theirs) loses run 1
 * of every name (`--keep-last 1`): N runs moved into its trash and deleted, N journalled changes, N
 * pruned-usage files. Target: within 5 s. Then the listing: the first after the prune (every name's
 * change read from the journal, its cache rewritten) and the next ones, against the same listing of a
 * fresh registry of N names at run 1 — as fast, once the cache holds the names again.
 */
import { randomUUID } from 'node:crypto';
import { linkSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { details, methods, misses, rows } from './results.js';
import { templateRun } from './runs.js';
import { AREA, QUICK, problems } from './setup.js';
import { fmtMs, json, median, monoMs, removeTree, sleep, verb } from './util.js';

const TARGET_MS = 5000;

/** N names of `runs` finished runs each, from the template run. */
async function registryOf(label: string, n: number, runs: number): Promise<string> {
  const templateReg = await templateRun();
  const tdir = join(templateReg, 'agents', 'template', '1');
  const files = readdirSync(tdir).filter((f) => f !== 'record.json' && !f.endsWith('.lock'));
  const template = JSON.parse(readFileSync(join(tdir, 'record.json'), 'utf8'));
  const reg = join(AREA, label);
  mkdirSync(join(reg, 'agents'), { recursive: true, mode: 0o700 });
  mkdirSync(join(reg, 'tmp'), { mode: 0o700 });
  for (let i = 0; i < n; i++) {
    const name = `run-${String(i).padStart(5, '0')}`;
    for (let k = 1; k <= runs; k++) {
      const dir = join(reg, 'agents', name, String(k));
      mkdirSync(dir, { recursive: true });
      for (const f of files) linkSync(join(tdir, f), join(dir, f));
      writeFileSync(join(dir, 'record.json'), JSON.stringify({ ...template, name, run: k, runId: randomUUID() }, null, 1) + '\n');
    }
  }
  return reg;
}

async function listingMs(reg: string, times: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < times; i++) {
    const d = await verb('status', ['--registry', reg], { cwd: AREA, stdio: ['ignore', 'pipe', 'pipe'] });
    if (json(d)?.ok !== true) throw new Error(`status of ${reg}: ${d.stdout.slice(0, 300)}`);
    out.push(d.t1 - d.t0);
  }
  return out;
}

export async function pruneRow(): Promise<void> {
  const n = QUICK ? 1000 : 10_000;
  const reg = await registryOf('prune', n, 2);
  const fresh = await registryOf('prune-fresh', n, 1);
  try {
    // Done runs are cached once their records are 2 s old: both registries listed (and cached) first.
    await sleep(2200);
    await listingMs(reg, 1);
    const freshMs = await listingMs(fresh, QUICK ? 3 : 7);
    const t0 = monoMs();
    const d = await verb('prune', ['--registry', reg, '--keep-last', '1'], { cwd: AREA, stdio: ['ignore', 'pipe', 'pipe'] });
    const pruneMs = monoMs() - t0;
    const j = json(d);
    if (j?.ok !== true || j.removed.length !== n)
      problems.push(`row 12: prune removed ${j?.removed?.length ?? 'nothing'} of ${n} runs: ${d.stdout.slice(0, 300)}`);
    const [firstMs] = await listingMs(reg, 1);
    const afterMs = await listingMs(reg, QUICK ? 3 : 7);
    report(n, pruneMs, firstMs!, median(afterMs), median(freshMs));
  } finally {
    removeTree(reg);
    removeTree(fresh);
  }
}

function report(n: number, pruneMs: number, firstMs: number, afterMs: number, freshMs: number): void {
  const verdict = pruneMs <= TARGET_MS ? 'meets' : `**misses**: ${fmtMs(pruneMs - TARGET_MS)} over 5 s`;
  if (verdict.startsWith('**')) misses.push(`row 12 (prune of ${n} runs): ${verdict}`);
  rows.push({
    what: `\`subagent-prune --keep-last 1\` of ${n} runs (${n} names of 2 runs), and a listing after it`,
    target: 'within 5 s; the listing as fast as a fresh registry’s',
    on: `**${fmtMs(pruneMs)}**; listing after it ${fmtMs(afterMs)} (the first ${fmtMs(firstMs)}), fresh ${fmtMs(freshMs)}`,
    plain: null,
    floor: 'a fresh registry’s listing',
    verdict,
  });
  methods.push({
    title: 'Row 12: prune',
    text: `A registry of ${n} names with two finished runs each (copies of the template run, their other files hard links) is listed once (its status cache filled), then \`subagent-prune --keep-last 1\` removes run 1 of every name: each name's change journalled, its pruned usage written, its run renamed into the trash and deleted. The figure is the verb's wall time. Then \`subagent-status\` of the whole registry: the first listing after the prune (it reads every changed name again and rewrites its cache) and the median of the next ones, beside the median listing of a fresh registry of ${n} names at run 1.`,
  });
  details.push(
    `Row 12: prune ${fmtMs(pruneMs)}; listing after it: first ${fmtMs(firstMs)}, then median ${fmtMs(afterMs)}; a fresh registry's: median ${fmtMs(freshMs)}.`,
  );
}
