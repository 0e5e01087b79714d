/**
 * The fast paths: each one only a speed-up, with a plain twin that behaves the same, kept because
 * `make bench` shows what it gains (docs/design.md, "Fast paths"; docs/benchmarks.md, the A/B rows).
 *
 *   compile-cache  Node's module compile cache for the verbs' bundles, in a private per-user directory (bin/compile-cache.js)
 *   status-cache   a listing serves done runs from the status cache (lib/registry/done-cache.ts), proven
 *                  current by the registry's journal (lib/registry/journal.ts)
 *   plain-pattern  search matches a pattern that cannot backtrack in its own thread, without the
 *                  bounded worker (lib/base/match.ts)
 *
 * SUBAGENT_FAST_PATHS unset: all of them. `0` (or empty): none — the plain paths, as the tests run them.
 * Otherwise a comma-separated list of the ones to keep (the bench turns them off one at a time). The
 * variable reaches the supervisors a verb starts.
 */
export type FastPath = 'compile-cache' | 'status-cache' | 'plain-pattern';

export function fastPath(name: FastPath, env: NodeJS.ProcessEnv = process.env): boolean {
  const on = env.SUBAGENT_FAST_PATHS;
  return on === undefined || on.split(',').includes(name);
}
