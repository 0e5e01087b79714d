/**
 * Issue 5, point 11 (docs/guarantees.md, 9 and 10, and "one line, always"): hostile names, prompts of every
 * awkward size and content, agent output that is not clean text, and a closed stdout pipe.
 *
 * A prompt is checked at the agent: the script's first line hashes the agent's own stdin
 * (`/proc/$$/fd/0`, the file the supervisor handed it) and exits before the shell reads the payload.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BIN } from '../support/paths.js';
import { assertError, assertOk, runProgramAsync, type RunOut } from '../support/run.js';
import { listTree, runDirPath, sha256 } from '../support/registry.js';
import { quiet, withBox } from '../support/box.js';
import { startShellAsync, waitTerminalAsync } from '../support/shell.js';

const HEADER = 'sha256sum /proc/$$/fd/0 | cut -c1-64; exit 0\n';
const VERBS_WITH_NAME: Array<[any, string[]]> = [
  ['start-subagent', ['--cli', 'shell', '--prompt', 'echo hi']],
  ['resume-subagent', ['--prompt', 'echo hi']],
  ['status', []],
  ['result', []],
  ['search', ['--pattern', 'x']],
  ['cancel', []],
];

/** Runs the calls, at most `n` at a time. */
async function pool(calls: Array<() => Promise<void>>, n: number): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: n }, async () => {
      while (next < calls.length) await calls[next++]!();
    }),
  );
}

