import { waitFor } from '../base/wait.js';
import { FILES, latestRun, nameDir, runDir, updateRecord } from '../registry/store.js';
import type { RunRecord } from '../registry/record.js';
import { isTerminal, observeLatest } from '../runs/observe.js';
import type { Log } from './log.js';

/**
 * A run that follows others (--after; docs/contract.md, "Runs that follow runs"): its supervisor, started
 * with the run, waits before anything else until the latest run of each name it follows has ended — no
 * daemon, one watch per name on the files where an end shows (the record's rename, a new run of the
 * name) — and keeps `waitingFor` in the record as they end (the last by the write that follows the wait). A run ended is one that is `done`, or
 * `unknown` (its supervisor died: it will not end by itself).
 */

/** How the wait ended: every name done (`failed` empty, or any outcome with --after-any), or the first that did not succeed. */
export interface Followed {
  /** The names that did not succeed, each in words ("plan" run 1 failed (exit-code)). */
  failed: string[];
}

/** Waits until the run may start, or one it follows did not succeed; `waitingFor` in the record follows. */
export async function waitForDependencies(registry: string, dir: string, record: RunRecord, log: Log): Promise<Followed> {
  let waiting = record.waitingFor;
  const failed: string[] = [];
  log(`waiting for ${waiting.map((n) => `"${n}"`).join(', ')}${record.afterAny ? ' (whatever their outcome)' : ''}`);
  await waitFor({
    dirs: () =>
      waiting.flatMap((name) => {
        const run = latestRun(registry, name);
        return [nameDir(registry, name), ...(run === null ? [] : [runDir(registry, name, run)])];
      }),
    // A record replaced (renamed into place), or a new run of the name (a parked attempt, a resume).
    relevant: (file) => file === null || file === FILES.record || /^[1-9][0-9]*$/.test(file),
    check: () => {
      const still: string[] = [];
      for (const name of waiting) {
        const o = observeLatest(registry, name);
        if (o === null) failed.push(`"${name}" no longer exists`);
        else if (!isTerminal(o.status)) still.push(name);
        else if (o.status !== 'done' || o.record.outcome !== 'succeeded') failed.push(endInWords(name, o.record, o.status));
        else log(`"${name}" run ${o.record.run} succeeded`);
      }
      const done = still.length === 0 || (failed.length > 0 && !record.afterAny);
      // The last name's end is not written here: the write that follows (the queue ticket, the agent
      // running, or the end) empties waitingFor, and the agent starts one durable write sooner.
      if (still.length !== waiting.length && !done) updateRecord(dir, (r) => (r.status === 'done' ? null : { ...r, waitingFor: still }));
      waiting = still;
      return { done, value: undefined };
    },
    timeoutMs: null,
  });
  if (failed.length) log(`${record.afterAny ? 'following regardless' : 'not starting'}: ${failed.join('; ')}`);
  return { failed: record.afterAny ? [] : failed };
}

function endInWords(name: string, r: RunRecord, status: string): string {
  if (status !== 'done') return `"${name}" run ${r.run} is ${status}`;
  return `"${name}" run ${r.run} ${r.outcome}${r.reason ? ` (${r.reason})` : ''}`;
}
