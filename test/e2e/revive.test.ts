/**
 * `resume-subagent --revive` with real agent CLIs against the fake model servers (issue 25, points 3 and
 * 6): a run at work in a long tool loses every process at once — its supervisor, the CLI and the tool,
 * SIGKILL, as a power cut leaves it — and is revived in the same session: Claude Code with a continuation
 * prompt of the caller's, OpenCode with the default one, each answering it as the resumed run's answer.
 * The shell CLI, the races and the skips: test/cli/revive.test.ts.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { assertOk } from '../support/run.js';
import { until, untilInRun } from '../support/wait.js';
import { killPids, pidsWithCmdline, pidsWithEnv } from '../support/procs.js';
import { readJson, runDirPath, stderrTail } from '../support/registry.js';
import { fakeWorld, requestsWith, startLongTool, uniq, waitDone } from '../fakes/world.js';
import type { CliName } from '../fakes/env.js';

const CASES: Array<{ cli: CliName; tool: string; prompt: 'given' | 'default' }> = [
  { cli: 'claude', tool: 'Bash', prompt: 'given' },
  { cli: 'opencode', tool: 'bash', prompt: 'default' },
];

for (const c of CASES) {
  test(`${c.cli}: a run whose every process was killed mid-tool is revived in its session, with the ${c.prompt} continuation prompt`, async (t) => {
    const w = await fakeWorld(t, c.cli);
    if (!w) return;
    const b = w.box;
    const marker = uniq(`${c.cli}-revive`);
    const rec = await startLongTool(b, c.cli, marker, c.tool, 'the tool running the marker command');
    const dir = runDirPath(b.registry, 'long');
    const sessionId = await untilInRun('the record to hold the session id', dir, () => readJson(join(dir, 'record.json')).sessionId);
    const runMarker = `SUBAGENT_RUN_ID=${rec.runId}`;
    const supervisor = readJson(join(dir, 'record.json')).supervisor.pid;
    // A power cut: the supervisor and every process of the run (again for any a dying one started meanwhile).
    killPids([supervisor]);
    await until('no process of the run left', () => {
      killPids([...pidsWithEnv(runMarker), ...pidsWithCmdline(marker)]);
      return pidsWithEnv(runMarker).length === 0 && pidsWithCmdline(marker).length === 0;
    });
    await until('the run is unknown, its agent gone', () => {
      const s = assertOk(b.run('status', ['--name', 'long'])).agents[0];
      return s.status === 'unknown' && s.agentAlive === false;
    });

    const later = uniq('revived');
    const args = ['--revive', '--all', ...(c.prompt === 'given' ? ['--prompt', `REPLY:${later}`] : [])];
    const r = assertOk(await b.runAsync('resume-subagent', args), 'revive');
    assert.deepEqual(
      r.revived.map((x: any) => [x.name, x.run, x.prompt]),
      [['long', 2, 'continuation']],
    );
    assert.deepEqual(r.skipped, []);
    const a = await waitDone(b, 'long', t);
    assert.equal(a.outcome, 'succeeded', `${a.error} ${stderrTail(b.registry, 'long', 2)}`);
    assert.equal(a.run, 2);
    assert.equal(a.sessionId, sessionId, 'the same session');
    const answer = assertOk(b.run('result', ['--name', 'long', '--json']), 'result').lastAssistantText;
    if (c.prompt === 'given') {
      assert.equal(answer, later);
    } else {
      assert.equal(answer, 'ok (no directive)');
      assert.ok(requestsWith(w.srv, 'Your previous turn was interrupted', { main: true }).length >= 1, 'the default continuation prompt reached the model');
    }
  });
}
