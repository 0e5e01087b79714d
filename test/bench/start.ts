/**
 * Row 1 of `make bench`: `start-subagent --cli shell`, the whole process, against `node -e 0`.
 */
import { join } from 'node:path';
import { type NodeBin, PLAIN, shellEnv } from './nodes.js';
import { details, methods, misses, noteFor, ratioVerdict, rows, rowsOf } from './results.js';
import { AREA, QUICK, problems } from './setup.js';
import { FLOOR_CMD, type Timing, timeCommands, timedWithoutCaCerts, timingText, withoutCaCertsText } from './timing.js';
import { BENCH_DIST, BIN, fmtMs, fmtRatio, recordsOf, removeTree, waitQuiet, q } from './util.js';

export async function startRow(node: NodeBin, main: boolean): Promise<void> {
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
