/**
 * The status cache trusts the registry's journal (lib/registry/journal.ts) instead of a stat per run: so
 * the journal is attacked here, through the real executables — damaged, cut, zeroed, removed or replaced,
 * a line half written, a writer frozen between its two lines, a writer killed -9 before and after it
 * published its change, writers and listings at once — and every listing must still tell the truth: the
 * records as they are, never a cached view they no longer match. A view that shows through is proven
 * by doctoring it in the cache (support/status-cache.ts): a listing that prints the doctored value was
 * served from the cache, one that prints the record's was not.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, copyFileSync, readFileSync, renameSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { until } from '../support/wait.js';
import { runDirOf } from '../support/registry.js';
import { makeBox } from '../support/box.js';
import { isStopped } from '../support/procs.js';
import { startShell, waitTerminal } from '../support/shell.js';
import { cachedNames, doctorView, journalLine } from '../support/status-cache.js';

const b = makeBox('journal');
const journal = join(b.registry, 'journal');
const cachePath = join(b.registry, 'status-cache');
const NAMES = ['a', 'b/x', 'c', 'd', 'e', 'f', 'g'];

function list(args: string[] = [], env: NodeJS.ProcessEnv = {}): string {
  const r = b.run('status', args, { env });
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assert.equal(r.json.ok, true, r.stdout);
  return r.stdout;
}

/** The listing as it is without a cache (which this writes again). */
function fresh(): string {
  rmSync(cachePath, { force: true });
  return list();
}

function agent(out: string, name: string): any {
  return JSON.parse(out).agents.find((a: any) => a.name === name);
}

/** Waits until the latest records of `names` are old enough to be cached (2 s), then lists to fill the cache. */
async function settledAndCached(names: string[]): Promise<void> {
  const records = names.map((n) => {
    const runs = JSON.parse(list(['--name', n])).agents[0].run;
    return join(runDirOf(b.registry, n, runs), 'record.json');
  });
  await until('the records settled', () => records.every((r) => Date.now() - statSync(r).ctimeMs > 2300), 15_000, 100);
  const truth = fresh();
  assert.equal(list(), truth, 'a cached listing is the truth');
  for (const n of names) assert.ok(cachedNames(b.registry).includes(n), `${n} is cached`);
}

/** A doctored view of `a` shows through while the cache serves it. */
function doctorA(): void {
  doctorView(b.registry, 'a', (v) => v.replace('"exitCode":0', '"exitCode":7'));
  assert.equal(agent(list(), 'a').exitCode, 7, 'the doctored view is served');
}

