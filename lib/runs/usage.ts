import { addUsage } from '../agents/shared/stream.js';
import type { RunRecord, Usage } from '../registry/record.js';
import { listRuns, readRecord, runDir } from '../registry/store.js';
import { readPrunedUsage } from '../registry/prune.js';

export { addUsage } from '../agents/shared/stream.js';

/**
 * The usage of a name's runs before `record` (optionally only those of its session): what a CLI whose
 * counters are cumulative over a thread (Codex) had already reported before this run began. Runs that
 * subagent-prune removed count by the sums it kept of them (lib/registry/prune.ts), so a later run's
 * usage is the same after a prune as before it.
 */
export function usageBefore(registry: string, record: RunRecord, sameSession = true): Usage | null {
  let total: Usage | null = null;
  const pruned = record.run > 1 ? readPrunedUsage(registry, record.name) : null;
  for (const s of pruned?.sessions ?? []) if (!sameSession || s.sessionId === record.sessionId) total = addUsage(total, s.usage);
  for (let k = (pruned?.through ?? 0) + 1; k < record.run; k++) {
    try {
      const r = readRecord(runDir(registry, record.name, k));
      if (!sameSession || r.sessionId === record.sessionId) total = addUsage(total, r.usage);
    } catch {
      /* an unreadable old run is reported by status; it adds nothing here */
    }
  }
  return total;
}

/** Usage of every run of a name (the per-name figure in status). */
export function usageOfName(registry: string, latest: RunRecord): Usage | null {
  if (latest.run === 1 || !(listRuns(registry, latest.name) ?? []).length) return latest.usage;
  return addUsage(usageBefore(registry, latest, false), latest.usage);
}
