/**
 * Issue 5, point 7 (docs/guarantees.md, 7): corrupt records — empty, half JSON, NUL-filled, wrong shape, a future
 * format version, a run directory left with only a temp file — are reported as E_REGISTRY_CORRUPT naming
 * the file, kept byte for byte, and the other runs keep working. Leftover temp files and unpublished
 * directories next to good records are ignored.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { assertError, assertOk } from '../support/run.js';
import { fileSha, listTree, runDirPath } from '../support/registry.js';
import { quiet, withBox, type Box } from '../support/box.js';
import { startShellAsync, waitTerminalAsync } from '../support/shell.js';

interface Kind {
  name: string;
  corrupt: (path: string, text: string) => void;
}

const KINDS: Kind[] = [
  { name: 'bad/empty', corrupt: (p) => writeFileSync(p, '') },
  { name: 'bad/half', corrupt: (p, t) => writeFileSync(p, t.slice(0, Math.floor(t.length / 2))) },
  { name: 'bad/nul', corrupt: (p, t) => writeFileSync(p, Buffer.alloc(Buffer.byteLength(t), 0)) },
  { name: 'bad/array', corrupt: (p) => writeFileSync(p, '[]\n') },
  { name: 'bad/shape', corrupt: (p, t) => writeFileSync(p, JSON.stringify({ ...JSON.parse(t), status: 'flying', cwd: 42 })) },
  {
    name: 'bad/no-format',
    corrupt: (p, t) => {
      const r = JSON.parse(t);
      delete r.format;
      writeFileSync(p, JSON.stringify(r));
    },
  },
  { name: 'bad/future', corrupt: (p, t) => writeFileSync(p, JSON.stringify({ ...JSON.parse(t), format: 99, newField: { x: 1 } })) },
  {
    // A crash after the temp file was written and the record lost (e.g. removed by hand): only the temp file is left.
    name: 'bad/only-temp',
    corrupt: (p, t) => {
      writeFileSync(join(p, '..', '.record.json.tmp-4242-deadbeef'), t.slice(0, 100));
      unlinkSync(p);
    },
  },
];

/** A snapshot of the bytes of every file in the run directory. */
function bytesOf(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const f of listTree(dir)) out[f] = fileSha(join(dir, f));
  return out;
}

/** Every verb for a few kinds; the lookups that differ (status, result, start) for all of them. */
const EVERY_VERB = new Set(['bad/half', 'bad/future', 'bad/only-temp']);

async function corruptVerbs(b: Box, name: string, path: string): Promise<void> {
  const expectCorrupt = async (verb: any, args: string[]) => {
    const j = assertError(await b.runAsync(verb, args), 'E_REGISTRY_CORRUPT');
    assert.equal(j.details.path, path, `${verb} names the file: ${JSON.stringify(j)}`);
    assert.ok(j.error.includes(dirname(path)), `${verb}: the sentence names where: ${j.error}`);
  };
  await expectCorrupt('status', ['--name', name]);
  await expectCorrupt('result', ['--name', name]);
  if (EVERY_VERB.has(name)) {
    await expectCorrupt('status', ['--wait-terminal', '--name', name, '--timeout', '30']);
    await expectCorrupt('search', ['--name', name, '--pattern', 'x']);
    await expectCorrupt('cancel', ['--name', name]);
    await expectCorrupt('resume-subagent', ['--name', name, '--prompt', 'echo over-it']);
  }
  // Never silently replaced: the name still exists.
  assertError(await b.runAsync('start-subagent', ['--name', name, '--cli', 'shell', '--prompt', 'echo replace']), 'E_NAME_EXISTS');
}

