/** What this machine has (tools, kernel features), and what a test does when something is missing. */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';

/** Whether a command line works here (used to detect kernel features and tools; never throws). */
export function works(cmd: string, args: string[], timeoutMs = 20_000): boolean {
  const r = spawnSync(cmd, args, { stdio: 'ignore', timeout: timeoutMs });
  return !r.error && r.status === 0;
}

/**
 * A test that cannot run here because a tool or program is missing: a skip that prints the reason on a
 * developer's machine, a failure under CI (CI set, as every CI service does), where `make test` installs
 * what the tests need and nothing may pass by skipping.
 */
export function skipUnlessCi(t: { skip(message?: string): void }, why: string): void {
  const ci = process.env.CI;
  if (ci && !/^(0|false)$/i.test(ci)) assert.fail(`${why}. CI is set, so this test must run, not skip`);
  t.skip(why);
}
