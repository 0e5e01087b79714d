import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { BIN } from '../support/paths.js';
import { LONG, until } from '../support/wait.js';
import { makeBox } from '../support/box.js';
import { expectError, gate, open, resultJson, resultText, startShell, untilStatus, waitTerminal } from '../support/shell.js';

const b = makeBox('result');

describe('result', () => {
  test('plain prints the text; --json has {ok, name, sessionId, status, lastAssistantText}', () => {
    startShell(b, 'r/plain', 'echo line one; printf "line two"');
    waitTerminal(b, ['r/plain']);
    const p = b.run('result', ['--name', 'r/plain']);
    assert.equal(p.code, 0);
    assert.equal(p.stdout, 'line one\nline two\n', 'plain text, newline-terminated');
    const j = b.run('result', ['--name', 'r/plain', '--json']);
    assert.equal(j.code, 0);
    assert.equal(j.stdout.split('\n').length, 2, 'one line');
    for (const k of ['ok', 'name', 'sessionId', 'status', 'lastAssistantText']) assert.ok(k in j.json, `missing ${k}`);
    assert.equal(j.json.ok, true);
    assert.equal(j.json.name, 'r/plain');
    assert.equal(j.json.sessionId, null);
    assert.equal(j.json.status, 'done');
    assert.equal(j.json.lastAssistantText, 'line one\nline two');
    assert.equal(j.json.truncated, false);
  });

  test('a run that printed nothing: no answer (lastAssistantText null, bytes 0); plain result prints nothing, exit 0', () => {
    startShell(b, 'r/silent', 'true');
    waitTerminal(b, ['r/silent']);
    const j = b.run('result', ['--name', 'r/silent', '--json']);
    assert.equal(j.code, 0);
    assert.equal(j.json.lastAssistantText, null);
    assert.equal(j.json.bytes, 0);
    const p = b.run('result', ['--name', 'r/silent']);
    assert.equal(p.code, 0);
    assert.equal(p.stdout, '');
  });

  test('a running run that has said nothing yet: lastAssistantText null, status running; plain prints nothing, exit 0', async () => {
    const g = join(b.dir, 'gate-quiet');
    startShell(b, 'r/quiet', `${gate(g)}; echo late`);
    await untilStatus(b, 'r/quiet', (a) => a.status === 'running', 'running');
    const j = b.run('result', ['--name', 'r/quiet', '--json']);
    assert.equal(j.code, 0, j.stdout);
    assert.equal(j.json.status, 'running');
    assert.equal(j.json.lastAssistantText, null);
    const p = b.run('result', ['--name', 'r/quiet']);
    assert.equal(p.code, 0);
    assert.equal(p.stdout, '');
    const since = b.run('result', ['--name', 'r/quiet', '--since', '0', '--json']);
    assert.equal(since.json.runs[0].lastAssistantText, null);
    open(g);
    waitTerminal(b, ['r/quiet']);
    assert.equal(resultJson(b, 'r/quiet').lastAssistantText, 'late\n');
  });

  test('while running it answers at once with what exists so far and status running', async () => {
    const g = join(b.dir, 'gate-r');
    startShell(b, 'r/live', `echo first; ${gate(g)}; echo second`);
    const early = resultJson(b, 'r/live');
    assert.ok(['scheduled', 'running'].includes(early.status));
    // The agent can print before its supervisor has recorded "running" (the record is written just
    // after the spawn): wait for both, the line and the status.
    const mid = await until(
      'the first line, with the run recorded running',
      () => {
        const r = b.run('result', ['--name', 'r/live', '--json']);
        return r.json?.lastAssistantText === 'first\n' && r.json.status === 'running' ? r : undefined;
      },
      LONG,
    );
    assert.equal(mid.json.status, 'running');
    assert.equal(resultText(b, 'r/live'), 'first\n');
    open(g);
    waitTerminal(b, ['r/live']);
    const end = resultJson(b, 'r/live');
    assert.equal(end.status, 'done');
    assert.equal(end.lastAssistantText, 'first\nsecond\n');
  });

  test('a 3 MB output gives its tail with truncated:true; plain mode says so', () => {
    // 30000 lines of 100 bytes, then a last line.
    startShell(
      b,
      'r/huge',
      `i=0; line=$(printf '%099d' 0); while [ $i -lt 300 ]; do j=0; while [ $j -lt 100 ]; do echo "$line"; j=$((j+1)); done; i=$((i+1)); done; echo THE-END`,
    );
    const a = waitTerminal(b, ['r/huge'])['r/huge'];
    assert.equal(a.outcome, 'succeeded');
    const j = resultJson(b, 'r/huge');
    assert.equal(j.truncated, true);
    assert.equal(j.bytes, 30000 * 100 + 'THE-END\n'.length, 'bytes is the size of the whole output');
    const text: string = j.lastAssistantText;
    assert.ok(text.endsWith('THE-END\n'), 'the tail is kept');
    assert.ok(Buffer.byteLength(text) < 3_000_000, 'not the whole output');
    assert.ok(Buffer.byteLength(text) > 100_000, 'a substantial tail');
    const p = b.run('result', ['--name', 'r/huge']);
    assert.equal(p.code, 0);
    const firstLine = p.stdout.slice(0, p.stdout.indexOf('\n'));
    assert.match(firstLine, /truncat/i, 'plain mode says the text was cut');
    assert.ok(p.stdout.endsWith('THE-END\n'));
  });

  test('a reader that closes the pipe early gets no stack trace', () => {
    const r = spawnSync('/bin/sh', ['-c', `"$0" --name r/huge | head -c 10 >/dev/null`, join(BIN, 'result')], {
      env: b.env,
      cwd: b.dir,
      encoding: 'utf8',
      timeout: 60_000,
    });
    assert.equal(r.status, 0);
    assert.equal(r.stderr, '', 'nothing on stderr');
  });

  test('U+2028/U+2029 in the output are escaped in the JSON line', () => {
    startShell(b, 'r/seps', `printf 'a\\342\\200\\250b\\342\\200\\251c\\n'`);
    waitTerminal(b, ['r/seps']);
    const j = b.run('result', ['--name', 'r/seps', '--json']);
    assert.equal(j.code, 0);
    assert.ok(!j.stdout.includes('\u2028') && !j.stdout.includes('\u2029'), 'no raw separators on the line');
    assert.ok(j.stdout.includes('\\u2028') && j.stdout.includes('\\u2029'));
    assert.equal(j.json.lastAssistantText, 'a\u2028b\u2029c\n');
  });

  test('E_NAME_NOT_FOUND and E_NAME_REQUIRED', () => {
    const j = expectError(b, 'result', ['--name', 'nobody'], 'E_NAME_NOT_FOUND');
    assert.match(j.error, /nobody/);
    assert.equal(j.details.registry, b.registry, 'failures name the registry they looked in');
    expectError(b, 'result', ['--name', 'r/plain', '--run', '7'], 'E_RUN_NOT_FOUND');
    expectError(b, 'result', ['--name', 'r/plain', '--run', 'zero'], 'E_ARG_INVALID');
    expectError(b, 'result', ['--name', 'nobody', '--json'], 'E_NAME_NOT_FOUND');
    expectError(b, 'result', ['--json'], 'E_NAME_REQUIRED');
  });
});

