/**
 * `--import` preload used only when /usr/bin/time is missing: writes the process's peak RSS (kB, from
 * getrusage) to $BENCH_MAXRSS_FILE at exit.
 */
import { writeFileSync } from 'node:fs';

const file = process.env.BENCH_MAXRSS_FILE;
if (file) {
  process.on('exit', () => {
    try {
      writeFileSync(file, String(process.resourceUsage().maxRSS));
    } catch {}
  });
}
