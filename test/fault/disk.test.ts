// test-order: first — the longest file of the CLI and fault suites (it waits on a filling disk): started before all others (scripts/test.sh).
/**
 * Issue 5, point 4 (docs/guarantees.md, 5): a full disk and a read-only registry. The registry is a 256 KiB
 * tmpfs mounted in a private mount namespace (`unshare -m`, or `-Urm` when not root); the driver
 * test/fixtures/fault-disk.mjs runs the real verbs there and reports the facts asserted here.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BIN, FIXTURES } from '../support/paths.js';
import { runProgramAsync } from '../support/run.js';
import { withBox } from '../support/box.js';
import { works } from '../support/machine.js';

function unshareFlags(): string[] | null {
  const probe = mkdtempSync(join(tmpdir(), 'subagents-fault-mnt-probe-'));
  try {
    const script = `mount -t tmpfs -o size=64k tmpfs '${probe}' && mount -o remount,ro '${probe}'`;
    const candidates = process.getuid?.() === 0 ? [['-m'], ['-Urm']] : [['-Urm']];
    for (const flags of candidates) if (works('unshare', [...flags, '/bin/sh', '-c', script])) return flags;
    return null;
  } finally {
    rmSync(probe, { recursive: true, force: true });
  }
}

function assertUnwritable(r: any, what: string): void {
  assert.ok(r.json, `${what}: one JSON line expected: ${JSON.stringify(r)}`);
  assert.equal(r.json.ok, false, `${what}: ${r.stdout}`);
  assert.equal(r.json.code, 'E_REGISTRY_UNWRITABLE', `${what}: ${r.stdout}`);
  assert.equal(r.code, 1);
  assert.equal(typeof r.json.details?.hint, 'string');
}

function assertOkLine(r: any, what: string): any {
  assert.ok(r.json, `${what}: one JSON line expected: ${JSON.stringify(r)}`);
  assert.equal(r.json.ok, true, `${what}: ${r.stdout} ${r.stderr}`);
  return r.json;
}

test('point 4: full disk and read-only registry (tmpfs in a private mount namespace)', async (t) => {
  const flags = unshareFlags();
  if (!flags) {
    t.skip('cannot mount a tmpfs in a private mount namespace here (`unshare -m` / `unshare -Urm` refused)');
    return;
  }
  await withBox('disk', async (b) => {
    const d = await runProgramAsync('unshare', [...flags, process.execPath, join(FIXTURES, 'fault-disk.mjs'), BIN, b.dir], { cwd: process.cwd(), env: b.env });
    assert.equal(d.code, 0, `driver failed: ${d.stdout} ${d.stderr}`);
    const r = JSON.parse(d.stdout.trim().split('\n').pop()!);
    assert.equal(r.error, undefined, `driver error: ${r.error}`);
    assertOkLine(r.keptStart, 'start of the existing run');
    assert.equal(assertOkLine(r.keptWait, 'wait').agents[0].outcome, 'succeeded');

    await t.test('full disk: start fails with E_REGISTRY_UNWRITABLE, leaves no half record or temp file', () => {
      const f = r.full;
      assert.ok(f.filled > 0);
      assertUnwritable(f.start, 'start on a full disk');
      assertUnwritable(f.startStdin, 'start with a stdin prompt on a full disk');
      assert.deepEqual(
        f.treeAfter,
        f.treeBefore,
        `the registry is exactly as it was (no half record, no temp file, no new name); still running at the snapshot: ${f.liveBeforeSnapshot}`,
      );
      assert.deepEqual(f.strays, [], 'no lock, temp or unpublished files');
    });

    await t.test('full disk: an existing record stays byte-identical; reads still work; resume fails cleanly', () => {
      const f = r.full;
      assert.equal(f.keptSame, true, 'the existing record is byte-identical');
      assertUnwritable(f.resume, 'resume on a full disk');
      assert.equal(assertOkLine(f.status, 'status').agents[0].status, 'done');
      assert.equal(assertOkLine(f.result, 'result').lastAssistantText, 'kept-output\n');
      assert.equal(f.cancel.json?.code, 'E_NOT_RUNNING', f.cancel.stdout);
    });

    await t.test('full disk: cancel still stops a running run (a runaway agent filling the disk must be stoppable)', () => {
      const f = r.full;
      assert.equal(f.stuckRunning, true, `the run to cancel was running: ${JSON.stringify(r.stuckStart)}`);
      assert.ok(f.cancelStuck.json, `one JSON line: ${JSON.stringify(f.cancelStuck)}`);
      assert.equal(f.stuckAgentAliveAfterCancel, false, `cancel on a full disk left the agent running: ${f.cancelStuck.stdout}`);
      // The writes that failed on the full disk left the record as it was, or a whole one: never half.
      const rec = f.stuckRecordAfter;
      assert.equal(rec.unparsable, null, `the record parses after the failed rewrites: ${JSON.stringify(rec)}`);
      assert.ok(
        rec.sameBytes || (rec.status === 'done' && rec.outcome === 'cancelled'),
        `byte-identical, or the whole cancelled record: ${JSON.stringify(rec)}`,
      );
    });

    await t.test('the disk fills while a run is in flight: its end is recorded once space is back, and it recovers', () => {
      const f = r.inflight;
      assertOkLine(f.start, 'start');
      const full = assertOkLine(f.whileFull, 'status while the disk is full').agents[0];
      assert.equal(full.status, 'running', `its supervisor waits for the disk, alive: never unknown: ${JSON.stringify(full)}`);
      for (const rec of f.recordsWhileFull) assert.equal(rec.ok, true, `${rec.path}: ${rec.error}`);
      assert.deepEqual(
        f.straysWhileFull.filter((s: string) => /\.tmp-|\.lock |\.break /.test(s)),
        [],
        `no temp or lock file left by the failed writes (still running: ${f.liveAfterWait})`,
      );
      const end = assertOkLine(f.wait, 'the wait for the run once space is back returns').agents[0];
      assert.deepEqual(
        f.straysAfter.filter((s: string) => /\.tmp-|\.lock |\.break /.test(s)),
        [],
        `no temp or lock file left once the end landed (still running: ${f.liveAfterWait})`,
      );
      assert.equal(end.status, 'done', `the end is recorded once space is back: ${JSON.stringify(end)}`);
      assert.equal(end.exitCode, 5, 'the recorded exit code is the real one');
      const after = assertOkLine(f.statusAfterFree, 'status once space is back').agents[0];
      assert.equal(after.status, end.status, 'the state stays what it was once space is back');
      assertOkLine(f.resume, 'resume once space is back');
      const again = assertOkLine(f.resumeWait, 'wait').agents[0];
      assert.equal(again.status, 'done');
      assert.equal(again.outcome, 'succeeded');
      for (const rec of f.records) assert.equal(rec.ok, true, `${rec.path}: ${rec.error}`);
      assert.equal(f.keptSame, true);
    });

    await t.test('read-only registry: start and resume fail with E_REGISTRY_UNWRITABLE; nothing changes; reads work', () => {
      const ro = r.readonly;
      assert.equal(ro.remount.code, 0, `remount,ro failed: ${ro.remount.stderr} (files open: ${ro.openBeforeRemount})`);
      assertUnwritable(ro.start, 'start on a read-only registry');
      assertUnwritable(ro.resume, 'resume on a read-only registry');
      assert.equal(ro.treeSame, true, 'the registry did not change');
      assert.equal(ro.keptSame, true, 'the existing record is byte-identical');
      const s = assertOkLine(ro.status, 'status');
      assert.ok(s.agents.some((a: any) => a.name === 'kept' && a.status === 'done'));
      assert.equal(s.problems, undefined);
      assert.equal(assertOkLine(ro.result, 'result').lastAssistantText, 'kept-output\n');
      assert.ok(assertOkLine(ro.search, 'search').matches.length >= 1);
      assert.equal(ro.cancel.json?.code, 'E_NOT_RUNNING', ro.cancel.stdout);
    });
  });
});