describe('status: the journal behind the cache, attacked', () => {
  test('set-up: done runs, cached; their ends are in the journal', async () => {
    for (const n of NAMES) startShell(b, n, `echo ${n}`);
    waitTerminal(b, NAMES);
    await settledAndCached(NAMES);
    assert.ok(readFileSync(journal, 'latin1').split('\n').filter(Boolean).length >= 2 * NAMES.length, 'each end is journalled');
  });

  test('a journal damaged, cut, zeroed, removed or replaced proves nothing: every record is read', () => {
    const cases: Array<[string, () => void]> = [
      ['a garbage line appended', () => appendFileSync(journal, 'not a journal line\n')],
      ['a line with a wrong checksum', () => appendFileSync(journal, journalLine('-', 'zzz').replace(/[0-9a-f]{8}\n$/, '00000000\n'))],
      ['cut to half', () => truncateSync(journal, Math.floor(statSync(journal).size / 2))],
      ['zeroed in place, same size', () => writeFileSync(journal, Buffer.alloc(statSync(journal).size, 0))],
      [
        'cut to nothing and written again to beyond its old size',
        () => {
          const size = statSync(journal).size;
          writeFileSync(journal, '');
          for (let i = 0; statSync(journal).size <= size; i++) appendFileSync(journal, journalLine('+', `nobody-${i}`, i));
        },
      ],
      [
        'replaced by a copy (another inode)',
        () => {
          copyFileSync(journal, journal + '.copy');
          renameSync(journal + '.copy', journal);
        },
      ],
      ['removed', () => rmSync(journal)],
    ];
    for (const [what, damage] of cases) {
      // A line of no run of ours first, so that the mark lies past the start of the file.
      appendFileSync(journal, journalLine('-', 'nobody', 0));
      const truth = fresh();
      doctorA();
      damage();
      assert.equal(list(), truth, `${what}: the records, not the cache`);
      assert.equal(list(), truth, `${what}: and again, from the cache written again`);
      // Every change journalled after the damage is seen again: the cache serves from the new mark.
      doctorA();
    }
  });

  test('a line half written is left for the next listing; once whole, it names its run', () => {
    const truth = fresh();
    doctorA();
    const line = journalLine('-', 'a', 99);
    appendFileSync(journal, line.slice(0, 10));
    assert.equal(agent(list(), 'a').exitCode, 7, 'a line without its end is not read yet, and is not damage');
    appendFileSync(journal, line.slice(10));
    assert.equal(list(), truth, 'the whole line names "a": its record is read');
  });

  test('a writer frozen between its "+" and its publication: the name is read, not cached, until the change is published', async () => {
    const truth = fresh();
    const w = b.spawn('resume-subagent', ['--name', 'c', '--prompt', 'echo again'], { env: { SUBAGENT_TEST_PAUSE_AT: 'journal-begun' } });
    await until('the resume holds still after its "+"', () => isStopped(w.pid) || w.settled(), 30_000);
    assert.equal(w.settled(), false, 'the resume stopped at its checkpoint');
    for (let i = 0; i < 2; i++) {
      assert.equal(list(), truth, 'nothing is published yet: run 1');
      assert.ok(!cachedNames(b.registry).includes('c'), 'a name with a change open is not cached');
    }
    process.kill(w.pid, 'SIGCONT');
    const r = await w.done;
    assert.equal(r.code, 0, r.stdout);
    const now = agent(list(), 'c');
    assert.equal(now.run, 2, 'published: run 2');
    // The run's supervisor has the knob too: it holds still at its own "+", when it records the end.
    await until('the supervisor holds still at its end', () => isStopped(now.pid), 30_000);
    assert.equal(agent(list(), 'c').status, 'running', 'its end is not published yet');
    process.kill(now.pid, 'SIGCONT');
    waitTerminal(b, ['c']);
    assert.equal(agent(list(), 'c').outcome, 'succeeded');
  });

  test('a writer killed -9 after it published its change and before its "-": the listing that read before the publication kept nothing stale', async () => {
    await settledAndCached(['d']);
    const w = b.spawn('resume-subagent', ['--name', 'd', '--prompt', 'echo again'], {
      env: { SUBAGENT_TEST_PAUSE_AT: 'journal-begun', SUBAGENT_TEST_CRASH_AT: 'journal-published' },
    });
    await until('the resume holds still after its "+"', () => isStopped(w.pid) || w.settled(), 30_000);
    assert.equal(agent(list(), 'd').run, 1, 'read while the change is open: run 1, not cached');
    process.kill(w.pid, 'SIGCONT');
    const r = await w.done;
    assert.equal(r.signal, 'SIGKILL', 'the resume was killed at its checkpoint');
    assert.ok(
      !readFileSync(journal, 'latin1')
        .split('\n')
        .some((l) => l.startsWith(`- ${w.pid} `)),
      'its "-" was never written',
    );
    assert.equal(agent(list(), 'd').run, 2, 'the published run, though its "-" never came');
    assert.equal(list(), fresh(), 'the cache agrees with the records');
  });

  test('a writer killed -9 after its "+", before it published: nothing changed, and the name is cached again once its writer is gone', async () => {
    const truth = fresh();
    const r = b.run('resume-subagent', ['--name', 'e', '--prompt', 'echo again'], { env: { SUBAGENT_TEST_CRASH_AT: 'journal-begun' } });
    assert.equal(r.signal, 'SIGKILL', r.stdout);
    assert.equal(list(), truth, 'run 1, as it was');
    assert.equal(list(), truth);
    assert.ok(cachedNames(b.registry).includes('e'), 'its writer is dead: the change is closed, the name cached again');
  });

  test('resumes and listings at once: every listing is whole, and the last one is the truth', async () => {
    await settledAndCached(['f', 'g']);
    const resumes = ['f', 'g'].map((n) => b.runAsync('resume-subagent', ['--name', n, '--prompt', `echo ${n}-again`]));
    const listings = Array.from({ length: 6 }, () => b.runAsync('status', []));
    for (const l of await Promise.all(listings)) {
      assert.equal(l.code, 0, l.stdout);
      for (const n of ['f', 'g']) assert.ok([1, 2].includes(agent(l.stdout, n).run), `${n}: run 1 or 2`);
    }
    for (const r of await Promise.all(resumes)) assert.equal(r.code, 0, r.stdout);
    for (const n of ['f', 'g']) assert.equal(agent(list(), n).run, 2, `${n}: the new run once the resume returned`);
    waitTerminal(b, ['f', 'g']);
    const after = list();
    assert.equal(after, fresh(), 'the cache agrees with the records');
    for (const n of ['f', 'g']) assert.equal(agent(after, n).outcome, 'succeeded');
  });
});
