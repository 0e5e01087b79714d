/**
 * Issue 5, point 13: where the registry is. Nested registries (the nearest wins), an explicit
 * --registry or SUBAGENT_DIR beats the discovered one, a symlinked path is the same registry, no
 * cross-talk between registries, read-only verbs never create one, and every output names the
 * registry it resolved.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, realpathSync, symlinkSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { assertError, assertOk, type RunOpts } from '../support/run.js';
import { until } from '../support/wait.js';
import { withBox, type Box } from '../support/box.js';
import { gate, open, startShellAsync, untilStatus } from '../support/shell.js';

/** Discovery only: no SUBAGENT_DIR. */
const NO_ENV: NodeJS.ProcessEnv = { SUBAGENT_DIR: '', OPENCODE_PSA_DIR: '' };

function layout(b: Box) {
  const A = join(b.dir, 'a');
  const B = join(A, 'b');
  const C = join(B, 'c');
  mkdirSync(join(A, '.subagents'), { recursive: true });
  mkdirSync(join(B, '.subagents'), { recursive: true });
  mkdirSync(C, { recursive: true });
  const L = join(b.dir, 'link');
  symlinkSync(A, L);
  // A directory whose .subagents is a symlink to B's registry.
  const S = join(A, 's');
  mkdirSync(S);
  symlinkSync(join(B, '.subagents'), join(S, '.subagents'));
  return { A, B, C, L, S, regA: realpathSync(join(A, '.subagents')), regB: realpathSync(join(B, '.subagents')) };
}

