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
 *                              written (titles: floor, row 1 … row 12, fast paths, node <version>, profile)
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
 *
 * This file is the runner: it runs the sections in order, then report.ts writes the page. Each row is a
 * file of its own, a function of the Node it measures — on the main Node (main = true) it measures the
 * fast paths on and the plain paths and adds its row, method and figures to results.ts; on another Node
 * only the default (fast paths on), for the table of Nodes side by side:
 *
 *   floor.ts        `node -e 0`, the floor           status.ts     row 2, status on 100 / 1 000 / 10 000 runs
 *   anchor.ts       row 2's anchor, opencode-subagent 5.0.5 (SUBAGENT_BENCH_ANCHOR)
 *   start.ts        row 1, start-subagent            wait.ts       row 3, status --wait-terminal latency
 *   fanout.ts       row 4, 200 concurrent starts     memory.ts     row 5, supervisor memory
 *   big-log.ts      row 6, result / search, 50 MB    slurm.ts      row 7, runs on Slurm
 *   sampling.ts     row 8, memory sampling's CPU     fast-paths.ts   the fast paths' A/B
 *   mcp.ts          row 9, status through subagent-mcp   where-time-goes.ts  the CPU profiles
 *   on-limit.ts     row 10, resumed after a limit     dash.ts     row 11, subagent-dash's CPU
 *   prune.ts        row 12, prune of 10 000 runs
 *                                                     after.ts      row 13, --after: dependency end → start
 *
 * What they share: setup.ts (options, temp area, clean-up, tools), nodes.ts (the Nodes, the fast paths'
 * environments), results.ts (what the rows report), timing.ts (hyperfine), runs.ts (runs, gates,
 * the big registries), util.ts (processes, /proc, statistics); by-hand.md is the page's last section.
 */
import { afterRow } from './after.js';
import { fastPathsAB } from './fast-paths.js';
import { bigLogRow } from './big-log.js';
import { fanoutRow } from './fanout.js';
import { floorRow } from './floor.js';
import { mcpRow } from './mcp.js';
import { memoryRow } from './memory.js';
import { onLimitRow } from './on-limit.js';
import { pruneRow } from './prune.js';
import { MAIN, OTHERS } from './nodes.js';
import { details, methods, rows, section } from './results.js';
import { AREA, QUICK, problems } from './setup.js';
import { samplingRow } from './sampling.js';
import { slurmRow } from './slurm.js';
import { startRow } from './start.js';
import { statusRow } from './status.js';
import { useNode } from './util.js';
import { waitRow } from './wait.js';
import { dashRow } from './dash.js';
import { profileRow } from './where-time-goes.js';
import { writeReport } from './report.js';

await section('floor: node -e 0', () => floorRow(MAIN, true));
await section('row 1: start-subagent', () => startRow(MAIN, true));
await section('row 2: status with 100, 1 000 and 10 000 runs, and the anchor', () => statusRow(MAIN, true));
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
await section('row 8: memory sampling', samplingRow);
await section('row 9: status through subagent-mcp', mcpRow);
await section('row 10: resumed after a limit', onLimitRow);
await section('row 11: subagent-dash', dashRow);
await section('row 12: prune of 10 000 runs', pruneRow);
await section("row 13: --after, a dependency's end → its dependent's start", afterRow);
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

await section('profile: --cpu-prof of status (1 000 runs) and start-subagent', profileRow);

writeReport();
