/**
 * The bench's set-up, shared by every row: BENCH_QUICK and BENCH_ONLY, the load at the start, the temp
 * area (ended and removed at exit, also on Ctrl-C), the log on stderr, hyperfine and GNU time (installed by
 * install-tools.sh when missing), and the problems met on the way.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT, cleanup, monoMs, ownArea, which } from './util.js';

export const QUICK = process.env.BENCH_QUICK === '1';
export const ONLY = (process.env.BENCH_ONLY ?? '')
  .split(',')
  .map((s) => s.trim())
  .filter(Boolean);
export const loadAtStart = loadavg()
  .map((x) => x.toFixed(2))
  .join(' ');
export const busyAtStart = loadavg()[0]! > cpus().length * 0.75;
export const benchStart = monoMs();
export const AREA = mkdtempSync(join(tmpdir(), 'subagents-bench-'));
ownArea(AREA);

let cleaned = false;
export function finalCleanup(): void {
  if (cleaned) return;
  cleaned = true;
  const { killed } = cleanup();
  if (killed) log(`clean-up: ended ${killed} leftover process${killed === 1 ? '' : 'es'}`);
}
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.on(sig, () => {
    process.stderr.write(`\nbench: ${sig}: cleaning up\n`);
    finalCleanup();
    process.exit(130);
  });
}
process.on('exit', finalCleanup);

export function log(message: string): void {
  process.stderr.write(`[bench ${((monoMs() - benchStart) / 1000).toFixed(1).padStart(5)} s] ${message}\n`);
}

log('tools: test/bench/install-tools.sh');
spawnSync('bash', [join(ROOT, 'test/bench/install-tools.sh')], { stdio: ['ignore', 'inherit', 'inherit'] });
export const HYPERFINE = which('hyperfine');
export const GNU_TIME = existsSync('/usr/bin/time') ? '/usr/bin/time' : null;
export const hyperfineVersion = HYPERFINE ? spawnSync(HYPERFINE, ['--version'], { encoding: 'utf8' }).stdout.trim() : null;
log(`hyperfine: ${hyperfineVersion ?? 'missing (own timing loop)'}; /usr/bin/time: ${GNU_TIME ? 'yes' : 'missing (getrusage preload)'}`);

export const problems: string[] = [];
