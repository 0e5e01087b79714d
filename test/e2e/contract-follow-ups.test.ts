// Issue 27, point 2, with real agent CLIs: three follow-ups queued to a running run
// (`resume-subagent --queue`) are answered at once in order, then run one at a time, in order, in the same
// session — Claude Code and Codex (the contract suite's rows, test/e2e/contract/) against their fake
// model servers on 127.0.0.1. The shell CLI's cases are test/cli/follow-ups.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { writeFileSync } from 'node:fs';
import { requestsWith, uniq } from '../fakes/world.js';
import { pidsWithCmdline } from '../support/procs.js';
import { runDirPath, stderrTail } from '../support/registry.js';
import { assertOk } from '../support/run.js';
import { untilInRun } from '../support/wait.js';
import { ROWS } from './contract/rows.js';

for (const row of ROWS.filter((r) => r.cli === 'claude' || r.cli === 'codex')) {
  // Claude's rows are one a pinned version: its session scenario's title names it.
  const who = row.session?.title.split(':')[0] ?? row.cli;
  const tool = row.session?.tool ?? 'Bash';
  test(`${who}: three follow-ups queued to a running run are answered in order, in its session`, async (t) => {
    const c = await row.open(t, 'follow-ups');
    if (!c) return;
    const { b, srv } = c;
    const name = 'follow';
    const gate = join(b.dir, 'follow-gate');
    const marker = uniq('held');
    await c.start(name, `TOOL:${tool}:while [ ! -e '${gate}' ]; do sleep 0.05; done; echo ${marker}`, row.session?.start?.(c));
    // In its tool: the run is busy until the gate opens.
    await untilInRun('the tool running', runDirPath(b.registry, name), () => pidsWithCmdline(marker).length > 0);
    const words = [uniq('two'), uniq('three'), uniq('four')];
    const lines = [];
    for (const w of words) lines.push(assertOk(await b.runAsync('resume-subagent', ['--queue', '--name', name, '--prompt', `REPLY:${w}`]), `queue ${w}`));
    assert.deepEqual(
      lines.map((l) => [l.mode, l.position]),
      [
        ['queued', 1],
        ['queued', 2],
        ['queued', 3],
      ],
    );
    const busy = assertOk(await b.runAsync('status', ['--name', name])).agents[0];
    assert.equal(busy.status, 'running');
    assert.equal(busy.queuedPrompts.length, 3);
    writeFileSync(gate, '');
    const last = await c.wait(name);
    assert.equal(last.run, 4, `${last.error} ${stderrTail(b.registry, name, last.run)}`);
    assert.equal(last.outcome, 'succeeded', `${last.error} ${stderrTail(b.registry, name, 4)}`);
    assert.deepEqual(last.queuedPrompts, []);
    const runs = assertOk(await b.runAsync('status', ['--runs', '--name', name])).runs;
    const session = runs[0].sessionId;
    assert.ok(session, 'run 1 reported its session');
    for (let run = 2; run <= 4; run++) {
      const r = assertOk(await b.runAsync('result', ['--name', name, '--run', String(run), '--json']), `result ${run}`);
      assert.equal(r.lastAssistantText, words[run - 2], `run ${run} answered its own follow-up`);
      assert.equal(runs[run - 1].sessionId, session, `run ${run}: the same session`);
      assert.equal(runs[run - 1].outcome, 'succeeded');
    }
    // The fake saw them in order.
    const at = words.map((w) => requestsWith(srv, w, { main: row.session?.main })[0]?.index ?? -1);
    assert.ok(at.every((i) => i >= 0) && at[0]! < at[1]! && at[1]! < at[2]!, `in order: ${at}`);
  });
}
