/**
 * Issue 4, fan-out at scale, through the real executables: nested orchestration — starts from inside
 * runs record their parent and depth, the depth limit (SUBAGENT_MAX_DEPTH) refuses and fails closed,
 * `status --tree`, and `cancel --recursive`.
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BIN } from '../../support/paths.js';
import { assertError } from '../../support/run.js';
import { LONG, until } from '../../support/wait.js';
import { liveRunIds, pidAlive } from '../../support/procs.js';
import { recordOf } from '../../support/registry.js';
import { makeBox } from '../../support/box.js';
import { byName, gate, open, resultText, shellArgs, startShell, statusLineAsync, untilStatus, waitTerminal } from '../../support/shell.js';

const bNest = makeBox('fan-nest');

describe('nested orchestration', () => {
  test('starts from inside runs record parent and depth; the depth limit refuses; --tree; cancel --recursive', async () => {
    const b = bNest;
    const start = join(BIN, 'start-subagent');
    const loop = `while [ ! -e '${join(b.dir, 'never')}' ]; do sleep 0.05; done`;
    const file = (n: string, body: string) => {
      const p = join(b.dir, `${n}.sh`);
      writeFileSync(p, body);
      return p;
    };
    const leaf = file('leaf', `'${start}' --name nest/deeper --cli shell --prompt 'echo too-deep'\necho "rc=$?"\n${loop}\n`);
    const mid = file('mid', `'${start}' --name nest/leaf --cli shell --prompt-file '${leaf}'\necho "rc=$?"\n${loop}\n`);
    const top = file(
      'top',
      `echo "parent-env=$SUBAGENT_PARENT dir=$SUBAGENT_DIR"\n'${start}' --name nest/mid --cli shell --prompt-file '${mid}'\necho "rc=$?"\n${loop}\n`,
    );
    const s = b.run('start-subagent', ['--name', 'nest/top', '--cli', 'shell', '--prompt-file', top]);
    assert.equal(s.code, 0, s.stdout + s.stderr);
    const names = ['nest/top', 'nest/mid', 'nest/leaf'];
    try {
      // The leaf's own nested start was refused: its output holds the E_DEPTH_LIMIT line.
      const leafOut = await until(
        'the leaf tried to nest deeper',
        () => {
          try {
            const txt = resultText(b, 'nest/leaf');
            return /rc=\d/.test(txt) ? txt : null;
          } catch {
            return null;
          }
        },
        LONG,
        100,
      );
      const [line, rc] = leafOut.split('\n');
      const refused = JSON.parse(line!);
      assert.equal(refused.ok, false);
      assert.equal(refused.code, 'E_DEPTH_LIMIT');
      assert.equal(refused.details.depth, 4);
      assert.equal(refused.details.max, 3);
      assert.equal(refused.details.parent, 'nest/leaf');
      assert.equal(rc, 'rc=1');

      const topOut = resultText(b, 'nest/top').split('\n');
      assert.equal(topOut[0], `parent-env=nest/top dir=${b.registry}`, 'the supervisor exports SUBAGENT_PARENT and SUBAGENT_DIR');
      const inner = JSON.parse(topOut[1]!);
      assert.equal(inner.ok, true);
      assert.equal(inner.name, 'nest/mid');
      assert.equal(inner.registry, b.registry, 'the nested start went into the same registry');
      assert.equal(topOut[2], 'rc=0');

      const st = await until(
        'all three running',
        async () => {
          const x = await statusLineAsync(b, ['--prefix', 'nest']);
          return x.agents.length === 3 && x.agents.every((a: any) => a.status === 'running') ? x : null;
        },
        LONG,
        50,
      );
      const m = byName(st.agents);
      assert.deepEqual(Object.keys(m).sort(), ['nest/leaf', 'nest/mid', 'nest/top'], 'nest/deeper was never created');
      assert.deepEqual([m['nest/top'].parent, m['nest/top'].depth], [null, 1]);
      assert.deepEqual([m['nest/mid'].parent, m['nest/mid'].depth], ['nest/top', 2]);
      assert.deepEqual([m['nest/leaf'].parent, m['nest/leaf'].depth], ['nest/mid', 3]);

      const tr = b.run('status', ['--prefix', 'nest', '--tree']);
      assert.equal(tr.code, 0, tr.stdout + tr.stderr);
      const tl = tr.stdout.split('\n').filter(Boolean);
      assert.equal(tl.length, 3, tr.stdout);
      assert.match(tl[0]!, /^nest\/top {2}\[shell\] running {2}run 1$/);
      assert.match(tl[1]!, /^└─ nest\/mid {2}\[shell\] running {2}run 1$/);
      assert.match(tl[2]!, /^ {3}└─ nest\/leaf {2}\[shell\] running {2}run 1$/);

      // Every process of the three runs, by their run-id markers, and their supervisors.
      const ids = names.map((n) => recordOf(b.registry, n).runId as string);
      const supervisors = names.map((n) => m[n].pid as number);
      const live = liveRunIds(b.marker);
      for (const [i, id] of ids.entries()) assert.ok((live.get(id) ?? []).length > 0, `${names[i]} has live processes`);

      const c = b.run('cancel', ['--name', 'nest/top', '--recursive']);
      assert.equal(c.code, 0, c.stdout + c.stderr);
      assert.equal(c.json.ok, true);
      assert.equal(c.json.outcome, 'cancelled');
      assert.deepEqual(c.json.survivors, []);
      assert.deepEqual(
        c.json.descendants.map((d: any) => [d.name, d.previousStatus, d.status, d.outcome]),
        [
          ['nest/mid', 'running', 'done', 'cancelled'],
          ['nest/leaf', 'running', 'done', 'cancelled'],
        ],
      );
      for (const d of c.json.descendants) assert.deepEqual(d.survivors, []);
      const after = liveRunIds(b.marker);
      for (const [i, id] of ids.entries()) assert.deepEqual(after.get(id) ?? [], [], `a process of ${names[i]} survived`);
      await until('the supervisors exit', () => supervisors.every((p) => !pidAlive(p)), LONG);
      const fin = byName(b.run('status', ['--prefix', 'nest']).json.agents);
      for (const n of names) assert.deepEqual([fin[n].status, fin[n].outcome], ['done', 'cancelled'], n);
      // Nothing left to cancel: E_NOT_RUNNING.
      assertError(b.run('cancel', ['--name', 'nest/top', '--recursive']), 'E_NOT_RUNNING');
    } finally {
      b.run('cancel', ['--name', 'nest/top', '--recursive']);
    }
  });

  test('cancel --recursive on a parent that already ended still cancels its running child', async () => {
    const b = bNest;
    const start = join(BIN, 'start-subagent');
    const g = join(b.dir, 'gate-orphan');
    const child = join(b.dir, 'child.sh');
    writeFileSync(child, `${gate(g)}\necho child-end\n`);
    startShell(b, 'gone/top', `'${start}' --name gone/child --cli shell --prompt-file '${child}'`);
    try {
      assert.equal(waitTerminal(b, ['gone/top'])['gone/top'].outcome, 'succeeded');
      const ch = await untilStatus(b, 'gone/child', (a) => a.status === 'running', 'child running');
      assert.equal(ch.parent, 'gone/top');
      const c = b.run('cancel', ['--name', 'gone/top', '--recursive']);
      assert.equal(c.code, 0, c.stdout + c.stderr);
      assert.equal(c.json.previousStatus, 'done');
      assert.equal(c.json.outcome, 'succeeded', 'the ended parent keeps its outcome');
      assert.deepEqual(
        c.json.descendants.map((d: any) => [d.name, d.previousStatus, d.outcome]),
        [['gone/child', 'running', 'cancelled']],
      );
      assert.equal(pidAlive(ch.agentPid), false);
      assertError(b.run('cancel', ['--name', 'gone/top', '--recursive']), 'E_NOT_RUNNING');
    } finally {
      open(g);
    }
  });

  test('SUBAGENT_MAX_DEPTH=1 refuses any nested start; a start outside a run is depth 1', () => {
    const b = bNest;
    const start = join(BIN, 'start-subagent');
    const s = startShell(b, 'flat/top', `'${start}' --name flat/child --cli shell --prompt 'echo hi'; echo "rc=$?"`, [], { env: { SUBAGENT_MAX_DEPTH: '1' } });
    assert.equal(s.ok, true);
    const a = waitTerminal(b, ['flat/top'])['flat/top'];
    assert.equal(a.outcome, 'succeeded');
    assert.equal(a.depth, 1);
    assert.equal(a.parent, null);
    const [line, rc] = resultText(b, 'flat/top').split('\n');
    const refused = JSON.parse(line!);
    assert.equal(refused.code, 'E_DEPTH_LIMIT');
    assert.equal(refused.details.max, 1);
    assert.equal(refused.details.depth, 2);
    assert.equal(rc, 'rc=1');
    assert.equal(b.run('status', ['--name', 'flat/child']).json.agents.length, 0);
  });

  test('the depth travels in SUBAGENT_DEPTH: dropping SUBAGENT_DIR does not reset it; a depth that cannot be told is refused', () => {
    const b = bNest;
    const start = join(BIN, 'start-subagent');
    // Each level starts the next with SUBAGENT_DIR removed (the registry given by --registry instead):
    // the parent's record cannot be read that way, the exported depth still counts.
    const leaf = join(b.dir, 'lost-leaf.sh');
    writeFileSync(
      leaf,
      `echo "depth=$SUBAGENT_DEPTH"\nenv -u SUBAGENT_DIR '${start}' --registry '${b.registry}' --name lost/deeper --cli shell --prompt 'echo no'\necho "rc=$?"\n`,
    );
    const mid = join(b.dir, 'lost-mid.sh');
    writeFileSync(
      mid,
      `echo "depth=$SUBAGENT_DEPTH"\nenv -u SUBAGENT_DIR '${start}' --registry '${b.registry}' --name lost/leaf --cli shell --prompt-file '${leaf}'\necho "rc=$?"\n`,
    );
    const s = b.run('start-subagent', ['--name', 'lost/top', '--cli', 'shell', '--prompt-file', mid], { env: { SUBAGENT_MAX_DEPTH: '2' } });
    assert.equal(s.code, 0, s.stdout + s.stderr);
    waitTerminal(b, ['lost/top']);
    const top = resultText(b, 'lost/top').split('\n');
    assert.equal(top[0], 'depth=1', "the supervisor exports the run's depth");
    assert.equal(JSON.parse(top[1]!).ok, true, top[1]);
    const l = waitTerminal(b, ['lost/leaf'])['lost/leaf'];
    assert.deepEqual([l.parent, l.depth], ['lost/top', 2]);
    const [depthLine, line, rc] = resultText(b, 'lost/leaf').split('\n');
    assert.equal(depthLine, 'depth=2');
    const refused = JSON.parse(line!);
    assert.equal(refused.code, 'E_DEPTH_LIMIT', line);
    assert.deepEqual([refused.details.parent, refused.details.depth, refused.details.max], ['lost/leaf', 3, 2]);
    assert.equal(rc, 'rc=1');
    assert.equal(b.run('status', ['--name', 'lost/deeper']).json.agents.length, 0);

    // SUBAGENT_PARENT without SUBAGENT_DEPTH: the depth is read from the parent's record if it can be…
    const viaRecord = b.run('start-subagent', shellArgs('lost/by-record', 'echo ok'), { env: { SUBAGENT_PARENT: 'lost/leaf', SUBAGENT_MAX_DEPTH: '3' } });
    assert.equal(viaRecord.code, 0, viaRecord.stdout);
    assert.equal(waitTerminal(b, ['lost/by-record'])['lost/by-record'].depth, 3);
    // …and when it cannot (no registry to read it from, no such parent, a garbled SUBAGENT_DEPTH), the
    // limit counts as reached: the limit fails closed.
    const noDir: NodeJS.ProcessEnv = { ...b.env, SUBAGENT_PARENT: 'lost/leaf', SUBAGENT_MAX_DEPTH: '9' };
    delete noDir.SUBAGENT_DIR;
    const cases: Array<[string, NodeJS.ProcessEnv]> = [
      ['no SUBAGENT_DIR to read the parent from', noDir],
      ['no such parent', { ...b.env, SUBAGENT_PARENT: 'lost/nobody', SUBAGENT_MAX_DEPTH: '9' }],
      ['a garbled SUBAGENT_DEPTH', { ...b.env, SUBAGENT_PARENT: 'lost/top', SUBAGENT_DEPTH: 'x1', SUBAGENT_MAX_DEPTH: '9' }],
    ];
    for (const [label, env] of cases) {
      const r = spawnSync(join(BIN, 'start-subagent'), [...shellArgs('lost/unknown-depth', 'echo no'), '--registry', b.registry], {
        cwd: b.dir,
        env,
        encoding: 'utf8',
      });
      assert.equal(r.status, 1, `${label}: ${r.stdout}${r.stderr}`);
      const j = JSON.parse(r.stdout);
      assert.equal(j.code, 'E_DEPTH_LIMIT', label);
      assert.deepEqual([j.details.depthKnown, j.details.depth, j.details.max], [false, 10, 9], label);
    }
    assert.equal(b.run('status', ['--name', 'lost/unknown-depth']).json.agents.length, 0);
  });
});
