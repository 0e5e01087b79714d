/**
 * Row 11 of `make bench`: what subagent-dash costs while it is open — the CPU of its process with 100
 * runs listed, 5 of them streaming output, in the list and with a streaming run's conversation open.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { details, methods, rows } from './results.js';
import { start, waitTerminal } from './runs.js';
import { AREA, QUICK } from './setup.js';
import { BIN, cpuMsOf, monoMs, pad, removeTree, sleep, waitQuiet, which } from './util.js';

const STREAMING = 5;
const LISTED = 100;

/** A private tmux server (its socket in the bench's area): the dashboard's terminal. */
function tmux(sock: string, args: string[]): string {
  const r = spawnSync('tmux', ['-S', sock, ...args], { encoding: 'utf8', env: { ...process.env, TMUX: undefined, LANG: 'C.UTF-8' } });
  if (r.status !== 0) throw new Error(`tmux ${args[0]}: ${r.stderr}`);
  return r.stdout.trim();
}

/** The dashboard process's share of one core over `seconds`. */
async function share(pid: number, seconds: number): Promise<number> {
  const before = cpuMsOf(pid);
  const t0 = monoMs();
  await sleep(seconds * 1000);
  return (cpuMsOf(pid) - before) / (monoMs() - t0);
}

export async function dashRow(): Promise<void> {
  if (!which('tmux')) {
    rows.push({ what: 'subagent-dash CPU', target: '< 2 % of one core', on: 'not measured: tmux is not installed', plain: null, floor: '-', verdict: 'n/a' });
    return;
  }
  const R = join(AREA, 'dash');
  mkdirSync(R);
  for (let i = 0; i < LISTED - STREAMING; i++) await start(R, `done/${pad(i)}`, `echo answer ${i}`);
  await waitTerminal(R, ['--prefix', 'done'], 120);
  const seconds = QUICK ? 10 : 20;
  const lines = Math.ceil(((seconds * 2 + 15) * 1000) / 100);
  for (let i = 0; i < STREAMING; i++)
    await start(R, `live/${pad(i)}`, `i=0; while [ $i -lt ${lines} ]; do echo "line $i of a streaming run"; i=$((i+1)); sleep 0.1; done`);
  const sock = join(AREA, 'dash-tmux.sock');
  tmux(sock, ['-f', '/dev/null', 'new-session', '-d', '-s', 'dash', '-x', '160', '-y', '50', `env SUBAGENT_DIR='${R}' '${join(BIN, 'dash')}'`]);
  try {
    const pid = Number(tmux(sock, ['display-message', '-p', '-t', 'dash', '#{pane_pid}']));
    await sleep(3000);
    const list = await share(pid, seconds);
    // The first row is a streaming run (work going on is listed first): its conversation, following.
    tmux(sock, ['send-keys', '-t', 'dash', 'g', 'Enter']);
    await sleep(1000);
    const open = await share(pid, seconds);
    const screen = tmux(sock, ['capture-pane', '-p', '-t', 'dash']);
    if (!/line \d+ of a streaming run/.test(screen)) throw new Error(`the conversation did not show the stream:\n${screen}`);
    const pct = (x: number) => `${(x * 100).toFixed(2)} %`;
    rows.push({
      what: `subagent-dash CPU (${LISTED} runs listed, ${STREAMING} streaming 10 lines/s)`,
      target: '< 2 % of one core',
      on: `list: **${pct(list)}**; a streaming run's conversation open: **${pct(open)}**`,
      plain: null,
      floor: '-',
      verdict: Math.max(list, open) < 0.02 ? 'meets' : '**misses**',
    });
    details.push(`### 11. subagent-dash\n\n- list: ${pct(list)} of a core over ${seconds} s\n- conversation open: ${pct(open)} over ${seconds} s\n`);
    methods.push({
      title: '11. subagent-dash',
      text:
        `${LISTED - STREAMING} finished shell runs and ${STREAMING} that print a line every 100 ms; the dashboard in a private tmux server (160×50). ` +
        `3 s after it starts, its process's CPU time (/proc/<pid>/schedstat) is read, again ${seconds} s later; then the first run (a streaming one) ` +
        `is opened (g, Enter) and the same is measured with its conversation following. The share is CPU time over wall time.`,
    });
  } finally {
    spawnSync('tmux', ['-S', sock, 'kill-server']);
    await waitTerminal(R, ['--prefix', 'live'], 120);
    await waitQuiet(R, 30_000);
    removeTree(R);
  }
}
