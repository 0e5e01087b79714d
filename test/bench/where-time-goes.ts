/**
 * "Where the time goes" of `make bench`: `node --cpu-prof` of `status` (1 000 runs) and of
 * `start-subagent`, summarised by test/bench/profile.ts into the page's tables.
 */
import { mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { type ProfileSummary, summarise } from './profile.js';
import { mdTable } from './results.js';
import { bigRegistry } from './runs.js';
import { AREA, QUICK } from './setup.js';
import { BIN, cleanEnv, fmtMs, nodeBin, run, waitQuiet } from './util.js';

let statusProfile: ProfileSummary | null = null;
let startProfile: ProfileSummary | null = null;

/** CPU profiles of `status` on 1 000 runs and of `start-subagent`, summarised for the page. */
export async function profileRow(): Promise<void> {
  const P = join(AREA, 'profiles');
  const K = QUICK ? 2 : 5;
  const profileOf = async (label: string, args: (k: number) => string[]) => {
    const dir = join(P, label);
    mkdirSync(dir, { recursive: true });
    for (let k = 0; k < K; k++) {
      const d = await run(nodeBin(), ['--cpu-prof', '--cpu-prof-dir', dir, '--cpu-prof-interval', '100', ...args(k)], {
        cwd: AREA,
        env: cleanEnv(),
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      if (d.code !== 0) throw new Error(`${label} exited ${d.code}: ${d.stdout.slice(0, 200)}`);
    }
    return summarise(readdirSync(dir).map((f) => join(dir, f)));
  };
  const reg1000 = (await bigRegistry(1000)).dir;
  statusProfile = await profileOf('status', () => [join(BIN, 'status'), '--registry', reg1000]);
  const R = join(AREA, 'profile-start');
  startProfile = await profileOf('start', (k) => [join(BIN, 'start-subagent'), '--registry', R, '--cli', 'shell', '--name', `p${k}`, '--prompt', 'true']);
  await waitQuiet(R, 20_000);
}

/** The page's section "Where the time goes", from the profiles. */
export function whereTheTimeGoes(): string {
  const out: string[] = [];
  const prof = (title: string, p: ProfileSummary | null) => {
    if (!p) return;
    out.push(
      `#### ${title}\n\n${p.profiles} profiles (\`node --cpu-prof --cpu-prof-interval 100\`, fast paths on), averaged: ${fmtMs(p.profiledMs)} profiled per run (the profiler starts after Node's own bootstrap).\n`,
    );
    out.push(
      'Self time by kind:\n\n' +
        mdTable(
          ['kind', 'ms / run', 'share'],
          p.byCategory.map((c) => [c.key, c.ms.toFixed(1), `${(c.share * 100).toFixed(0)} %`]),
        ),
    );
    out.push(
      '\nTop functions by self time:\n\n' +
        mdTable(
          ['function', 'ms / run', 'share'],
          p.byFunction.slice(0, 12).map((c) => [`\`${c.key}\``, c.ms.toFixed(1), `${(c.share * 100).toFixed(1)} %`]),
        ),
    );
    out.push(
      "\nInclusive time of the project's functions (and dependencies, and the module loader's entry points):\n\n" +
        mdTable(
          ['function', 'ms / run', 'share'],
          p.inclusive.slice(0, 12).map((c) => [`\`${c.key}\``, c.ms.toFixed(1), `${(c.share * 100).toFixed(1)} %`]),
        ),
    );
    out.push('');
  };
  prof('`status` with 1 000 runs', statusProfile);
  prof('`start-subagent --cli shell`', startProfile);
  return out.join('\n');
}
