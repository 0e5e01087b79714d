/**
 * The registry's files as a test reads them: run directories (found by their records, or computed from
 * the on-disk encoding of names), records, trees of paths, leftovers of writers, and checksums.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { encodeName } from '../../lib/registry/names.js';

export function readJson(path: string): any {
  return JSON.parse(readFileSync(path, 'utf8'));
}

/** Every path under `root` (relative, sorted); a directory `skip` says yes to is left out with all below it. */
function walk(root: string, skip: (entry: string) => boolean = () => false): string[] {
  const out: string[] = [];
  const into = (d: string) => {
    let entries: string[];
    try {
      entries = readdirSync(d);
    } catch {
      return;
    }
    for (const e of entries) {
      if (skip(e)) continue;
      const p = join(d, e);
      out.push(relative(root, p));
      try {
        if (statSync(p).isDirectory()) into(p);
      } catch {
        /* gone */
      }
    }
  };
  into(root);
  return out.sort();
}

/** Every file and directory under `root` (relative paths), sorted. */
export function listTree(root: string): string[] {
  return walk(root);
}

/** listTree without the transient lock and temp files of live writers: what stays when nothing changed. */
export function settledTree(root: string): string[] {
  return walk(root, (e) => /\.tmp-|\.lock$|\.break$/.test(e));
}

/** Leftovers of writers: lock files, lock-break files, temp files of records, unpublished new names and runs. */
export function strays(registry: string): string[] {
  return listTree(registry).filter((p) => {
    const base = p.split('/').pop()!;
    return /\.lock$|\.break$|\.tmp-/.test(base) || /^tmp\/new-/.test(p) || /^\.new-/.test(base);
  });
}

/** Every run directory of the registry (those holding a record.json), with its parsed record (null when it does not parse). */
export function runDirs(registry: string): Array<{ dir: string; record: any }> {
  return listTree(registry)
    .filter((p) => p === 'record.json' || p.endsWith('/record.json'))
    .map((p) => {
      const dir = join(registry, p, '..');
      let record: any = null;
      try {
        record = readJson(join(registry, p));
      } catch {
        record = null;
      }
      return { dir, record };
    });
}

/** Every record.json under the registry, parsed (or the parse error). */
export function allRecords(registry: string): Array<{ path: string; record: any; error: string | null }> {
  return listTree(registry)
    .filter((p) => p.endsWith('/record.json'))
    .map((p) => {
      const path = join(registry, p);
      try {
        return { path, record: JSON.parse(readFileSync(path, 'utf8')), error: null };
      } catch (err) {
        return { path, record: null, error: (err as Error).message };
      }
    });
}

/** The run directory of run `run` of `name`, found by its record (not by the on-disk encoding of names); asserts there is exactly one. */
export function runDirOf(registry: string, name: string, run = 1): string {
  const hit = runDirs(registry).filter((r) => r.record?.name === name && r.record?.run === run);
  assert.equal(hit.length, 1, `expected one run dir for ${name} run ${run}, found ${hit.length}`);
  return hit[0]!.dir;
}

/** Where run `run` of `name` lives by the on-disk encoding of names, whether or not it exists (or holds a readable record). */
export function runDirPath(registry: string, name: string, run = 1): string {
  return join(registry, 'agents', encodeName(name), String(run));
}

/** The record on disk of run `run` of `name` (more than status shows: runId, agentStartedAt, queueTicket…). */
export function recordOf(registry: string, name: string, run = 1): any {
  return readJson(join(runDirPath(registry, name, run), 'record.json'));
}

/** The last 2 000 characters of a run's stderr.log (the agent CLI's), or '' when there is none. */
export function stderrTail(registry: string, name: string, run = 1): string {
  try {
    return readFileSync(join(runDirPath(registry, name, run), 'stderr.log'), 'utf8').slice(-2000);
  } catch {
    return '';
  }
}

export function sha256(data: Buffer | string): string {
  return createHash('sha256').update(data).digest('hex');
}

export function fileSha(path: string): string {
  return sha256(readFileSync(path));
}
