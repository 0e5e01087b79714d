/**
 * Row 5 of `make bench`: a supervisor's memory, alone and with 50 running, against idle `node`s.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { FAST_PATHS, type NodeBin, PLAIN } from './nodes.js';
import { details, methods, misses, noteFor, rows, rowsOf } from './results.js';
import { mkfifo, openGate, readRecord, start, until, waitTerminal } from './runs.js';
import { AREA, QUICK } from './setup.js';
import { cleanEnv, fmtMB, isAlive, max, mean, median, memoryOf, nodeBin, removeTree, run, sleep, waitQuiet, fmtDelta, pad, q } from './util.js';

type Mem = ReturnType<typeof memoryOf>;

/** One supervisor alone, then n at once, each of a run blocked in `read _ < FIFO`; their /proc memory. */
async function supervisorMemory(node: NodeBin, env: Record<string, string>, tag: string, N: number): Promise<{ solo: Mem; many: Mem[] }> {
  const R = join(AREA, `memory-${node.tag}-${tag}`);
  const gates = join(AREA, `gates-memory-${node.tag}-${tag}`);
  mkdirSync(gates);
  const supOf = (name: string) => {
    const r = readRecord(R, name);
    return r?.status === 'running' && r.supervisor && isAlive(r.supervisor) ? (r.supervisor.pid as number) : null;
  };
  mkfifo(join(gates, 'solo'));
  await start(R, 'solo', `read _ < ${q(join(gates, 'solo'))}`, env);
  if (!(await until(() => supOf('solo') !== null, 15_000))) throw new Error('the solo run never reached running');
  await sleep(500);
  const solo = memoryOf(supOf('solo')!);
  await openGate(join(gates, 'solo'));
  await waitTerminal(R, ['--name', 'solo'], 30);
  await waitQuiet(R, 10_000);
  const names = Array.from({ length: N }, (_, i) => `mem/${pad(i)}`);
  for (const n of names) mkfifo(join(gates, n.replace('/', '-')));
  for (let i = 0; i < N; i += 5) {
    await Promise.all(names.slice(i, i + 5).map((n) => start(R, n, `read _ < ${q(join(gates, n.replace('/', '-')))}`, env)));
  }
  if (!(await until(() => names.every((n) => supOf(n) !== null), 60_000, 50))) throw new Error('not every run reached running');
  await sleep(1000);
  const many = names.map((n) => memoryOf(supOf(n)!));
  for (const n of names) await openGate(join(gates, n.replace('/', '-')));
  await waitTerminal(R, ['--prefix', 'mem'], 120);
  await waitQuiet(R, 30_000);
  removeTree(R); // each row frees its disk space as soon as it is done
  removeTree(gates);
  return { solo, many };
}

/** Idle bare Node processes (`node -e 'setTimeout(…)'`), k at once, measured the same way. */
async function idleNodes(k: number, env: NodeJS.ProcessEnv): Promise<Mem[]> {
  const procs = Array.from({ length: k }, () => run(nodeBin(), ['-e', 'setTimeout(() => {}, 120000)'], { cwd: AREA, env, stdio: 'ignore' }));
  await sleep(k > 1 ? 1500 : 700);
  const ms = procs.map((p) => memoryOf(p.child.pid!));
  for (const p of procs) p.child.kill('SIGKILL');
  await Promise.all(procs);
  return ms;
}

