/**
 * Row 2 of `make bench`: `status` on registries of 100, 1 000 and 10 000 finished runs (and 50 running),
 * against `node -e 0` and against the anchor's own `status` (anchor.ts) on the same number of runs,
 * with `--brief` beside the full listing.
 */
import { join } from 'node:path';
import { anchorRegistry, anchorScript, ANCHOR } from './anchor.js';
import { type NodeBin, PLAIN, shellEnv } from './nodes.js';
import { details, methods, misses, noteFor, ratioVerdict, rows, rowsOf } from './results.js';
import { bigRegistry, RUNNING, runningHolder } from './runs.js';
import { AREA, QUICK } from './setup.js';
import { FLOOR_CMD, type Timing, timeCommands, timedWithoutCaCerts, timingText, withoutCaCertsText } from './timing.js';
import { BIN, fmtMs, fmtRatio, q, run, cleanEnv } from './util.js';

/** The targets: of `node -e 0` (none at 100), and of the anchor (ours / theirs). */
const FLOOR_LIMIT: Record<number, number | null> = { 100: null, 1000: 1.3, 10000: 2 };
const ANCHOR_LIMIT: Record<number, number> = { 100: 1, 1000: 0.8, 10000: 1 };

/** The bytes a listing prints. */
async function bytesOf(cmd: string, cwd = AREA): Promise<number> {
  const d = await run('sh', ['-c', cmd], { cwd, env: cleanEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
  return Buffer.byteLength(d.stdout);
}

export async function statusRow(node: NodeBin, main: boolean): Promise<void> {
  const figures: string[] = [];
  const anchor = main ? anchorScript() : 'measured on the main Node only';
  for (const n of [100, 1000, 10000]) {
    if (!main && n === 100) continue;
    const big = await bigRegistry(n);
    const dir = big.dir;
    const runs = QUICK ? 5 : n === 10000 ? (main ? 8 : 6) : main ? 40 : 20;
    const rounds = QUICK ? 1 : n === 10000 ? 2 : main ? 10 : 4;
    const statusCmd = `${q(join(BIN, 'status'))} --registry ${q(dir)} >/dev/null`;
    const briefCmd = `${q(join(BIN, 'status'))} --brief --registry ${q(dir)} >/dev/null`;
    const anchorDir = typeof anchor === 'string' ? null : anchorRegistry(n, RUNNING, runningHolder(), AREA);
    const anchorCmd = typeof anchor === 'string' || !anchorDir ? null : `cd ${q(anchorDir)} && node ${q(anchor.script)} status >/dev/null`;
    const cmds = [
      { name: 'node -e 0', cmd: FLOOR_CMD },
      { name: `status ${n}`, cmd: statusCmd },
    ];
    if (main) {
      cmds.push({ name: `status ${n} (plain paths)`, cmd: shellEnv(PLAIN) + statusCmd });
      cmds.push({ name: `status --brief ${n}`, cmd: briefCmd });
      if (anchorCmd) cmds.push({ name: `anchor status ${n}`, cmd: anchorCmd });
    }
    const [floor, on, plain, brief, theirs] = await timeCommands(cmds, { runs, warmup: n === 10000 ? 1 : 2, rounds });
    const ratio = (t: Timing) => t.median / floor!.median;
    const limit = FLOOR_LIMIT[n] ?? null;
    const forNode = rowsOf(node);
    forNode.status ??= {};
    forNode.status[n] = { ms: on!.median, ratio: ratio(on!) };
    if (!main) {
      noteFor(node, `- \`status\` with ${n} runs: ${timingText(on!)}; floor ${timingText(floor!)}; ratio of medians **${fmtRatio(ratio(on!))}**`);
      continue;
    }
    const count = n.toLocaleString('en-US').replace(',', ' ');
    // the same listing with no cache (each timed run first deletes it): what the first listing after the runs ended costs
    let coldText = '';
    if (n >= 1000) {
      const [coldFloor, cold] = await timeCommands(
        [
          { name: 'node -e 0', cmd: FLOOR_CMD },
          { name: `status ${n} (no cache)`, cmd: statusCmd },
        ],
        { runs: QUICK ? 3 : n === 1000 ? 10 : 4, warmup: 0, rounds: 1, prepare: `rm -f ${q(join(dir, 'status-cache'))}` },
      );
      coldText = `\n  - the first listing after the runs ended (no status cache yet: every record read, the cache written): median ${fmtMs(cold!.median)} → ${fmtRatio(cold!.median / coldFloor!.median)} (floor median ${fmtMs(coldFloor!.median)})`;
    }
    const lean =
      n >= 1000
        ? await timedWithoutCaCerts('status', statusCmd, { runs: QUICK ? 4 : n === 1000 ? 20 : 6, warmup: 1, rounds: QUICK ? 1 : n === 1000 ? 4 : 2 })
        : null;
    const leanText = lean ? withoutCaCertsText(lean, 'status') : null;
    const fullBytes = await bytesOf(statusCmd.replace(' >/dev/null', ''));
    const briefBytes = await bytesOf(briefCmd.replace(' >/dev/null', ''));
    const theirBytes = anchorCmd ? await bytesOf(anchorCmd.replace(' >/dev/null', '')) : NaN;
    const perRun = (b: number) => `${Math.round(b / (n + RUNNING))} B/run`;
    const vsAnchor = theirs ? on!.median / theirs.median : NaN;
    const cell = (t: Timing) =>
      `median ${fmtMs(t.median)} → **${fmtRatio(ratio(t))}** (mean ${fmtRatio(t.mean / floor!.mean)}, min ${fmtRatio(t.min / floor!.min)})`;
    const anchorCell = theirs
      ? `; anchor (${ANCHOR.package} ${ANCHOR.version} \`status\`): median ${fmtMs(theirs.median)} → ours **${fmtRatio(vsAnchor)}** of it; \`--brief\`: median ${fmtMs(brief!.median)} (${fmtRatio(brief!.median / theirs.median)} of the anchor)`
      : `; \`--brief\`: median ${fmtMs(brief!.median)}; anchor: not measured (${anchor})`;
    const verdicts = [
      limit === null ? null : `on: ${ratioVerdict(ratio(on!), limit)}; plain: ${ratioVerdict(ratio(plain!), limit)}`,
      theirs
        ? `vs the anchor: ${vsAnchor <= ANCHOR_LIMIT[n]! ? 'meets' : `**misses** (${fmtRatio(vsAnchor)} vs ${ANCHOR_LIMIT[n] === 1 ? '< 1' : `≤ ${ANCHOR_LIMIT[n]}`} ×)`}`
        : null,
    ].filter(Boolean);
    rows.push({
      what: `\`status\` with ${count} runs in the registry (and ${RUNNING} running)`,
      target: [limit === null ? null : `≤ ${limit} × \`node -e 0\``, ANCHOR_LIMIT[n] === 1 ? 'faster than the anchor' : `≤ ${ANCHOR_LIMIT[n]} × the anchor`]
        .filter(Boolean)
        .join('; '),
      on: cell(on!) + anchorCell + (leanText?.cell ?? ''),
      plain: cell(plain!),
      floor: `median ${fmtMs(floor!.median)}`,
      verdict: verdicts.join('; ') || 'measured',
    });
    if (limit !== null) {
      const statusMisses = (
        [
          [
            on!,
            'fast paths on',
            "done runs come from the status cache, proven by the journal's new lines; what remains is Node's start-up, the bundle, reading and checking the cache file, the running runs read fresh, and printing the listing",
          ],
          [plain!, 'plain paths', "without the status cache every run's record.json is read and parsed, and its view rendered, on every listing"],
        ] as const
      ).filter(([t]) => ratio(t) > limit);
      if (statusMisses.length)
        misses.push(
          `\`status\` with ${count} runs: ${statusMisses.map(([t, what, why]) => `${what} ${fmtRatio(ratio(t))} of \`node -e 0\` (${fmtMs(t.median)} vs ${fmtMs(floor!.median)}: ${(ratio(t) - limit).toFixed(2)} × over the ${limit} × target, ${fmtMs(t.median - limit * floor!.median)} too slow; ${why})`).join('; ')}.`,
        );
    }
    figures.push(
      `- ${n} runs and ${RUNNING} running (registry built in ${fmtMs(big.buildMs, 0)}; checked: status lists ${big.listed}, ${big.done} \`done\`, ${big.running} \`running\`, ${big.problems} problems)\n` +
        `  - \`node -e 0\`: ${timingText(floor!)}\n  - \`status\` (fast paths on): ${timingText(on!)}\n  - \`status\` (plain paths): ${timingText(plain!)}\n  - \`status --brief\`: ${timingText(brief!)}\n` +
        (theirs ? `  - the anchor's \`status\`: ${timingText(theirs)}\n` : '') +
        `  - ratio of medians **${fmtRatio(ratio(on!))}** on, **${fmtRatio(ratio(plain!))}** plain, ${fmtRatio(ratio(brief!))} brief${theirs ? `, ${fmtRatio(ratio(theirs))} the anchor; ours / the anchor **${fmtRatio(vsAnchor)}**, brief / the anchor ${fmtRatio(brief!.median / theirs.median)}` : ''}${limit === null ? '' : ` (target ≤ ${limit} ×)`}\n` +
        `  - bytes printed: full ${(fullBytes / 1e3).toFixed(0)} KB (${perRun(fullBytes)}), \`--brief\` ${(briefBytes / 1e3).toFixed(0)} KB (${perRun(briefBytes)})${theirs ? `, the anchor ${(theirBytes / 1e3).toFixed(0)} KB (${perRun(theirBytes)})` : ''}\n` +
        (leanText ? `  - ${leanText.line}\n` : '') +
        coldText.replace(/^\n/, ''),
    );
  }
  if (!main) return;
  details.push(`### 2. \`status\` on big registries\n\n${figures.join('\n')}`);
  methods.push({
    title: '2. status with 100 / 1 000 / 10 000 runs, against the anchor',
    text:
      'One real run (`--cli shell`, `echo …`) is started and waited for; its run directory (record.json, prompt, events.log, stderr.log, ' +
      "supervisor.log) is the template. Each big registry is `agents/run-NNNNN/1/` × N: hard links to the template's files, and its own record.json with " +
      `its own \`name\` and a fresh \`runId\` (the record format a run writes; no run is started, so 10 000 take a second or two), and ${RUNNING} \`agents/live-NNN/1/\` whose record says \`running\` with a live process the bench owns as its supervisor. Once the records are 2 s old (the age at which the status cache keeps a finished run), one \`status\` must list all of them, with no ` +
      "`problems` (it fills the cache). Then hyperfine times, interleaved in rounds, `node -e 0`, `bin/status --registry R >/dev/null`, the same with `SUBAGENT_FAST_PATHS=0`, `bin/status --brief`, and the anchor's own `status` " +
      `(${ANCHOR.package} ${ANCHOR.version}, anchor.ts: pinned by the SHA-256 of its script) run from a directory holding its registry in its own format — \`.opencode-subagent/registry.json\`, one JSON object of N done records as its run-worker writes them and ${RUNNING} \`running\` ones whose pid is that same live process — (40 runs each at 100 and 1 000 in 10 rounds, 8 at 10 000 in 2 rounds). The verdict uses the ratio of medians; the ratio of minimums is shown too, as the machine may be shared. Bytes printed are counted once per listing. The first listing after the runs ended (no cache yet) is timed too at 1 000 and 10 000, 10 runs (4 at 10 000) each after deleting \`status-cache\` (hyperfine \`--prepare\`); it is not the row's verdict. With NODE_EXTRA_CA_CERTS set (as on this machine), floor and listing are timed again with it unset, as in row 1.`,
  });
}
