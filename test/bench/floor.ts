/**
 * The floor of `make bench`: `node -e 0`, against which each row's ratio is taken.
 */
import type { NodeBin } from './nodes.js';
import { details, methods, noteFor, rowsOf } from './results.js';
import { QUICK } from './setup.js';
import { FLOOR_CMD, timeCommands, timingText } from './timing.js';

export async function floorRow(node: NodeBin, main: boolean): Promise<void> {
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
