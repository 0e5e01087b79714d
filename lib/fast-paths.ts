/**
 * Whether the fast paths are on. Each one is only a speed-up with a plain twin that behaves the same
 * (docs/design.md, "Fast paths", lists them with their measured gains); SUBAGENT_FAST_PATHS=0 turns
 * every one of them off, in the verbs and in the supervisors they start, so the plain paths can be
 * tested and measured.
 */
export function fastPaths(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.SUBAGENT_FAST_PATHS !== '0';
}
