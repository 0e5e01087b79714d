/**
 * Row 4 of `make bench`: 200 `start-subagent` released at the same moment.
 */
import { closeSync, constants, openSync, readlinkSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { PLAIN } from './nodes.js';
import { details, methods, misses, rows } from './results.js';
import { mkfifo, until, waitTerminal } from './runs.js';
import { AREA, QUICK, problems } from './setup.js';
import { BIN, cleanEnv, fmtMs, json, max, median, monoMs, nodeBin, recordsOf, removeTree, run, waitQuiet, pad } from './util.js';

interface Fanout {
  n: number;
  recorded: number;
  errors: number;
  codes: Map<string, number>;
  finished: number;
  succeeded: number;
  launched: number;
  allBlocked: boolean;
  returned: number;
  perStartMedian: number;
  allDone: number;
  quiet: number;
  waitNote: string;
}
async function fanout(N: number, env: Record<string, string>, tag: string): Promise<Fanout> {
  const R = join(AREA, `fanout-${tag}`);
  // A barrier: every start is a shell blocked reading a FIFO whose only writer is the bench; once all N
  // are blocked there, closing it gives them all EOF at once and each execs its start-subagent.
  const gate = join(AREA, `fanout-gate-${tag}`);
  mkfifo(gate);
  const gateReal = realpathSync(gate);
  const holder = openSync(gate, constants.O_RDWR); // on Linux a FIFO opened read-write never blocks
  const tSpawn = monoMs();
  const starts: Array<ReturnType<typeof run>> = [];
  for (let i = 0; i < N; i++) {
    const args = [join(BIN, 'start-subagent'), '--registry', R, '--cli', 'shell', '--name', `fan/${pad(i)}`, '--prompt', 'true'];
    starts.push(run('sh', ['-c', 'read _ < "$0"; exec "$@"', gate, nodeBin(), ...args], { cwd: AREA, env: cleanEnv(env), stdio: ['ignore', 'pipe', 'pipe'] }));
  }
  const blocked = (pid: number | undefined) => {
    try {
      return readlinkSync(`/proc/${pid}/fd/0`) === gateReal;
    } catch {
      return false;
    }
  };
  const allBlocked = await until(() => starts.every((st) => blocked(st.child.pid)), 120_000, 20);
  const launched = monoMs() - tSpawn;
  const t0 = monoMs();
  closeSync(holder);
  const results = await Promise.all(starts);
  const returned = max(results.map((r) => r.t1)) - t0;
  if (!allBlocked) problems.push(`row 4 (${tag}): not every start was waiting at the barrier when it opened`);
  const errors = results.filter((r) => r.code !== 0 || json(r)?.ok !== true);
  const codes = new Map<string, number>();
  for (const e of errors) {
    const c = json(e)?.code ?? `exit ${e.code}`;
    codes.set(c, (codes.get(c) ?? 0) + 1);
  }
  const recorded = recordsOf(R).filter((r) => r.name?.startsWith('fan/')).length;
  let finished = 0;
  let succeeded = 0;
  let waitNote = '';
  try {
    const j = await waitTerminal(R, ['--prefix', 'fan'], 300);
    finished = j.agents.filter((a: any) => a.status === 'done').length;
    succeeded = j.agents.filter((a: any) => a.status === 'done' && a.outcome === 'succeeded').length;
  } catch (err) {
    waitNote = ` (wait failed: ${(err as Error).message.slice(0, 200)})`;
  }
  const allDone = monoMs() - t0;
  await waitQuiet(R, 60_000);
  const quiet = monoMs() - t0;
  removeTree(R);
  return {
    n: N,
    recorded,
    errors: errors.length,
    codes,
    finished,
    succeeded,
    launched,
    allBlocked,
    returned,
    perStartMedian: median(results.map((r) => r.t1 - t0)),
    allDone,
    quiet,
    waitNote,
  };
}

export async function fanoutRow(): Promise<void> {
  const N = QUICK ? 50 : 200;
  const on = await fanout(N, {}, 'on');
  const plain = await fanout(N, PLAIN, 'plain');
  const meets = (f: Fanout) => f.recorded === N && f.errors === 0 && f.finished === N;
  const cell = (f: Fanout) =>
    `**${f.recorded}/${N}** recorded, **${f.errors}** errors, **${f.finished}/${N}** finished (${f.succeeded} succeeded); all returned in ${fmtMs(f.returned, 0)}, all done in ${fmtMs(f.allDone, 0)}`;
  const verdictOf = (f: Fanout) => (meets(f) ? 'meets' : `**misses**: ${N - f.recorded} not recorded, ${f.errors} errors, ${N - f.finished} not finished`);
  rows.push({
    what: `${N} \`start-subagent\` launched at the same moment`,
    target: `${N} of ${N} recorded, 0 errors, all finish`,
    on: cell(on),
    plain: cell(plain),
    floor: 'count',
    verdict: `on: ${verdictOf(on)}; plain: ${verdictOf(plain)}`,
  });
  const fanMisses = (
    [
      [on, 'fast paths on'],
      [plain, 'plain paths'],
    ] as const
  ).filter(([f]) => !meets(f));
  if (fanMisses.length)
    misses.push(
      `${N} simultaneous starts: ${fanMisses.map(([f, what]) => `${what}: ${verdictOf(f).replace('**misses**: ', '')}${f.codes.size ? ` (${[...f.codes].map(([c, k]) => `${c} × ${k}`).join(', ')})` : ''}`).join('; ')}.`,
    );
  const text = (f: Fanout, what: string) =>
    `- ${what}: ${N} shells spawned and blocked at the barrier in ${fmtMs(f.launched, 0)} (${f.allBlocked ? 'all' : '**not all**'}); released at once: ` +
    `the last start returned after ${fmtMs(f.returned, 0)} (per start, release → exit, median ${fmtMs(f.perStartMedian, 0)}); ` +
    `recorded ${f.recorded}/${N}; errors ${f.errors}${f.codes.size ? ` (${[...f.codes].map(([c, k]) => `${c} × ${k}`).join(', ')})` : ''}; ` +
    `\`status --wait-terminal --prefix fan\` returned after ${fmtMs(f.allDone, 0)}: ${f.finished}/${N} done, ${f.succeeded} succeeded${f.waitNote}; every supervisor had exited after ${fmtMs(f.quiet, 0)}`;
  details.push(`### 4. ${N} concurrent starts\n\n${text(on, 'fast paths on')}\n${text(plain, 'plain paths')}`);
  methods.push({
    title: '4. concurrent starts',
    text:
      `${N} shells \`read _ < FIFO; exec node bin/start-subagent --cli shell --name fan/NNN --prompt true\` are spawned; once every one ` +
      "is blocked reading the FIFO (its fd 0 points at it, seen in /proc), the bench closes the FIFO's only writer and all of them get EOF " +
      'at the same moment and exec their start. The bench collects every exit code and JSON line, counts the records on disk, then waits ' +
      'with `bin/status --wait-terminal --prefix fan` and counts `done`. Wall times are from the release. Done once with the fast paths on, then once with `SUBAGENT_FAST_PATHS=0`, each in its own registry.',
  });
}