describe('search', () => {
  test('matches are {run, index, role, snippet}; role user for the script, assistant for its output; --role filters', () => {
    startShell(b, 's/one', 'echo needle-out; echo other');
    waitTerminal(b, ['s/one']);
    const r = b.run('search', ['--name', 's/one', '--pattern', 'needle']);
    assert.equal(r.code, 0, r.stdout);
    assert.equal(r.json.ok, true);
    assert.equal(r.json.name, 's/one');
    assert.ok(Array.isArray(r.json.matches));
    for (const m of r.json.matches) {
      assert.equal(m.run, 1);
      assert.equal(typeof m.index, 'number');
      assert.ok(['user', 'assistant'].includes(m.role));
      assert.match(m.snippet, /needle/);
    }
    const roles = new Set(r.json.matches.map((m: any) => m.role));
    assert.deepEqual([...roles].sort(), ['assistant', 'user']);
    const user = b.run('search', ['--name', 's/one', '--pattern', 'needle', '--role', 'user']);
    assert.ok(user.json.matches.length >= 1);
    assert.ok(user.json.matches.every((m: any) => m.role === 'user'));
    assert.ok(user.json.matches.some((m: any) => m.snippet.includes('echo needle-out')));
    const asst = b.run('search', ['--name', 's/one', '--pattern', 'needle', '--role', 'assistant']);
    assert.equal(asst.json.matches.length, 1);
    assert.equal(asst.json.matches[0].role, 'assistant');
    assert.match(asst.json.matches[0].snippet, /^needle-out$/);
    const any = b.run('search', ['--name', 's/one', '--pattern', 'needle', '--role', 'any']);
    assert.equal(any.json.matches.length, r.json.matches.length);
    const none = b.run('search', ['--name', 's/one', '--pattern', 'absent-word']);
    assert.equal(none.code, 0);
    assert.deepEqual(none.json.matches, []);
  });

  test('index 0 is the prompt, line numbers count lines; long lines give cut snippets; at most 1000 matches, with total', () => {
    const long = 'x'.repeat(200);
    startShell(b, 's/many', `echo first; echo '${long}MID${long}'; i=0; while [ $i -lt 1500 ]; do echo hit-$i; i=$((i+1)); done`);
    waitTerminal(b, ['s/many']);
    const mid = b.run('search', ['--name', 's/many', '--pattern', 'MID', '--role', 'assistant']);
    assert.equal(mid.json.matches.length, 1);
    const m = mid.json.matches[0];
    assert.equal(m.index, 1);
    assert.equal(m.line, 2);
    assert.ok(m.snippet.startsWith('…') && m.snippet.endsWith('…'), m.snippet);
    assert.ok(m.snippet.length < 200, 'the snippet is a window, not the whole line');
    const prompt = b.run('search', ['--name', 's/many', '--pattern', 'echo first', '--role', 'user']);
    assert.equal(prompt.json.matches[0].index, 0);
    const hits = b.run('search', ['--name', 's/many', '--pattern', '^hit-\\d+$', '--role', 'assistant']);
    assert.equal(hits.code, 0);
    assert.equal(hits.json.matches.length, 1000);
    assert.equal(hits.json.total, 1500);
    assert.equal(hits.json.truncated, true);
  });

  test('the pattern is a JavaScript regular expression', () => {
    startShell(b, 's/re', 'echo "id=12345 id=7"; echo "foobar foobaz"');
    waitTerminal(b, ['s/re']);
    const d = b.run('search', ['--name', 's/re', '--pattern', 'id=\\d{5}\\b', '--role', 'assistant']);
    assert.equal(d.json.matches.length, 1);
    const look = b.run('search', ['--name', 's/re', '--pattern', 'foo(?=baz)', '--role', 'assistant']);
    assert.equal(look.json.matches.length, 1);
  });

  test('E_PATTERN_REQUIRED (reported before an unknown name), E_PATTERN_INVALID, E_NAME_NOT_FOUND, bad --role', () => {
    expectError(b, 'search', ['--name', 's/one'], 'E_PATTERN_REQUIRED');
    expectError(b, 'search', ['--name', 'no/such/name'], 'E_PATTERN_REQUIRED');
    const j = expectError(b, 'search', ['--name', 's/one', '--pattern', '(unclosed'], 'E_PATTERN_INVALID');
    assert.equal(typeof j.details.hint, 'string');
    expectError(b, 'search', ['--name', 'no/such/name', '--pattern', '(unclosed'], 'E_PATTERN_INVALID');
    expectError(b, 'search', ['--name', 'no/such/name', '--pattern', 'x'], 'E_NAME_NOT_FOUND');
    expectError(b, 'search', ['--name', 's/one', '--pattern', 'x', '--role', 'robot'], 'E_ARG_INVALID');
  });

  test('search of a running run covers what exists so far', async () => {
    const g = join(b.dir, 'gate-s');
    startShell(b, 's/live', `echo early-bird; ${gate(g)}; echo late-bird`);
    await untilStatus(b, 's/live', (a) => a.status === 'running', 'running');
    await until(
      'early output is searchable',
      () => b.run('search', ['--name', 's/live', '--pattern', 'early-bird', '--role', 'assistant']).json?.matches?.length === 1,
      LONG,
    );
    assert.equal(b.run('search', ['--name', 's/live', '--pattern', '^late-bird$', '--role', 'assistant']).json.matches.length, 0);
    open(g);
    waitTerminal(b, ['s/live']);
    assert.equal(b.run('search', ['--name', 's/live', '--pattern', '^late-bird$', '--role', 'assistant']).json.matches.length, 1);
  });
});
