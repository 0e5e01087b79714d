/**
 * Fault-injection points for the reliability tests: SUBAGENT_TEST_CRASH_AT=<name> makes the process
 * SIGKILL itself when it reaches that point. Costs one environment look-up when unset.
 */
const target = process.env.SUBAGENT_TEST_CRASH_AT;

export function checkpoint(name: string): void {
  if (target !== undefined && target === name) process.kill(process.pid, 'SIGKILL');
}