describe('point 13: location', { concurrency: 2 }, () => {
  test('nested registries: the nearest wins, explicit beats discovered, a symlinked path is the same registry, no cross-talk', () =>
    withBox('location', async (b) => {
      const { A, B, C, L, S, regA, regB } = layout(b);
      const at = (cwd: string, env: NodeJS.ProcessEnv = {}): RunOpts => ({ cwd, env: { ...NO_ENV, ...env } });
      const gA = join(b.dir, 'gate-a');
      const gB = join(b.dir, 'gate-b');
      // The same name in two nested registries.
      const inB = await startShellAsync(b, 'x', `echo from-b; ${gate(gB)}`, [], at(C));
      assert.equal(inB.registry, regB, 'from a/b/c the nearest registry is a/b/.subagents');
      const inA = await startShellAsync(b, 'x', `echo from-a; ${gate(gA)}`, [], at(A));
      assert.equal(inA.registry, regA);
      for (const cwd of [A, C]) {
        await until(`x runs in ${cwd}`, async () => assertOk(await b.runAsync('status', ['--name', 'x'], at(cwd))).agents[0]?.status === 'running', 60_000, 50);
      }
      // Explicit beats discovered: --registry, then SUBAGENT_DIR (and --registry beats SUBAGENT_DIR).
      assert.equal(assertOk(await b.runAsync('status', ['--name', 'x', '--registry', join(A, '.subagents')], at(C))).registry, regA);
      assert.equal(assertOk(await b.runAsync('status', ['--name', 'x'], at(C, { SUBAGENT_DIR: join(A, '.subagents') }))).registry, regA);
      assert.equal(
        assertOk(await b.runAsync('status', ['--name', 'x', '--registry', join(B, '.subagents')], at(C, { SUBAGENT_DIR: join(A, '.subagents') }))).registry,
        regB,
      );
      assert.equal(assertOk(await b.runAsync('status', ['--name', 'x'], at(C, { OPENCODE_PSA_DIR: join(A, '.subagents') }))).registry, regA);
      // Relative --registry resolves against the caller's directory.
      assert.equal(assertOk(await b.runAsync('status', ['--registry', '../../.subagents'], at(C))).registry, regA);
      // A symlinked path is the same registry: same resolved path, same runs, the name is taken.
      for (const opts of [at(join(L, 'b', 'c')), at(b.dir, { SUBAGENT_DIR: join(L, 'b', '.subagents') }), at(S)]) {
        const s = assertOk(await b.runAsync('status', ['--name', 'x'], opts));
        assert.equal(s.registry, regB, JSON.stringify(opts.env));
        assert.equal(s.agents.length, 1);
        const e = assertError(await b.runAsync('start-subagent', ['--name', 'x', '--cli', 'shell', '--prompt', 'echo dup'], opts), 'E_NAME_EXISTS');
        assert.equal(e.details.registry, regB);
      }
      // No cross-talk: each registry sees its own run; cancel in one leaves the other running.
      assert.equal((await b.runAsync('result', ['--name', 'x'], at(C))).stdout, 'from-b\n');
      assert.equal((await b.runAsync('result', ['--name', 'x'], at(A))).stdout, 'from-a\n');
      const c = assertOk(await b.runAsync('cancel', ['--name', 'x'], at(C)), 'cancel in b');
      assert.equal(c.registry, regB);
      const stillA = assertOk(await b.runAsync('status', ['--name', 'x'], at(A))).agents[0];
      assert.equal(stillA.status, 'running', 'the run of the same name in the other registry is untouched');
      assert.equal(assertOk(await b.runAsync('status', ['--name', 'x'], at(C))).agents[0].outcome, 'cancelled');
      open(gA);
      open(gB);
      const done = assertOk(await b.runAsync('status', ['--wait-terminal', '--name', 'x', '--timeout', '60'], at(A)));
      assert.equal(done.agents[0].outcome, 'succeeded');
      assert.equal(done.registry, regA);
    }));

  test('the resolved registry is named in every output, success or failure', () =>
    withBox('location-out', async (b) => {
      const reg = b.registry;
      const g = join(b.dir, 'gate');
      const s = await startShellAsync(b, 'n', `echo hello; ${gate(g)}`);
      assert.equal(s.registry, reg);
      await untilStatus(b, 'n', (a) => a.status === 'running', 'running');
      const okLines = [
        await b.runAsync('status', []),
        await b.runAsync('status', ['--name', 'n']),
        await b.runAsync('result', ['--name', 'n', '--json']),
        await b.runAsync('search', ['--name', 'n', '--pattern', 'hello']),
        await b.runAsync('cancel', ['--name', 'n']),
        await b.runAsync('resume-subagent', ['--name', 'n', '--prompt', 'echo again']),
        await b.runAsync('status', ['--wait-terminal', '--name', 'n', '--timeout', '60']),
        await b.runAsync('status', ['--runs', '--name', 'n']),
      ];
      for (const r of okLines) assert.equal(assertOk(r).registry, reg, r.stdout);
      const errors: Array<[string, any]> = [
        ['E_NAME_EXISTS', await b.runAsync('start-subagent', ['--name', 'n', '--cli', 'shell', '--prompt', 'x'])],
        ['E_NAME_NOT_FOUND', await b.runAsync('result', ['--name', 'nobody'])],
        ['E_NAME_NOT_FOUND', await b.runAsync('search', ['--name', 'nobody', '--pattern', 'x'])],
        ['E_NAME_NOT_FOUND', await b.runAsync('cancel', ['--name', 'nobody'])],
        ['E_NAME_NOT_FOUND', await b.runAsync('status', ['--wait-terminal', '--name', 'nobody'])],
        ['E_SESSION_NOT_FOUND', await b.runAsync('resume-subagent', ['--name', 'nobody', '--prompt', 'x'])],
        ['E_NOT_RUNNING', await b.runAsync('cancel', ['--name', 'n'])],
        ['E_PATTERN_INVALID', await b.runAsync('search', ['--name', 'n', '--pattern', '('])],
      ];
      const g2 = join(b.dir, 'gate2');
      await startShellAsync(b, 'slow', gate(g2));
      errors.push(['E_WAIT_TIMEOUT', await b.runAsync('status', ['--wait-terminal', '--name', 'slow', '--timeout', '0.5'])]);
      errors.push(['E_AGENT_BUSY', await b.runAsync('resume-subagent', ['--name', 'slow', '--prompt', 'x'])]);
      for (const [code, r] of errors) {
        const j = assertError(r, code);
        if (code === 'E_PATTERN_INVALID') continue; // a flag error may be found before the registry is resolved
        assert.equal(j.details.registry, reg, `${code}: ${r.stdout}`);
      }
      open(g);
      open(g2);
    }));

  test('read-only verbs never create a registry; the first start creates ./.subagents', async (t) => {
    await withBox('location-fresh', async (b) => {
      const fresh = join(b.dir, 'fresh', 'deep');
      mkdirSync(fresh, { recursive: true });
      const ancestors: string[] = [];
      for (let d = dirname(b.dir); ; d = dirname(d)) {
        if (existsSync(join(d, '.subagents'))) ancestors.push(join(d, '.subagents'));
        if (dirname(d) === d) break;
      }
      if (ancestors.length) {
        t.skip(`an ancestor of the temp dir holds a registry (${ancestors.join(', ')}), so discovery would find it`);
        return;
      }
      const opts: RunOpts = { cwd: fresh, env: NO_ENV };
      const expected = join(fresh, '.subagents');
      assert.equal(assertOk(await b.runAsync('status', [], opts)).registry, expected);
      assert.deepEqual(assertOk(await b.runAsync('status', ['--name', 'x'], opts)).agents, []);
      assert.equal(assertError(await b.runAsync('result', ['--name', 'x'], opts), 'E_NAME_NOT_FOUND').details.registry, expected);
      assertError(await b.runAsync('search', ['--name', 'x', '--pattern', 'y'], opts), 'E_NAME_NOT_FOUND');
      assertError(await b.runAsync('cancel', ['--name', 'x'], opts), 'E_NAME_NOT_FOUND');
      assertError(await b.runAsync('status', ['--wait-terminal', '--name', 'x'], opts), 'E_NAME_NOT_FOUND');
      assertError(await b.runAsync('resume-subagent', ['--name', 'x', '--prompt', 'y'], opts), 'E_SESSION_NOT_FOUND');
      assert.equal(existsSync(expected), false, 'a read-only verb created the registry');
      const s = await startShellAsync(b, 'x', 'true', [], opts);
      assert.equal(s.registry, expected);
      assert.ok(existsSync(join(expected, 'agents')));
    });
  });
});
