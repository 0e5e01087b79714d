/**
 * Row 2 of `make bench`: `status` on registries of 1 000 and 10 000 finished runs, against `node -e 0`.
 */
import { join } from 'node:path';
import { type NodeBin, PLAIN, shellEnv } from './nodes.js';
import { details, methods, misses, noteFor, ratioVerdict, rows, rowsOf } from './results.js';
import { bigRegistry } from './runs.js';
import { QUICK } from './setup.js';
import { FLOOR_CMD, type Timing, timeCommands, timedWithoutCaCerts, timingText, withoutCaCertsText } from './timing.js';
import { BIN, fmtMs, fmtRatio, q } from './util.js';

export async function statusRow(node: NodeBin, main: boolean): Promise<void> {
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
