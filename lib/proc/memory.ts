import { readFileSync } from 'node:fs';
import { testFreeMemoryFile } from '../base/checkpoint.js';
import { backend } from './backend.js';
import { subtree } from './subtree.js';

/**
 * Memory, as the supervisor watches a run's (docs/memory.md) and the queue admits runs by it: the
 * resident memory of a process tree, and what the machine has available.
 */

/** The RSS of `root` and its descendants, summed, in bytes, from one look; null when `root` is gone. */
export function treeRss(root: number): number | null {
  const tree = subtree(root, backend().memory());
  return tree.length === 0 ? null : tree.reduce((sum, p) => sum + p.rssBytes, 0);
}

/**
 * What the machine has available for new work, in bytes (lib/proc/types.ts says from where); null when it
 * cannot be told. SUBAGENT_TEST_FREE_MEMORY_FILE (a test knob) names a file whose number is taken instead.
 */
export function availableMemory(): number | null {
  if (testFreeMemoryFile !== null) {
    try {
      const n = Number(readFileSync(testFreeMemoryFile, 'utf8').trim());
      return Number.isFinite(n) && n >= 0 ? n : null;
    } catch {
      return null;
    }
  }
  return backend().availableMemory();
}
