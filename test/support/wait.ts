/**
 * Waiting on conditions, each with a deadline (never a fixed sleep), and the deadlines the suites share.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** A generous deadline for what a run does: the suites run several files at once on a loaded 2-core machine. */
export const LONG = 90_000;
/** LONG in seconds, for a verb's --timeout. */
export const WAIT_SEC = '90';
/** "Noticed within about a second" is asserted as "noticed within this". */
export const NOTICE_MS = 5_000;

type Falsy = undefined | null | false | 0 | '';

/**
 * Polls `fn` until it returns something truthy (returned) or the deadline passes (an error naming
 * `what`). `fn` may be async (a verb run with runAsync), so the event loop keeps turning between polls;
 * an error it throws ends the wait at once.
 */
export async function until<T>(what: string, fn: () => T | Falsy | Promise<T | Falsy>, timeoutMs = 20_000, everyMs = 20): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/**
 * until() for a condition only a live run can meet (its tool running, its session known): gives up at once
 * when the run's record says done, and either way the error carries the record and the end of the run's
 * stderr. The deadline is generous because an agent CLI's boot on a loaded CI machine can take tens of
 * seconds; a run that ended early fails fast, so the deadline is only reached by a real hang.
 */
export async function untilInRun<T>(what: string, runDir: string, fn: () => T | Falsy, timeoutMs = 120_000): Promise<T> {
  const start = Date.now();
  const record = (): any => {
    try {
      return JSON.parse(readFileSync(join(runDir, 'record.json'), 'utf8'));
    } catch {
      return null; // not written yet
    }
  };
  const state = (): string => {
    let err = '';
    try {
      err = readFileSync(join(runDir, 'stderr.log'), 'utf8').slice(-2000);
    } catch {
      /* none */
    }
    return `after ${Date.now() - start} ms; record: ${JSON.stringify(record())}; stderr: ${err || '(empty)'}`;
  };
  for (;;) {
    const v = fn();
    if (v) return v;
    if (record()?.status === 'done' && !fn()) throw new Error(`the run ended before ${what}: ${state()}`);
    if (Date.now() - start > timeoutMs) throw new Error(`timed out waiting for ${what}: ${state()}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
