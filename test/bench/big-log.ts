/**
 * Row 6 of `make bench`: `result` and `search` on 5 MB and 50 MB event logs (time and peak RSS).
 */
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { PLAIN } from './nodes.js';
import { details, methods, misses, rows } from './results.js';
import { measured, start, waitTerminal } from './runs.js';
import { AREA, GNU_TIME, QUICK } from './setup.js';
import { BIN, type Done, fmtMB, fmtMs, json, max, median, monoMs, removeTree, waitQuiet, fmtDelta, q } from './util.js';

export async function bigLogRow(): Promise<void> {
  const R = join(AREA, 'biglog');
  const MiB = 1024 * 1024;
  const line = 'lorem ipsum dolor sit amet, consectetur adipiscing elit 0123456789 the quick brown fox jumps over';
  const script = (half: number) =>
    `echo needle-first; yes ${q(line)} | head -c ${half}; echo; echo needle-middle; yes ${q(line)} | head -c ${half}; echo; echo needle-last`;
  const sizes = [5, 50];
  for (const mb of sizes) await start(R, `big/${mb}`, script((mb * MiB) / 2));
  const t0 = monoMs();
  await waitTerminal(R, ['--prefix', 'big'], 300);
  const settle = monoMs() - t0;
  await waitQuiet(R, 30_000);
  const floorRuns: Array<{ wallMs: number; maxRssKb: number }> = [];
  for (let i = 0; i < 5; i++) floorRuns.push(await measured(['node', '-e', '0']));
  const floorWall = median(floorRuns.map((r) => r.wallMs));
  const floorRss = median(floorRuns.map((r) => r.maxRssKb));
  type Res = { wall: number; rss: number; runs: number; ok: boolean; note: string };
  const res: Record<string, Res> = {};
  const variants = [
    { key: 'on', env: {} },
    { key: 'plain', env: PLAIN },
  ];
  for (const mb of sizes) {
    const logSize = statSync(join(R, 'agents', `big+${mb}`, '1', 'events.log')).size;
    for (const v of ['result', 'search'] as const) {
      const args =
        v === 'result'
          ? ['--registry', R, '--name', `big/${mb}`]
          : ['--registry', R, '--name', `big/${mb}`, '--pattern', 'needle-[a-z]+', '--role', 'assistant'];
      const n = mb === 50 ? (QUICK ? 2 : 5) : 3;
      const out: Record<string, Array<{ wallMs: number; maxRssKb: number; d: Done }>> = { on: [], plain: [] };
      // on and plain interleaved, run by run
      for (let i = 0; i < n; i++) for (const x of i % 2 ? [...variants].reverse() : variants) out[x.key]!.push(await measured([join(BIN, v), ...args], x.env));
      for (const x of variants) {
        const last = out[x.key]!.at(-1)!.d;
        let ok: boolean;
        let note: string;
        if (v === 'result') {
          ok = last.code === 0 && last.stdout.trimEnd().endsWith('needle-last');
          note = `printed ${(last.stdout.length / MiB).toFixed(2)} MiB${ok ? ', ends with the last line' : `; exit ${last.code}: ${last.stdout.slice(0, 200)}`}`;
        } else {
          const j = json(last);
          ok = j?.ok === true && j.total === 3;
          note = ok ? `found ${j.total} matches` : `exit ${last.code}: ${last.stdout.slice(0, 200)}`;
        }
        res[`${v}-${mb}-${x.key}`] = {
          wall: median(out[x.key]!.map((o) => o.wallMs)),
          rss: max(out[x.key]!.map((o) => o.maxRssKb)),
          runs: n,
          ok,
          note: `${note}; log ${(logSize / MiB).toFixed(1)} MiB`,
        };
      }
    }
  }
  removeTree(R);
  const growth = (v: string, k: string) => res[`${v}-50-${k}`]!.rss - res[`${v}-5-${k}`]!.rss;
  const bounded = (v: string, k: string) => growth(v, k) < 20 * 1024;
  const cell = (k: string) =>
    `result **${fmtMs(res[`result-50-${k}`]!.wall, 0)}**, peak RSS ${fmtMB(res[`result-50-${k}`]!.rss)} (${fmtDelta(growth('result', k))} vs 5 MB log); ` +
    `search **${fmtMs(res[`search-50-${k}`]!.wall, 0)}**, peak RSS ${fmtMB(res[`search-50-${k}`]!.rss)} (${fmtDelta(growth('search', k))} vs 5 MB log)`;
  const verdictOf = (k: string) => {
    const r50 = res[`result-50-${k}`]!;
    const s50 = res[`search-50-${k}`]!;
    if (!r50.ok || !s50.ok) return 'n/a (a check failed)';
    const over: string[] = [];
    for (const [name, r] of [
      ['result', r50],
      ['search', s50],
    ] as const) {
      if (r.wall > 1000) over.push(`${name} by ${fmtMs(r.wall - 1000, 0)}`);
      if (!bounded(name, k)) over.push(`${name}'s memory grows ${fmtDelta(growth(name, k))} with the log`);
    }
    return over.length ? `**misses**: ${over.join(', ')}` : 'meets';
  };
  rows.push({
    what: '`result` / `search` on a 50 MB event log',
    target: '≤ 1 s, memory bounded (streamed)',
    on: cell('on'),
    plain: cell('plain'),
    floor: `\`node -e 0\`: ${fmtMs(floorWall, 0)}, ${fmtMB(floorRss)}`,
    verdict: `on: ${verdictOf('on')}; plain: ${verdictOf('plain')}`,
  });
  const logMisses = ['on', 'plain'].filter((k) => verdictOf(k).startsWith('**misses'));
  if (logMisses.length)
    misses.push(
      `\`result\`/\`search\` on a 50 MB log: ${logMisses.map((k) => `${k === 'on' ? 'fast paths on' : 'plain paths'}: ${verdictOf(k).replace('**misses**: ', '')}`).join('; ')}.`,
    );
  details.push(
    `### 6. \`result\` and \`search\` on big event logs\n\n` +
      `Both runs finished ${fmtMs(settle, 0)} after the wait began. \`node -e 0\` under the same measurement: median ${fmtMs(floorWall, 0)}, peak RSS ${fmtMB(floorRss)}.\n\n` +
      `| verb | log | paths | runs | median wall | peak RSS (max) | check |\n|---|---|---|---|---|---|---|\n` +
      Object.entries(res)
        .map(([key, r]) => {
          const [v, mb, k] = key.split('-');
          return `| ${v} | ${mb} MB | ${k === 'on' ? 'fast paths on' : 'plain'} | ${r.runs} | ${fmtMs(r.wall, 0)} | ${fmtMB(r.rss)} | ${r.ok ? 'ok' : '**FAILED**'}: ${r.note} |`;
        })
        .join('\n') +
      `\n\n"Memory bounded" is judged by the growth of peak RSS from the 5 MB to the 50 MB log: a verb that reads the log whole grows by ` +
      `about the 45 MB of extra log (or more, as strings); a streaming one stays flat.`,
  );
  methods.push({
    title: '6. result and search on a 50 MB event log',
    text:
      'Two shell runs print 5 MB and 50 MB (`yes LINE | head -c …` twice, with `needle-first/middle/last` lines at the start, middle and ' +
      `end), and are waited for. Then \`bin/result --name big/50\` and \`bin/search --name big/50 --pattern 'needle-[a-z]+' --role assistant\` run 5 times each ` +
      `with the fast paths on and 5 times with \`SUBAGENT_FAST_PATHS=0\`, alternately (3 times each on the 5 MB log), under ${GNU_TIME ? '`/usr/bin/time -f %M`' : 'a getrusage preload'} for the peak RSS; wall time is the bench's ` +
      'monotonic clock around the process. Checks: result ends with the last line, search finds the 3 needles. `node -e 0` is measured the same way.',
  });
}
