// test-order: early — one of the longest files (20 processes × 20 operations): started first (scripts/test.sh).
/**
 * Issue 5, points 5 and 6 (docs/guarantees.md, 1, 5, 6): 20 processes × 20 operations with the real verbs on one
 * registry, and readers during 10 000 rewrites of one record.
 *
 * Both run on /dev/shm when it is there: what they prove (atomic replacement, locks, one winner) does
 * not depend on the disk, and an fsync on this machine's disk costs ~12 ms, which would make 10 000
 * durable rewrites take minutes. The full-disk test (disk.test.ts) covers the durable path's failures.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { accessSync, constants, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseRecord } from '../../lib/registry/record.js';
import { BIN, FIXTURES } from '../support/paths.js';
import { assertOk, spawnProgram, type Spawned } from '../support/run.js';
import { allRecords, listTree, runDirPath, sha256, strays } from '../support/registry.js';
import { quiet, withBox } from '../support/box.js';
import { startShellAsync, waitTerminalAsync } from '../support/shell.js';

function fastBase(): string {
  try {
    accessSync('/dev/shm', constants.W_OK);
    if (statSync('/dev/shm').isDirectory()) return '/dev/shm';
  } catch {
    /* fall back */
  }
  return tmpdir();
}

/** A node script in the background, its stdout and stderr collected. */
function nodeChild(args: string[], env: NodeJS.ProcessEnv): Spawned {
  return spawnProgram(process.execPath, args, { cwd: process.cwd(), env });
}

const ALLOWED: Record<string, string[]> = {
  'start-subagent': ['E_NAME_EXISTS'],
  'resume-subagent': ['E_AGENT_BUSY'],
  cancel: ['E_NOT_RUNNING'],
  status: [],
  result: [],
  search: [],
};

