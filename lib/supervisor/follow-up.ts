import { existsSync } from 'node:fs';
import { enqueue, newTicket, readLimit, readMemoryFloor } from '../registry/queue.js';
import { followUpPrompt, hasFollowUps, listFollowUps, settleTaken, takeFollowUp, withFollowUps, writeSettledEnd } from '../registry/follow-ups.js';
import type { RunRecord } from '../registry/record.js';
import { createRun, latestRun, runDir } from '../registry/store.js';
import type { Log } from './log.js';
import { placeNext, sessionNext, type NextAttempt } from './park.js';

/**
 * Follow-ups (`resume-subagent --queue`; docs/contract.md, "Follow-ups"): when a name's run ends, its
 * next queued prompt becomes the name's next run, in the same session with the name's options — published
 * by the run's supervisor before the run is recorded `done` (so the name is never terminal between two
 * follow-ups), or, when that supervisor died, by the next verb that looks (lib/commands/follow-ups.ts).
 * A run that did not succeed stops the queue, unless the next prompt was queued with `--after-any`.
 */

/** How the run before a follow-up ended, as whoever publishes it knows it. */
export interface Ended {
  /** Its record: the end about to be written (a supervisor), or as observed (a verb). */
  record: RunRecord;
  /** It succeeded (a run `unknown` did not). */
  succeeded: boolean;
}

/**
 * Publishes the name's next queued prompt as the run after `ended` and starts its supervisor (below); null
 * when there is none to publish.
 */
export async function publishFollowUp(registry: string, ended: Ended, log: Log): Promise<NextAttempt | null> {
  const published = publishFollowUpRun(registry, ended, log);
  return published ? placeNext(registry, published.dir, published.record) : null;
}

/**
 * Publishes the name's next queued prompt as the run after `ended`, which must be the name's latest, for
 * its supervisor to be started (placeNext); null when there is none to publish: no prompt queued, the queue
 * stopped (a run that did not succeed), no session to resume, or another writer published the next run
 * first. Exactly once whoever calls it at the same time: under the name's follow-up lock.
 */
export function publishFollowUpRun(registry: string, ended: Ended, log: Log): { dir: string; record: RunRecord } | null {
  const name = ended.record.name;
  // Most runs have no queue: no lock is taken for them. One queued meanwhile is found by its verb's own look.
  if (!hasFollowUps(registry, name)) return null;
  return withFollowUps(registry, name, () => {
    settleTaken(registry, name, (run) => existsSync(runDir(registry, name, run)));
    const [head] = listFollowUps(registry, name);
    if (!head || latestRun(registry, name) !== ended.record.run) return null;
    if (!ended.succeeded && !head.afterAny) {
      log(`run ${ended.record.run} did not succeed: the follow-up queue of "${name}" stops (${listFollowUps(registry, name).length} queued)`);
      return null;
    }
    if (ended.record.cli !== 'shell' && ended.record.sessionId === null) {
      log(`run ${ended.record.run} has no session to resume: the follow-up queue of "${name}" stops`);
      return null;
    }
    const prompt = followUpPrompt(registry, name, head.id);
    if (prompt === null) return null;
    const ticket = readLimit(registry) > 0 || readMemoryFloor(registry) > 0 ? newTicket(head.id) : null;
    const policy = ended.record.onLimit;
    const record = { ...sessionNext(ended.record, prompt.length, ticket), onLimit: policy ? { ...policy, retry: 0 } : null };
    const taken = takeFollowUp(registry, name, head.id, record.run);
    const run = createRun(registry, name, record, prompt);
    if (run === null) {
      taken.undo();
      return null;
    }
    taken.done();
    if (ticket) enqueue(registry, ticket, run.dir);
    log(`follow-up ${head.id} of "${name}" published as run ${record.run}`);
    return { dir: run.dir, record };
  });
}

/**
 * A supervisor's end, about to be recorded, kept beside the record while the name has prompts queued
 * (lib/registry/follow-ups.ts, SettledEnd). Failing to keep it ends nothing: the run would be `unknown`
 * with its outcome not known, which stops the queue, prompts kept.
 */
export function settleEnd(registry: string, dir: string, ended: RunRecord, log: Log): void {
  if (ended.outcome === null || !hasFollowUps(registry, ended.name)) return;
  try {
    writeSettledEnd(dir, { outcome: ended.outcome, endReason: ended.endReason });
  } catch (err) {
    log(`the settled end could not be kept: ${(err as Error).message}`);
  }
}
