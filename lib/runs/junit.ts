import { loadAdapter } from '../agents/index.js';
import { SubagentError } from '../base/errors.js';
import { replaceFileDurably } from '../registry/durable.js';
import { lastAnswer } from './transcript.js';
import type { Observation } from './observe.js';
import { nowIso } from '../base/time.js';
import { runDurationMs } from './entry.js';
import { resolve } from 'node:path';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';

/**
 * A JUnit XML report, one test case per run, as CI dashboards read it: a failed or cancelled run is a
 * <failure>, an unknown (crashed) or unfinished one an <error>, and the run's final answer is its
 * <system-out>. Written atomically: a dashboard never reads half a report.
 */
const MAX_OUT = 64 * 1024;

/**
 * The suite's `timestamp` as the Ant/Jenkins JUnit schemas want it: an xs:dateTime without a fraction
 * or a zone designator (`2026-11-24T02:10:31`). It is UTC, like every other time this tool writes.
 */
export function junitTimestamp(iso: string = nowIso()): string {
  return iso.slice(0, 19);
}

function esc(text: string): string {
  return text
    .replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/g, '')
    .replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;');
}

export async function writeJunit(file: string, registry: string, observations: Observation[], cwd: string): Promise<string> {
  const path = resolve(cwd, file);
  let failures = 0;
  let errors = 0;
  let totalMs = 0;
  const cases: string[] = [];
  for (const ob of observations) {
    const r = ob.record;
    const ms = runDurationMs(r) ?? 0;
    totalMs += ms;
    const slash = r.name.lastIndexOf('/');
    const classname = slash === -1 ? 'subagents' : `subagents.${r.name.slice(0, slash).replaceAll('/', '.')}`;
    let verdict = '';
    if (ob.status === 'done' && r.outcome !== 'succeeded') {
      failures++;
      const what = r.outcome === 'cancelled' ? 'cancelled' : `exit code ${r.exitCode ?? 'none'}${r.signal ? `, signal ${r.signal}` : ''}`;
      // The type is the run's reason (docs/contract.md, "Reasons"): what a dashboard groups failures by.
      const type = r.reason ?? r.outcome ?? 'failed';
      verdict = `<failure message="${esc(`${r.outcome}: ${r.error ?? what}`)}" type="${esc(type)}">${esc(`${what}\n${r.error ?? ''}`)}</failure>`;
    } else if (ob.status !== 'done') {
      errors++;
      const msg =
        ob.status === 'unknown' ? (ob.statusReason ?? 'the supervisor died without recording an end') : `still ${ob.status} when the report was written`;
      verdict = `<error message="${esc(msg)}" type="${ob.status}">${esc(msg)}</error>`;
    }
    let out = '';
    try {
      const answer = lastAnswer(ob.dir, await loadAdapter(r.cli), r);
      const text = answer.text ?? '';
      out = text.length > MAX_OUT ? text.slice(-MAX_OUT) : text;
    } catch {
      out = '';
    }
    cases.push(
      `  <testcase name="${esc(r.name)}" classname="${esc(classname)}" time="${(ms / 1000).toFixed(3)}">` +
        verdict +
        (out ? `<system-out>${esc(out)}</system-out>` : '') +
        `</testcase>`,
    );
  }
  const xml =
    `<?xml version="1.0" encoding="UTF-8"?>\n` +
    `<testsuites name="subagents" tests="${observations.length}" failures="${failures}" errors="${errors}" time="${(totalMs / 1000).toFixed(3)}">\n` +
    ` <testsuite name="${esc(registry)}" tests="${observations.length}" failures="${failures}" errors="${errors}" skipped="0" time="${(totalMs / 1000).toFixed(3)}" timestamp="${junitTimestamp()}">\n` +
    cases.join('\n') +
    `\n </testsuite>\n</testsuites>\n`;
  try {
    mkdirSync(dirname(path), { recursive: true });
    replaceFileDurably(path, xml);
  } catch (err) {
    const e = err instanceof SubagentError ? (err.details.errno as string | null) : (err as NodeJS.ErrnoException).code;
    throw new SubagentError('E_ARG_INVALID', `cannot write the JUnit report to ${path}: ${e ?? (err as Error).message}`, {
      path,
      hint: 'give --junit a path in a writable directory',
    });
  }
  return path;
}