describe('points 5 and 6: concurrency', { concurrency: 2 }, () => {
  test('point 5: 20 processes × 20 operations — nothing lost, every read parses, one winner per name, no leftovers, bounded waits', () =>
    withBox(
      'storm',
      async (b) => {
        const go = join(b.dir, 'go');
        const workers = Array.from({ length: 20 }, (_, w) => nodeChild([join(FIXTURES, 'fault-worker.mjs'), BIN, String(w), go], b.env));
        writeFileSync(go, '');
        // Read every published record while the storm goes on: each must parse, whole, every time.
        let reads = 0;
        const bad: string[] = [];
        while (!workers.every((w) => w.settled())) {
          for (const p of listTree(b.registry)) {
            if (!p.endsWith('/record.json') || p.startsWith('tmp/') || p.includes('/.new-')) continue;
            try {
              parseRecord(readFileSync(join(b.registry, p), 'utf8'), p);
              reads++;
            } catch (err) {
              bad.push(`${p}: ${(err as Error).message}`);
            }
          }
          await new Promise((r) => setTimeout(r, 5));
        }
        const outs = await Promise.all(workers.map((w) => w.done));
        assert.deepEqual(bad, [], 'a concurrent reader saw a record that did not parse');
        assert.ok(reads > 0);

        const ops: any[] = [];
        for (const o of outs) {
          assert.equal(o.code, 0, `a worker failed: ${o.stderr}`);
          const report = JSON.parse(o.stdout);
          for (const r of report.results) ops.push({ ...r, worker: report.worker });
        }
        assert.equal(ops.length, 400);
        // Every operation printed one parseable line with an allowed outcome, and none waited unboundedly.
        for (const op of ops) {
          const what = `w${op.worker} ${op.verb} ${op.args.join(' ')}: code ${op.code} ${op.stdout ?? JSON.stringify(op.json)} ${op.stderr}`;
          assert.ok(op.json, `not one JSON line: ${what}`);
          if (op.json.ok) assert.equal(op.code, 0, what);
          else assert.ok(ALLOWED[op.verb]!.includes(op.json.code), `unexpected failure: ${what}`);
          assert.ok(op.ms < 30_000, `an operation took ${Math.round(op.ms)} ms (lock waits must be bounded): ${what}`);
          if (op.verb === 'status') assert.equal(op.json.problems, undefined, `a status read saw a broken record: ${what}`);
        }
        const maxMs = Math.max(...ops.map((o) => o.ms));

        // Let every run end, then check the registry against what the verbs reported.
        const all = assertOk(await b.runAsync('status', ['--wait-terminal', '--all', '--timeout', '90'], { timeoutMs: 120_000 }), 'wait for all');
        for (const a of all.agents) assert.ok(a.status === 'done', `${a.name} ended ${a.status}: ${JSON.stringify(a)}`);
        // A supervisor removes its lock file and leaves the queue after the record says done.
        await quiet(b);
        const nameOf = (op: any) => op.args[op.args.indexOf('--name') + 1];
        const prompt = (name: string, run: number) => readFileSync(join(runDirPath(b.registry, name, run), 'prompt'), 'utf8');

        // One winner per shared name; its prompt is the one published.
        for (const k of [0, 1, 2]) {
          const name = `shared/${k}`;
          const starts = ops.filter((o) => o.verb === 'start-subagent' && nameOf(o) === name);
          assert.equal(starts.length, 20);
          const winners = starts.filter((o) => o.json.ok);
          assert.equal(winners.length, 1, `${name}: ${winners.length} starts won`);
          assert.equal(prompt(name, 1), winners[0].prompt, `${name}: the winner's prompt is published`);
        }
        // Every start of a distinct name succeeded and is there.
        const ownStarts = ops.filter((o) => o.verb === 'start-subagent' && nameOf(o).startsWith('own/'));
        assert.equal(ownStarts.length, 40);
        for (const o of ownStarts) {
          assert.equal(o.json.ok, true, JSON.stringify(o.json));
          assert.equal(prompt(nameOf(o), 1), o.prompt);
        }
        // Resumes: each success owns exactly one run number, holding its prompt; no run without a success.
        const names = all.agents.map((a: any) => a.name);
        assert.equal(names.length, 43, `names: ${names}`);
        for (const name of names) {
          const won = ops.filter((o) => o.verb === 'resume-subagent' && nameOf(o) === name && o.json.ok);
          const runs = won.map((o) => o.json.run).sort((x: number, y: number) => x - y);
          assert.deepEqual(
            runs,
            won.map((_, i) => i + 2),
            `${name}: resumes won runs ${runs}`,
          );
          const onDisk = readdirSync(join(b.registry, 'agents', name.replace('/', '+')))
            .filter((e) => /^\d+$/.test(e))
            .map(Number)
            .sort((x, y) => x - y);
          assert.deepEqual(onDisk, [1, ...runs], `${name}: runs on disk ${onDisk} vs resumes reported ${runs}`);
          for (const o of won) assert.equal(prompt(name, o.json.run), o.prompt, `${name} run ${o.json.run}`);
        }
        // A cancel that succeeded is recorded: that run ended cancelled.
        for (const o of ops.filter((x) => x.verb === 'cancel' && x.json.ok)) {
          const rec = JSON.parse(readFileSync(join(runDirPath(b.registry, nameOf(o), o.json.run), 'record.json'), 'utf8'));
          assert.equal(rec.outcome, 'cancelled', `${nameOf(o)} run ${o.json.run}: cancel said ok, the record says ${rec.outcome}`);
        }
        for (const r of allRecords(b.registry)) assert.equal(r.error, null, `${r.path}: ${r.error}`);
        assert.deepEqual(strays(b.registry), [], 'no stray lock, temp or unpublished files');
        // For the report: the longest single operation (lock waits included).
        assert.ok(maxMs < 30_000);
      },
      fastBase(),
    ));

  async function rewriteWhileReading(b: any, mode: 'durable' | 'naive', count: number): Promise<{ reads: number; torn: string[]; backwards: number }> {
    await startShellAsync(b, 'r', 'true');
    await waitTerminalAsync(b, ['r']);
    const dir = runDirPath(b.registry, 'r');
    const path = join(dir, 'record.json');
    const writer = nodeChild([join(FIXTURES, 'fault-rewriter.mjs'), dir, String(count), mode], b.env);
    let reads = 0;
    let last = -1;
    let backwards = 0;
    const torn: string[] = [];
    while (!writer.settled()) {
      // Bursts of reads with short pauses: thousands of reads overlap the rewrites without the reader
      // taking a whole core from the writer.
      for (let i = 0; i < 25; i++) {
        let text = '';
        try {
          text = readFileSync(path, 'utf8');
          const r = mode === 'durable' ? parseRecord(text, path) : JSON.parse(text);
          const [pad, sum] = r.toolUses > 0 ? String(r.error).split('#') : [];
          if (r.toolUses > 0 && sha256(pad!) !== sum) throw new Error('the padding does not match its checksum (a mixed read)');
          if (r.toolUses < last) backwards++;
          last = r.toolUses;
          reads++;
        } catch (err) {
          torn.push(`${(err as Error).message.slice(0, 120)} (${text.length} bytes)`);
        }
      }
      if (mode === 'naive' && torn.length > 0) {
        // The control has made its point: stop the writer (ours, by pid).
        try {
          process.kill(writer.pid, 'SIGKILL');
        } catch {
          /* already gone */
        }
        await writer.done;
        return { reads, torn, backwards };
      }
      await new Promise((r) => setTimeout(r, 1));
    }
    const w = await writer.done;
    assert.equal(w.code, 0, w.stderr);
    assert.equal(JSON.parse(w.stdout).done, count);
    return { reads, torn, backwards };
  }

  test('point 6: readers never see half a record during 10 000 rewrites', () =>
    withBox(
      'rewrite',
      async (b) => {
        const { reads, torn, backwards } = await rewriteWhileReading(b, 'durable', 10_000);
        assert.deepEqual(torn.slice(0, 5), [], `${torn.length} of ${reads + torn.length} reads saw half a record`);
        assert.equal(backwards, 0, 'a reader saw an older version after a newer one');
        assert.ok(reads >= 100, `the reader overlapped the rewrites (${reads} reads)`);
        const final = JSON.parse(readFileSync(join(runDirPath(b.registry, 'r'), 'record.json'), 'utf8'));
        assert.equal(final.toolUses, 10_000, 'no rewrite was lost');
        assert.deepEqual(strays(b.registry), []);
      },
      fastBase(),
    ));

  test('point 6, control: the same reader does catch half records when a record is rewritten in place', () =>
    withBox(
      'rewrite-naive',
      async (b) => {
        const { reads, torn } = await rewriteWhileReading(b, 'naive', 3_000);
        assert.ok(torn.length > 0, `the reader saw no torn record in ${reads} reads of in-place rewrites: it could not prove anything`);
      },
      fastBase(),
    ));
});
