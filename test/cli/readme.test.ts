// test-matrix: once — the pages' tours against the verbs' output: text, the same on every Node and process backend (scripts/test.sh).
// The tours of README.md and docs/tour.md cannot go stale silently: every ```console block is run, in
// order, through the real executables (under their installed names, from package.json "bin"), in a
// fresh directory, and each command's real stdout must match what the page shows:
// - a plain-text line is the real line;
// - a JSON line is the real line, key for key and in order, except that `…` stands for fields left
//   out and the values of the keys in VOLATILE (pids, times) may differ;
// - the directory the page was captured in (/tmp/tour) stands for this test's directory.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, realpathSync, symlinkSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ROOT } from '../support/paths.js';
import { runProgramAsync, type RunOut } from '../support/run.js';
import { makeBox } from '../support/box.js';

const b = makeBox('readme');
/** Where the pages' output was captured; stands for the test's directory. */
const SHOWN_DIR = '/tmp/tour';
/** Values that change from run to run: only their presence (and place) is checked. */
const VOLATILE = ['pid', 'agentPid', 'startedAt', 'updatedAt', 'finishedAt', 'durationMs', 'lastActivityAt'];

/** The commands under their installed names, as the pages use them. */
const binDir = join(b.dir, 'installed-bin');
mkdirSync(binDir);
for (const [name, target] of Object.entries(JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).bin as Record<string, string>)) {
  symlinkSync(resolve(ROOT, target), join(binDir, name));
}

interface Step {
  command: string;
  shown: string[];
}

/** The `$ command` lines of every ```console block of a page, each with the output lines shown under it. */
function steps(page: string): Step[] {
  const text = readFileSync(join(ROOT, page), 'utf8');
  const out: Step[] = [];
  for (const block of text.matchAll(/^```console\n([\s\S]*?)^```$/gm)) {
    for (const line of block[1]!.split('\n')) {
      if (line.startsWith('$ ')) out.push({ command: line.slice(2), shown: [] });
      else if (line !== '') {
        assert.ok(out.length > 0, `${page}: output before any command: ${line}`);
        out[out.length - 1]!.shown.push(line);
      }
    }
  }
  return out;
}

const escapeRegex = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const JSON_VALUE = '(?:"(?:[^"\\\\]|\\\\.)*"|-?[0-9][0-9.eE+-]*|null|true|false)';

/** A shown line as a pattern for the real line. */
function pattern(line: string): string {
  const volatile = new RegExp(`"(${VOLATILE.join('|')})":${JSON_VALUE}`, 'g');
  const parts: string[] = [];
  for (const gapless of line.split('…')) {
    let p = '';
    let at = 0;
    for (const m of line.startsWith('{') ? gapless.matchAll(volatile) : []) {
      p += escapeRegex(gapless.slice(at, m.index)) + `"${m[1]}":${JSON_VALUE}`;
      at = m.index! + m[0].length;
    }
    parts.push(p + escapeRegex(gapless.slice(at)));
  }
  return parts.join('.*?');
}

function run(command: string, cwd: string): Promise<RunOut> {
  return runProgramAsync('/bin/sh', ['-c', command], { cwd, env: { ...b.env, PATH: `${binDir}:${b.env.PATH}`, SUBAGENT_DIR: join(cwd, '.subagents') } });
}

/** Runs every step of `page` in a fresh directory and checks each output against the page. */
async function replay(page: string): Promise<Step[]> {
  const all = steps(page);
  assert.ok(all.length > 0, `${page} has a console block`);
  const dir = join(b.dir, page.replace(/\W+/g, '-'));
  mkdirSync(dir);
  const real = realpathSync(dir);
  for (const step of all) {
    const r = await run(step.command, real);
    const got = r.stdout.split(real).join(SHOWN_DIR).replace(/\n$/, '');
    const want = new RegExp(`^${step.shown.map(pattern).join('\n')}$`);
    assert.match(
      got,
      want,
      `${page}: \`${step.command}\` printed something else than the page shows.\npage:\n${step.shown.join('\n')}\nreal (exit ${r.code}, stderr ${r.stderr.slice(0, 300)}):\n${got}`,
    );
  }
  return all;
}

describe('the tours print what the pages show', () => {
  test('README.md: five commands, each output as shown', async () => {
    const all = await replay('README.md');
    assert.equal(all.length, 5, `the README tour is five commands: ${all.map((s) => s.command).join(' | ')}`);
  });

  test('docs/tour.md: every command, each output as shown', async () => {
    const all = await replay('docs/tour.md');
    // It covers the six verbs.
    for (const verb of ['start-subagent', 'resume-subagent', 'subagent-status', 'subagent-result', 'subagent-search', 'subagent-cancel']) {
      assert.ok(
        all.some((s) => s.command.includes(verb)),
        `docs/tour.md uses ${verb}`,
      );
    }
  });

  test('the pattern a page line becomes: gaps only where … is, volatile values only for the listed keys', () => {
    const p = (shown: string, real: string) => new RegExp(`^${pattern(shown)}$`).test(real);
    assert.ok(p('{"a":1,…,"c":3}', '{"a":1,"b":2,"c":3}'));
    assert.ok(!p('{"a":1,"c":3}', '{"a":1,"b":2,"c":3}'), 'a field left out without … is a mismatch');
    assert.ok(!p('{"c":3,…,"a":1}', '{"a":1,"b":2,"c":3}'), 'the order counts');
    assert.ok(p('{"pid":11,"startedAt":"2026-01-01T00:00:00.000Z"}', '{"pid":42,"startedAt":"2027-02-02T00:00:00.000Z"}'));
    assert.ok(!p('{"run":1}', '{"run":2}'), 'other values count');
    assert.ok(!p('{"status":"running"}', '{"status":"scheduled"}'));
    assert.ok(!p('3 endpoints lack auth', '3 endpoints lack auth!'));
  });
});
