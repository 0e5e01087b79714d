/**
 * Issue 23, point 5 (docs/reliability.md, "The disk fills in the middle of a run"): the registry's disk
 * fills for seconds while a run is in flight. The supervisor must not die of it: the run's --max-time and
 * its stall watch still stop the agent while the disk is full, the run stays `running` (its supervisor
 * alive) rather than `unknown`, and its end is recorded once space is back. The registry is a 512 KiB
 * tmpfs in a private mount namespace; the driver test/fixtures/fault-disk-midrun.mjs reports the facts.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BIN, FIXTURES } from '../support/paths.js';
import { runProgramAsync } from '../support/run.js';
import { withBox } from '../support/box.js';
import { skipUnlessCi, works } from '../support/machine.js';

function unshareFlags(): string[] | null {
  const probe = mkdtempSync(join(tmpdir(), 'subagents-fault-mnt-probe-'));
  try {
    const candidates = process.getuid?.() === 0 ? [['-m'], ['-Urm']] : [['-Urm']];
    for (const flags of candidates) if (works('unshare', [...flags, '/bin/sh', '-c', `mount -t tmpfs -o size=64k tmpfs '${probe}'`])) return flags;
    return null;
  } finally {
    rmSync(probe, { recursive: true, force: true });
  }
}

function assertHeldAndRecorded(f: any, what: string, end: { outcome: string; reason: string }): void {
  const facts = JSON.stringify({ ...f, log: undefined });
  assert.equal(f.start.json?.ok, true, `${what}: start: ${f.start.stdout} ${f.start.stderr}`);
  assert.equal(f.running, true, `${what}: the run got to running: ${facts}`);
  assert.ok(f.filled > 0, `${what}: the disk was filled`);
  assert.equal(f.agentAliveWhenFull, true, `${what}: the agent still ran when the disk filled (else the fault came too late to test anything): ${facts}`);
  assert.equal(f.cancelWhenFull, null, `${what}: nothing was stopped before the disk filled: ${facts}`);
  assert.equal(f.agentStoppedWhileFull, true, `${what}: the supervisor stopped the agent while the disk was full: ${facts}\n${f.log}`);
  assert.equal(f.supervisorAliveWhileFull, true, `${what}: the supervisor survived the full disk: ${facts}\n${f.log}`);
  assert.equal(f.statusWhileFull, 'running', `${what}: its end could not be written yet`);
  assert.equal(f.entryWhileFull?.status, 'running', `${what}: status says running (its supervisor lives), not unknown: ${facts}`);
  const done = f.wait.json?.agents?.[0];
  assert.equal(f.wait.json?.ok, true, `${what}: the wait returns once space is back: ${f.wait.stdout}`);
  assert.equal(done?.status, 'done', `${what}: the end is recorded once space is back: ${facts}\n${f.log}`);
  assert.equal(done.outcome, end.outcome, facts);
  assert.equal(done.reason, end.reason, facts);
  assert.equal(f.record.status, 'done');
  assert.equal(f.record.cancel?.reason, end.reason, `${what}: the stop's intent is in the record: ${JSON.stringify(f.record.cancel)}`);
  assert.equal(f.supervisorGone, true, `${what}: the supervisor left once the end was recorded`);
}

test('the disk fills mid-run: --max-time and the stall watch still stop the agent, the end is recorded once space is back', async (t) => {
  const flags = unshareFlags();
  if (!flags) {
    skipUnlessCi(t, 'cannot mount a tmpfs in a private mount namespace here (`unshare -m` / `unshare -Urm` refused)');
    return;
  }
  await withBox('disk-midrun', async (b) => {
    const d = await runProgramAsync('unshare', [...flags, process.execPath, join(FIXTURES, 'fault-disk-midrun.mjs'), BIN, b.dir], {
      cwd: process.cwd(),
      env: b.env,
    });
    assert.equal(d.code, 0, `driver failed: ${d.stdout} ${d.stderr}`);
    const r = JSON.parse(d.stdout.trim().split('\n').pop()!);
    assert.equal(r.error, undefined, `driver error: ${r.error}`);
    await t.test('--max-time', () => assertHeldAndRecorded(r.maxTime, '--max-time 4', { outcome: 'failed', reason: 'max-time' }));
    await t.test('--stall-after with --stall-action cancel', () => assertHeldAndRecorded(r.stall, 'stall cancel', { outcome: 'cancelled', reason: 'stalled' }));
  });
});