describe('point 11: inputs', { concurrency: 2 }, () => {
  test('hostile names are refused by every verb with E_NAME_INVALID, and nothing is created anywhere', () =>
    withBox('names', async (b) => {
      const outside = `fault-escape-${process.pid}-${Date.now()}`;
      const bad: Array<[string, string]> = [
        ['', 'empty'],
        ['/', 'empty-segment'],
        ['.', 'dot-segment'],
        ['..', 'dot-segment'],
        ['a/..', 'dot-segment'],
        ['a/./b', 'dot-segment'],
        [`../${outside}`, 'dot-segment'],
        [`../../../${outside}`, 'dot-segment'],
        [`/${outside}`, 'empty-segment'],
        ['a//b', 'empty-segment'],
        ['a/', 'empty-segment'],
        ['-x', 'leading-dash'],
        ['--help-me', 'leading-dash'],
        ['a/-b', 'leading-dash'],
        ['a\u0001b', 'characters'],
        ['a\nb', 'characters'],
        ['a\tb', 'characters'],
        ['a\u007fb', 'characters'],
        ['a\u001b[31mb', 'characters'],
        ['caf\u00e9', 'characters'],
        ['cafe\u0301', 'characters'],
        ['a b', 'characters'],
        ['a+b', 'characters'],
        ['a\\b', 'characters'],
        ['$(touch pwned)', 'characters'],
        ['~', 'characters'],
        ['a'.repeat(201), 'too-long'],
        ['a'.repeat(256), 'too-long'],
        [`${'a'.repeat(120)}/${'b'.repeat(120)}`, 'too-long'],
      ];
      // A registry with one good run, so lookups have something to (not) find.
      await startShellAsync(b, 'ok', 'true');
      await waitTerminalAsync(b, ['ok']);
      // Its supervisor still removes its lock file after the record says done: snapshot once it is gone.
      await quiet(b);
      const before = listTree(b.dir);
      // Every name through start (the verb that creates); a representative few through every verb.
      const every = new Set(['..', `../../../${outside}`, '-x', 'a\u0001b', 'caf\u00e9', 'a'.repeat(256)]);
      const calls: Array<() => Promise<void>> = [];
      for (const [name, rule] of bad) {
        for (const [verb, rest] of VERBS_WITH_NAME) {
          if (verb !== 'start-subagent' && !every.has(name)) continue;
          calls.push(async () => {
            const r = await b.runAsync(verb, ['--name', name, ...rest]);
            const j = assertError(r, 'E_NAME_INVALID');
            assert.equal(j.details.rule, rule, `${verb} ${JSON.stringify(name)}: rule ${j.details.rule}`);
          });
        }
      }
      await pool(calls, 3);
      assert.deepEqual(listTree(b.dir), before, 'nothing was created in the sandbox');
      for (const p of [join(tmpdir(), outside), join(b.dir, outside), join(b.registry, outside), '/' + outside])
        assert.equal(existsSync(p), false, `${p} was created`);
      assert.equal(existsSync(join(b.dir, 'pwned')), false);
    }));

  test('"007" and "1e3" stay strings (names and prompts); a 200-byte name is fine; misspelt flags are refused with a hint', () =>
    withBox('names-ok', async (b) => {
      for (const name of ['007', '1e3', 'a'.repeat(200), 'x/y.z_w-1']) {
        const s = await startShellAsync(b, name, '1e3');
        assert.equal(s.name, name);
        assert.equal(typeof s.name, 'string');
        assert.equal(readFileSync(join(runDirPath(b.registry, name), 'prompt'), 'utf8'), '1e3');
      }
      // Every run must be over before the tree is snapshotted: a live supervisor still creates its logs,
      // and removes its lock file after the record says done.
      const names = ['007', '1e3', 'a'.repeat(200), 'x/y.z_w-1'];
      const all = await waitTerminalAsync(b, names);
      assert.deepEqual(Object.keys(all).sort(), [...names].sort());
      await quiet(b);
      const before = listTree(b.dir);
      for (const [args, flag] of [
        [['--nmae', 'x', '--cli', 'shell', '--prompt', 'true'], '--name'],
        [['--name', 'x', '--cli', 'shell', '--promt', 'true'], '--prompt'],
        [['--name', 'x', '--cli', 'shell', '--prompt', 'true', '--cwdd', '.'], '--cwd'],
        [['-name', 'x', '--cli', 'shell', '--prompt', 'true'], null],
        [['--name', 'x', '--cli', 'shell', '--prompt', 'true', 'stray'], null],
      ] as Array<[string[], string | null]>) {
        const j = assertError(await b.runAsync('start-subagent', args), 'E_ARG_UNKNOWN');
        if (flag) assert.ok(j.details.hint.includes(flag), `hint for ${args}: ${j.details.hint}`);
      }
      assertError(await b.runAsync('status', ['--nmae', '007']), 'E_ARG_UNKNOWN');
      assertError(await b.runAsync('cancel', ['--name', '007', '--signall', 'KILL']), 'E_ARG_UNKNOWN');
      assert.deepEqual(listTree(b.dir), before, 'nothing was created by the refused commands');
    }));

  test('prompts of 100 KiB, 131 071 and 131 072 bytes, 3 MB and 10 MB, with NUL bytes, invalid UTF-8, U+2028, a leading "-": byte-exact at the agent or refused before any run exists', () =>
    withBox('prompts', async (b) => {
      const pad = (n: number, fill = 'a') => Buffer.concat([Buffer.from(HEADER), Buffer.alloc(n - Buffer.byteLength(HEADER), fill)]);
      const bytes = (...parts: Array<string | number[] | Buffer>) =>
        Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p, 'utf8') : Buffer.from(p as any))));
      const cases: Array<{ name: string; prompt: Buffer; via: 'argv' | 'argv=' | 'stdin' | 'file' }> = [
        { name: 'argv-100k', prompt: pad(100 * 1024), via: 'argv' },
        { name: 'argv-131071', prompt: pad(131071), via: 'argv' },
        { name: 'file-131072', prompt: pad(131072), via: 'file' },
        { name: 'stdin-131072', prompt: pad(131072), via: 'stdin' },
        { name: 'stdin-3mb', prompt: pad(3 * 1024 * 1024, 'b'), via: 'stdin' },
        { name: 'file-10mb', prompt: pad(10 * 1024 * 1024, 'c'), via: 'file' },
        { name: 'stdin-nul', prompt: bytes(HEADER, 'x\0y\0'.repeat(1000), [0, 0, 0]), via: 'stdin' },
        { name: 'file-nul-only-tail', prompt: bytes(HEADER, Buffer.alloc(4096, 0)), via: 'file' },
        { name: 'file-bad-utf8', prompt: bytes(HEADER, [0xff, 0xfe, 0xc3, 0x28, 0xed, 0xa0, 0x80, 0xf0, 0x28, 0x8c, 0x28, 0x0a]), via: 'file' },
        { name: 'stdin-bad-utf8', prompt: bytes(HEADER, [0xc0, 0xaf, 0xe0, 0x80, 0xaf, 0x0a]), via: 'stdin' },
        { name: 'argv-u2028', prompt: bytes(HEADER, 'line\u2028sep\u2029para \u{1F600}\n'), via: 'argv' },
        { name: 'stdin-u2028', prompt: bytes(HEADER, 'line\u2028sep\u2029para\n'), via: 'stdin' },
        { name: 'argv-dash', prompt: bytes('-x 2>/dev/null; ', HEADER, '--help\n'), via: 'argv' },
        { name: 'argv-eq-dash', prompt: bytes('--prompt 2>/dev/null; ', HEADER), via: 'argv=' },
        { name: 'stdin-dash', prompt: bytes('- 2>/dev/null; ', HEADER), via: 'stdin' },
      ];
      for (const c of cases) {
        const base = ['--name', c.name, '--cli', 'shell'];
        let r: RunOut;
        if (c.via === 'argv') r = await b.runAsync('start-subagent', [...base, '--prompt', c.prompt.toString('utf8')]);
        else if (c.via === 'argv=') r = await b.runAsync('start-subagent', [...base, `--prompt=${c.prompt.toString('utf8')}`]);
        else if (c.via === 'stdin') r = await b.runAsync('start-subagent', [...base, '--prompt', '-'], { input: c.prompt });
        else {
          const f = join(b.dir, `${c.name}.prompt`);
          writeFileSync(f, c.prompt);
          r = await b.runAsync('start-subagent', [...base, '--prompt-file', f]);
        }
        assertOk(r, c.name);
      }
      const ends = await waitTerminalAsync(
        b,
        cases.map((c) => c.name),
      );
      for (const c of cases) {
        assert.equal(ends[c.name].outcome, 'succeeded', `${c.name}: ${JSON.stringify(ends[c.name])}`);
        const stored = readFileSync(join(runDirPath(b.registry, c.name), 'prompt'));
        assert.equal(stored.length, c.prompt.length, `${c.name}: stored ${stored.length} bytes of ${c.prompt.length}`);
        assert.ok(stored.equals(c.prompt), `${c.name}: the stored prompt differs`);
        const seen = (await b.runAsync('result', ['--name', c.name])).stdout.trim();
        assert.equal(seen, sha256(c.prompt), `${c.name}: the agent received other bytes`);
      }
      // 131 072 bytes cannot be one argv string on Linux: the command cannot even be executed, and no run exists.
      const big = pad(131072).toString('utf8');
      const r = spawnSync(join(BIN, 'start-subagent'), ['--name', 'argv-131072', '--cli', 'shell', '--prompt', big], {
        env: b.env,
        cwd: b.dir,
        encoding: 'utf8',
      });
      assert.equal((r.error as NodeJS.ErrnoException | undefined)?.code, 'E2BIG', `expected the kernel to refuse the argv: ${r.error}`);
      assert.equal(existsSync(runDirPath(b.registry, 'argv-131072')), false);
    }));

  test('a prompt with invalid UTF-8 given on the command line is byte-exact at the agent or refused before any run exists', () =>
    withBox('prompt-argv-bytes', async (b) => {
      // Node cannot put raw bytes in argv, so a shell does: printf writes them.
      const expected = Buffer.concat([Buffer.from(HEADER), Buffer.from([0x6f, 0x6b, 0xff, 0xfe, 0xc3, 0x28, 0x0a])]);
      const out = await runProgramAsync(
        '/bin/sh',
        ['-c', 'exec "$0" --name bytes --cli shell --prompt "$(printf "$FMT"; printf x)"', join(BIN, 'start-subagent')],
        {
          env: { ...b.env, FMT: 'sha256sum /proc/$$/fd/0 | cut -c1-64; exit 0\\nok\\377\\376\\303(\\n' },
          cwd: b.dir,
        },
      );
      // (The trailing "x" keeps $(…) from eating the final newline; it is part of the prompt.)
      const want = Buffer.concat([expected, Buffer.from('x')]);
      assert.ok(out.json, `one JSON line: ${out.stdout} ${out.stderr}`);
      if (out.json.ok === false) {
        // Refused: fine, if nothing exists.
        assert.equal(existsSync(runDirPath(b.registry, 'bytes')), false, 'a refused prompt left a run behind');
        return;
      }
      await waitTerminalAsync(b, ['bytes']);
      const stored = readFileSync(join(runDirPath(b.registry, 'bytes'), 'prompt'));
      assert.equal(stored.toString('hex'), want.toString('hex'), 'the stored prompt is not the bytes given on the command line');
      assert.equal((await b.runAsync('result', ['--name', 'bytes'])).stdout.trim(), sha256(want));
    }));

  describe('agent output: invalid UTF-8, U+2028, ANSI escapes, 50 MB', () => {
    const script = [
      `printf 'bad \\377\\376 utf8 \\355\\240\\200 end\\n'`,
      `printf 'sep \\342\\200\\250 here \\342\\200\\251 end\\n'`,
      `printf '\\033[31mred\\033[0m \\033]0;title\\007 \\r\\n'`,
      `yes 'filler line of output for the fifty megabyte test' | head -c 52428800`,
      `printf 'tail marker \\342\\200\\250\\n'`,
    ].join('\n');

    /** stdout is exactly one line of JSON, with no raw U+2028/U+2029 in it. */
    function oneLine(r: RunOut, what: string): any {
      assert.ok(r.json, `${what}: not one JSON line: ${r.stdout.slice(0, 300)} ${r.stderr.slice(0, 300)}`);
      assert.ok(!/[\u2028\u2029]/.test(r.stdout), `${what}: a raw U+2028/U+2029 in the line`);
      assert.equal(r.stderr, '', `${what}: stderr`);
      return r.json;
    }

    test('every verb still prints one parseable line; a closed stdout pipe ends quietly', () =>
      withBox('output', async (b) => {
        await startShellAsync(b, 'big', script);
        const end = (await waitTerminalAsync(b, ['big'])).big;
        assert.equal(end.outcome, 'succeeded', JSON.stringify(end));
        oneLine(await b.runAsync('status', []), 'status');
        oneLine(await b.runAsync('status', ['--name', 'big']), 'status --name');
        oneLine(await b.runAsync('status', ['--runs', '--name', 'big']), 'status --runs');
        const j = oneLine(await b.runAsync('result', ['--name', 'big', '--json']), 'result --json');
        assert.equal(j.truncated, true);
        assert.ok(j.bytes > 50 * 1024 * 1024, `bytes ${j.bytes}`);
        assert.ok(j.lastAssistantText.endsWith('tail marker \u2028\n'), JSON.stringify(j.lastAssistantText.slice(-80)));
        const plain = await b.runAsync('result', ['--name', 'big']);
        assert.equal(plain.code, 0);
        assert.ok(plain.stdout.endsWith('tail marker \u2028\n'));
        const s = oneLine(await b.runAsync('search', ['--name', 'big', '--role', 'assistant', '--pattern', '^(bad|sep|.*red)']), 'search');
        assert.equal(s.matches.length, 3, JSON.stringify(s.matches));
        assert.ok(
          s.matches.some((m: any) => m.snippet.includes('\u2028')),
          'the U+2028 survives (escaped) in the snippet',
        );
        assert.ok(
          s.matches.some((m: any) => m.snippet.includes('\uFFFD')),
          'invalid UTF-8 shows as U+FFFD',
        );
        const many = oneLine(await b.runAsync('search', ['--name', 'big', '--pattern', 'filler']), 'search with a million matches');
        assert.equal(many.truncated, true);
        assert.ok(many.total > 1000);
        oneLine(await b.runAsync('cancel', ['--name', 'big']), 'cancel');
        oneLine(await b.runAsync('status', ['--wait-terminal', '--name', 'big', '--timeout', '5']), 'wait');
        // A reader that goes away after one byte (`status | head -c1`): the verb ends quietly.
        for (const cmd of [
          `'${join(BIN, 'status')}'`,
          `'${join(BIN, 'result')}' --name big`,
          `'${join(BIN, 'search')}' --name big --pattern filler`,
          `'${join(BIN, 'status')}' --name nope --wait-terminal`,
        ]) {
          const r = spawnSync('/bin/bash', ['-c', `${cmd} 2>'${b.dir}/err' | head -c1 >/dev/null; echo "\${PIPESTATUS[0]}"`], {
            env: b.env,
            cwd: b.dir,
            encoding: 'utf8',
            timeout: 60_000,
          });
          const status = Number(r.stdout.trim());
          const err = readFileSync(join(b.dir, 'err'), 'utf8');
          assert.equal(err, '', `${cmd} | head -c1: stderr must stay empty, got: ${err.slice(0, 500)}`);
          assert.ok(status === 0 || status === 1, `${cmd} | head -c1: exit ${status} (killed by a signal?)`);
        }
      }));
  });
});
