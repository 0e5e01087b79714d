/**
 * Test-only knobs of the reliability tests (docs/reliability.md, "Test-only knobs"), all read here
 * once, when the module loads; unset, each costs one environment look-up and nothing else.
 *
 * - SUBAGENT_TEST_CRASH_AT=<name>: the process SIGKILLs itself when it reaches that checkpoint.
 * - SUBAGENT_TEST_PAUSE_AT=<name>: the process stops itself (SIGSTOP) there, the first time only; the
 *   test does what it wants to happen at that instant, then sends SIGCONT.
 * - SUBAGENT_TEST_THROW_AT=<name>: a plain Error is thrown there (an unexpected exception).
 * - SUBAGENT_TEST_WAIT_BACKSTOP_MS=<ms>: the waiters' backstop re-check (lib/base/wait.ts), instead of 1 s.
 * - SUBAGENT_TEST_MATCHER_START_MS=<ms>: search's matching thread (lib/base/match.ts) holds still this long
 *   before it says it is up, as a thread does on an overloaded machine.
 * - SUBAGENT_TEST_FREE_MEMORY_FILE=<path>: the machine's available memory (lib/proc/memory.ts) is the
 *   number of bytes that file holds, read at each look, so a test can make memory short, then plenty.
 */
const crashAt = process.env.SUBAGENT_TEST_CRASH_AT;
let pauseAt = process.env.SUBAGENT_TEST_PAUSE_AT;
const throwAt = process.env.SUBAGENT_TEST_THROW_AT;
const backstop = process.env.SUBAGENT_TEST_WAIT_BACKSTOP_MS;
const matcherStart = process.env.SUBAGENT_TEST_MATCHER_START_MS;
const freeMemoryFile = process.env.SUBAGENT_TEST_FREE_MEMORY_FILE;

/** The variables above: a supervisor does not hand them on to the agent it starts. */
export const TEST_KNOBS = [
  'SUBAGENT_TEST_CRASH_AT',
  'SUBAGENT_TEST_PAUSE_AT',
  'SUBAGENT_TEST_THROW_AT',
  'SUBAGENT_TEST_WAIT_BACKSTOP_MS',
  'SUBAGENT_TEST_MATCHER_START_MS',
  'SUBAGENT_TEST_FREE_MEMORY_FILE',
];

/** SUBAGENT_TEST_WAIT_BACKSTOP_MS as a number of milliseconds, or null (unset or not a positive number). */
export const testWaitBackstopMs: number | null = backstop !== undefined && Number(backstop) > 0 ? Number(backstop) : null;

/** SUBAGENT_TEST_MATCHER_START_MS as milliseconds, or 0. */
export const testMatcherStartMs: number = matcherStart !== undefined && Number(matcherStart) > 0 ? Number(matcherStart) : 0;

/** SUBAGENT_TEST_FREE_MEMORY_FILE, or null. */
export const testFreeMemoryFile: string | null = freeMemoryFile !== undefined && freeMemoryFile !== '' ? freeMemoryFile : null;

export function checkpoint(name: string): void {
  if (crashAt === name) process.kill(process.pid, 'SIGKILL');
  if (pauseAt === name) {
    pauseAt = undefined;
    process.kill(process.pid, 'SIGSTOP');
  }
  if (throwAt === name) throw new Error(`injected by SUBAGENT_TEST_THROW_AT=${name}`);
}
