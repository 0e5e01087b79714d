/**
 * The end of `make bench`: docs/benchmarks.md written from what the rows reported (unless BENCH_ONLY),
 * and the summary on stdout.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { cpus, freemem, loadavg, release, totalmem } from 'node:os';
import { join } from 'node:path';
import { abPage, comparisonsOf, fastPathVerdict, fmtGain, fmtVal } from './fast-paths.js';
import { FAST_PATHS, MAIN, OTHERS, mainIsSelf } from './nodes.js';
import { type NodeRows, details, mdTable, methods, misses, nodeDetails, nodeRows, ratioVerdict, rows } from './results.js';
import { GNU_TIME, ONLY, QUICK, benchStart, busyAtStart, finalCleanup, hyperfineVersion, loadAtStart, log, problems } from './setup.js';
import { ROOT, fmtMB, fmtMs, fmtRatio, monoMs, fmtDelta, fmtPct } from './util.js';
import { whereTheTimeGoes } from './where-time-goes.js';

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

/** Writes docs/benchmarks.md (unless BENCH_ONLY) and prints the summary; then the bench ends. */
export function writeReport(): never {
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

Each row is measured by its own file of test/bench/: the floor by floor.ts, row 1 by start.ts, row 2 by
status.ts (its anchor, the seed contract's own implementation, by anchor.ts: \`SUBAGENT_BENCH_ANCHOR\` names a
checkout of it when the npm registry does not have it), row 3 by wait.ts, row 4 by fanout.ts, row 5 by memory.ts, row 6 by big-log.ts, row 7 by
slurm.ts, row 8 by sampling.ts, row 9 by mcp.ts, row 10 by on-limit.ts, row 11 by dash.ts, row 12 by prune.ts, row 13 by after.ts, the A/B by fast-paths.ts and the profiles by where-time-goes.ts; run.ts runs them in order and
report.ts writes this page.

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

All runs but row 10's (the pinned Claude Code against the fake Anthropic server) use the built-in \`shell\` CLI (the prompt is a /bin/sh script), each row its own registry in a
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
}