test('point 7: corrupt records are reported with their path, kept as they are, and the other runs keep working', () =>
  withBox('corrupt', async (b) => {
    await startShellAsync(b, 'good', 'echo good-output');
    for (const k of KINDS) await startShellAsync(b, k.name, 'echo was-fine');
    await startShellAsync(b, 'with-temp', 'echo with-temp-output');
    await waitTerminalAsync(b, ['good', 'with-temp', ...KINDS.map((k) => k.name)]);
    // The supervisors remove their lock files after the record says done: the byte snapshots wait for them.
    await quiet(b);

    const paths = new Map<string, string>();
    const before = new Map<string, Record<string, string>>();
    for (const k of KINDS) {
      const dir = runDirPath(b.registry, k.name);
      const path = join(dir, 'record.json');
      k.corrupt(path, readFileSync(path, 'utf8'));
      paths.set(k.name, path);
      before.set(k.name, bytesOf(dir));
    }
    // Leftovers next to good data: a stale temp file beside a good record, an unpublished new name in
    // tmp/, an unpublished run of a good name.
    const withTempDir = runDirPath(b.registry, 'with-temp');
    writeFileSync(join(withTempDir, '.record.json.tmp-4242-cafebabe'), '{"format":1,"name":"with-temp","sta');
    const ghost = join(b.registry, 'tmp', 'new-Gh0st1');
    mkdirSync(join(ghost, '1'), { recursive: true });
    writeFileSync(join(ghost, '1', 'record.json'), readFileSync(join(runDirPath(b.registry, 'good'), 'record.json')));
    mkdirSync(join(b.registry, 'agents', 'good', '.new-Xy12ab'));
    writeFileSync(join(b.registry, 'agents', 'good', '.new-Xy12ab', 'record.json'), '{"half":');
    const goodBefore = bytesOf(runDirPath(b.registry, 'good'));

    // The listing names every problem and still lists the rest.
    const s = assertOk(await b.runAsync('status', []), 'status');
    const listed = s.agents.map((a: any) => a.name);
    assert.ok(listed.includes('good') && listed.includes('with-temp'), `the good runs are listed: ${listed}`);
    for (const k of KINDS) assert.ok(!listed.includes(k.name), `${k.name} is not listed as if it were fine`);
    assert.ok(Array.isArray(s.problems), JSON.stringify(s));
    for (const k of KINDS) {
      const p = s.problems.find((x: any) => x.name === k.name);
      assert.ok(p, `${k.name} is reported in problems: ${JSON.stringify(s.problems)}`);
      assert.equal(p.code, 'E_REGISTRY_CORRUPT');
      assert.equal(p.path, paths.get(k.name));
    }
    assert.equal(s.problems.length, KINDS.length, `only the corrupt names are problems: ${JSON.stringify(s.problems)}`);
    assert.equal(s.agents.find((a: any) => a.name === 'with-temp').status, 'done', 'a stale temp file beside a good record changes nothing');
    assert.ok(!listed.includes('Gh0st1'));

    // Every verb on a corrupt name: E_REGISTRY_CORRUPT with the path (start: the name exists).
    for (let i = 0; i < KINDS.length; i += 3) await Promise.all(KINDS.slice(i, i + 3).map((k) => corruptVerbs(b, k.name, paths.get(k.name)!)));

    // Kept byte for byte.
    for (const k of KINDS) assert.deepEqual(bytesOf(runDirPath(b.registry, k.name)), before.get(k.name), `${k.name} was changed`);
    assert.ok(existsSync(join(withTempDir, '.record.json.tmp-4242-cafebabe')));

    // Other runs keep working: read, resume, start, wait over everything.
    assert.equal((await b.runAsync('result', ['--name', 'good'])).stdout, 'good-output\n');
    assert.equal((await b.runAsync('result', ['--name', 'with-temp'])).stdout, 'with-temp-output\n');
    assert.deepEqual(bytesOf(runDirPath(b.registry, 'good')), goodBefore);
    assertOk(await b.runAsync('resume-subagent', ['--name', 'good', '--prompt', 'echo good-again']), 'resume of a good name');
    assertOk(await b.runAsync('resume-subagent', ['--name', 'with-temp', '--prompt', 'echo temp-again']), 'resume beside a stale temp file');
    assertOk(await b.runAsync('start-subagent', ['--name', 'fresh', '--cli', 'shell', '--prompt', 'echo fresh']), 'start of a new name');
    const w = assertOk(await b.runAsync('status', ['--wait-terminal', '--all', '--timeout', '60']), 'wait over a registry with corrupt records');
    for (const a of w.agents) assert.equal(a.status, 'done', JSON.stringify(a));
    assert.equal(w.problems?.length, KINDS.length);
    assert.equal((await b.runAsync('result', ['--name', 'good'])).stdout, 'good-again\n');
    assert.equal((await b.runAsync('result', ['--name', 'fresh'])).stdout, 'fresh\n');
    // The unpublished leftover never became a name, and does not block the name it was for.
    assert.ok(existsSync(ghost), 'the leftover is kept for inspection');

    // A corrupt name is fixed by hand (moved away); then it can be started afresh.
    const k0 = KINDS[0]!;
    renameSync(join(b.registry, 'agents', k0.name.replace('/', '+')), join(b.dir, 'moved-away'));
    assertOk(
      await b.runAsync('start-subagent', ['--name', k0.name, '--cli', 'shell', '--prompt', 'echo reborn']),
      'start after the corrupt name was moved away',
    );
  }));
