// test-matrix: once — make demo prints what the README says: a script's text, the same on every Node and process backend (scripts/test.sh).
// The README's main job, `make demo`, is scripts/demo.sh after a build: it must keep doing what the
// README says — fan out three named shell subagents (one fails), wait for them, print results and
// statuses — so it runs here for real, on this test's own registry.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { ROOT } from '../support/paths.js';
import { makeBox } from '../support/box.js';

const b = makeBox('demo');

test('make demo: three named shell subagents, one failing; results and statuses printed; every run recorded', () => {
  const r = spawnSync('bash', [join(ROOT, 'scripts/demo.sh')], {
    cwd: b.dir,
    env: b.env,
    encoding: 'utf8',
    timeout: 120_000,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  assert.equal(r.status, 0, r.stdout + r.stderr);
  const out = r.stdout;
  assert.match(out, /^registry: /m);
  // The three starts each printed their JSON line, and the wait its one line with every run done.
  const lines = out.split('\n').filter((l) => l.startsWith('{'));
  const starts = lines.map((l) => JSON.parse(l)).filter((j) => j.mode === 'new');
  assert.deepEqual(starts.map((j) => j.name).sort(), ['demo/broken', 'demo/primes', 'demo/system']);
  const wait = lines.map((l) => JSON.parse(l)).find((j) => Array.isArray(j.agents));
  assert.ok(wait, out);
  assert.equal(wait.agents.length, 3);
  assert.ok(
    wait.agents.every((a: any) => a.status === 'done'),
    out,
  );
  // The results, then the status table: two succeeded, the broken one failed with ls's exit code.
  assert.match(out, /── result of demo\/primes\nprimes below 40: 2 3 5 7 11 13 17 19 23 29 31 37\n/);
  assert.match(out, /── result of demo\/system\nkernel .+, \d+ cores, \d+ entries in \/\n/);
  assert.match(out, /^demo\/primes +done +succeeded +exit=0 /m);
  assert.match(out, /^demo\/system +done +succeeded +exit=0 /m);
  assert.match(out, /^demo\/broken +done +failed +exit=[1-9]/m);
  // They are in this box's registry, as the records say.
  const st = b.run('status', ['--prefix', 'demo']);
  assert.deepEqual(
    st.json.agents.map((a: any) => `${a.name} ${a.outcome}`),
    ['demo/broken failed', 'demo/primes succeeded', 'demo/system succeeded'],
  );
});