export async function memoryRow(node: NodeBin, main: boolean): Promise<void> {
  const N = QUICK ? 10 : 50;
  const on = await supervisorMemory(node, {}, 'on', N);
  const plain = main ? await supervisorMemory(node, PLAIN, 'plain', N) : null;
  // the floor: idle bare Node, one alone and N at once, in the machine's environment; and, when the machine
  // sets NODE_EXTRA_CA_CERTS, without it too: a supervisor started with the held-env fast path runs without it
  const caSet = !!process.env.NODE_EXTRA_CA_CERTS;
  const idleMachine = { one: (await idleNodes(1, cleanEnv()))[0]!, many: await idleNodes(N, cleanEnv()) };
  const noCa = cleanEnv();
  delete noCa.NODE_EXTRA_CA_CERTS;
  const idleNoCa = caSet ? { one: (await idleNodes(1, noCa))[0]!, many: await idleNodes(N, noCa) } : idleMachine;
  // which floor a supervisor compares with: the environment it ran in
  const heldOn = FAST_PATHS.includes('held-env');
  const idleFor = (variant: 'on' | 'plain') => (variant === 'on' && heldOn ? idleNoCa : idleMachine);
  const sum = (s: { solo: Mem; many: Mem[] }, variant: 'on' | 'plain') => {
    const idle = idleFor(variant);
    const pssMean = mean(s.many.map((m) => m.pssKb));
    const idlePss = mean(idle.many.map((m) => m.pssKb));
    return {
      rssAlone: s.solo.rssKb,
      rssMax: max([s.solo.rssKb, ...s.many.map((m) => m.rssKb)]),
      pssMean,
      anonMean: mean(s.many.map((m) => m.pssAnonKb)),
      idleRss: idle.one.rssKb,
      idlePss,
      idleAnon: mean(idle.many.map((m) => m.pssAnonKb)),
    };
  };
  const o = sum(on, 'on');
  rowsOf(node).memory = { rssAlone: o.rssAlone, pssMean: o.pssMean, n: N, idleRss: o.idleRss, idlePss: o.idlePss, idleAnon: o.idleAnon, anonMean: o.anonMean };
  const line = (s: { solo: Mem; many: Mem[] }, x: ReturnType<typeof sum>) =>
    `one supervisor alone, its agent running: VmRSS ${fmtMB(s.solo.rssKb)}, VmHWM ${fmtMB(s.solo.hwmKb)}, PSS ${fmtMB(s.solo.pssKb)} (anon ${fmtMB(s.solo.pssAnonKb)}, file ${fmtMB(s.solo.pssFileKb)}); ` +
    `${N} running at once: VmRSS median ${fmtMB(median(s.many.map((m) => m.rssKb)))}, max ${fmtMB(max(s.many.map((m) => m.rssKb)))}; ` +
    `PSS mean ${fmtMB(x.pssMean)}, max ${fmtMB(max(s.many.map((m) => m.pssKb)))} (anon mean ${fmtMB(x.anonMean)}, file mean ${fmtMB(mean(s.many.map((m) => m.pssFileKb)))}); ` +
    `over an idle \`node\` of the same version in the same environment: ${fmtDelta(x.rssAlone - x.idleRss)} RSS, ${fmtDelta(x.pssMean - x.idlePss)} PSS, ${fmtDelta(x.anonMean - x.idleAnon)} anonymous`;
  const idleLine = (label: string, idle: { one: Mem; many: Mem[] }) =>
    `idle bare \`node\` (${label}): alone VmRSS ${fmtMB(idle.one.rssKb)}, PSS ${fmtMB(idle.one.pssKb)} (anon ${fmtMB(idle.one.pssAnonKb)}); ${N} at once: VmRSS median ${fmtMB(median(idle.many.map((m) => m.rssKb)))}, PSS mean ${fmtMB(mean(idle.many.map((m) => m.pssKb)))} (anon mean ${fmtMB(mean(idle.many.map((m) => m.pssAnonKb)))})`;
  if (!main) {
    noteFor(node, `- supervisor memory: ${line(on, o)}`);
    noteFor(
      node,
      `- ${idleLine(caSet ? 'without NODE_EXTRA_CA_CERTS' : "the machine's environment", idleNoCa)}${caSet ? `; ${idleLine('with it', idleMachine)}` : ''}`,
    );
    return;
  }
  const p = sum(plain!, 'plain');
  const cell = (x: ReturnType<typeof sum>) =>
    `RSS alone **${fmtMB(x.rssAlone)}** (max ${fmtMB(x.rssMax)}), PSS mean with ${N} running **${fmtMB(x.pssMean)}** (anon ${fmtMB(x.anonMean)}); over idle \`node\`: **${fmtDelta(x.rssAlone - x.idleRss)}** RSS, **${fmtDelta(x.pssMean - x.idlePss)}** PSS`;
  const verdictOf = (x: ReturnType<typeof sum>) => {
    if (!Number.isFinite(x.rssMax) || !Number.isFinite(x.pssMean)) return 'n/a';
    const over: string[] = [];
    if (x.rssMax > 40 * 1024) over.push(`RSS by ${fmtMB(x.rssMax - 40 * 1024)}`);
    if (x.pssMean > 8 * 1024) over.push(`PSS by ${fmtMB(x.pssMean - 8 * 1024)}`);
    return over.length ? `**misses**: ${over.join(', ')} (an idle \`node\` alone: ${fmtMB(x.idleRss)} RSS, ${fmtMB(x.idlePss)} PSS with ${N})` : 'meets';
  };
  rows.push({
    what: 'supervisor memory',
    target: '≤ 40 MB RSS each; PSS per supervisor with 50 running ≤ 8 MB',
    on: cell(o),
    plain: cell(p),
    floor: `idle \`node\`: RSS ${fmtMB(idleNoCa.one.rssKb)}, PSS mean with ${N} running ${fmtMB(mean(idleNoCa.many.map((m) => m.pssKb)))} (anon ${fmtMB(mean(idleNoCa.many.map((m) => m.pssAnonKb)))})${caSet ? `; with NODE_EXTRA_CA_CERTS: RSS ${fmtMB(idleMachine.one.rssKb)}, PSS ${fmtMB(mean(idleMachine.many.map((m) => m.pssKb)))}` : ''}`,
    verdict: `on: ${verdictOf(o)}; plain: ${verdictOf(p)}`,
  });
  const memMisses = (
    [
      [o, 'fast paths on'],
      [p, 'plain paths'],
    ] as const
  ).filter(([x]) => verdictOf(x).startsWith('**misses'));
  if (memMisses.length)
    misses.push(
      `Supervisor memory: ${memMisses.map(([x, what]) => `${what} RSS ${fmtMB(x.rssMax)}, PSS ${fmtMB(x.pssMean)} with ${N} running`).join('; ')} (targets 40 MB RSS, 8 MB PSS). ` +
        `An idle \`node -e "setTimeout(…)"\` of the same version (${node.version}) is already ${fmtMB(o.idleRss)} RSS alone and ${fmtMB(o.idlePss)} PSS with ${N} of them (${fmtMB(o.idleAnon)} of it anonymous, which no sharing divides): ` +
        `no Node process meets these targets on this Node, so the supervisor's own share is its excess over that floor: ${memMisses.map(([x, what]) => `${what} **${fmtDelta(x.rssAlone - x.idleRss)} RSS, ${fmtDelta(x.pssMean - x.idlePss)} PSS** (${fmtDelta(x.anonMean - x.idleAnon)} anonymous)`).join('; ')}. ` +
        'The targets were set when the project ran on Node 20, whose idle process measured 39.4 MB RSS and 6.8 MB PSS with 50 (this page, as of commit 3531f1f).',
    );
  details.push(
    `### 5. Supervisor memory\n\n` +
      `- fast paths on: ${line(on, o)}\n- plain paths: ${line(plain!, p)}\n` +
      `- ${idleLine(caSet ? 'without NODE_EXTRA_CA_CERTS, the floor of a supervisor started with held-env' : "the machine's environment", idleNoCa)}\n` +
      (caSet ? `- ${idleLine("with the machine's NODE_EXTRA_CA_CERTS, the floor of a plain supervisor", idleMachine)}\n` : ''),
  );
  methods.push({
    title: '5. supervisor memory',
    text:
      'Runs whose script blocks in `read _ < FIFO` (no CPU, no output). First one alone, then 50 (started 5 at a time); once every ' +
      "record says `running` with a live supervisor (+0.5 s alone, +1 s for the 50), each supervisor's `VmRSS`/`VmHWM` is read from " +
      '/proc/<pid>/status and its `Pss`/`Pss_Anon`/`Pss_File` from /proc/<pid>/smaps_rollup (the pid is the one recorded, identity-checked). Then every gate is ' +
      'opened and every run waited for. Done with the fast paths on, then with `SUBAGENT_FAST_PATHS=0`. The floor is the same measurement of idle bare Node processes of the same version (`node -e "setTimeout(…)"`), one alone ' +
      'and 50 at once, started and killed by the bench; when the machine sets NODE_EXTRA_CA_CERTS, once with it and once without, since a supervisor started with the held-env fast path runs without it. ' +
      "PSS divides each shared page among the processes that map it: with 50 supervisors (or 50 idle nodes) the `node` binary's pages count 1/50th each, and what remains is mostly anonymous memory (V8's heap, Node's own allocations), which a process cannot share.",
  });
}
