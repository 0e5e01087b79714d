import { loadAdapter } from '../agents/index.js';
import { SubagentError } from '../base/errors.js';
import { listRuns, readRecord, runDir } from '../registry/store.js';
import { forEachItem, type TranscriptItem } from '../runs/transcript.js';
import { childTranscript } from '../runs/children.js';
import { requireLatest, resolveRegistry, type Context } from './common.js';

export interface SearchOptions extends Context {
  name: string | undefined;
  pattern: string | undefined;
  role?: string | undefined;
  child?: string | undefined;
}

export const ROLES = ['any', 'user', 'assistant', 'tool'] as const;
export const MAX_MATCHES = 1000;
const SNIPPET_RADIUS = 60;

export function compilePattern(pattern: string | undefined): RegExp {
  if (pattern === undefined) throw new SubagentError('E_PATTERN_REQUIRED', '--pattern is required', { hint: 'give a JavaScript regular expression: --pattern "error|fail"' });
  try {
    return new RegExp(pattern, 'g');
  } catch (err) {
    throw new SubagentError('E_PATTERN_INVALID', `--pattern is not a valid JavaScript regular expression: ${(err as Error).message}`, {
      pattern,
      hint: 'escape special characters with a backslash, e.g. "\\(" for a literal parenthesis',
    });
  }
}

export function checkRole(role: string | undefined): string {
  const r = role ?? 'any';
  if (!(ROLES as readonly string[]).includes(r)) {
    throw new SubagentError('E_ARG_INVALID', `--role "${r}" is not one of ${ROLES.join(', ')}`, { role: r, hint: `use --role ${ROLES.join('|')}` });
  }
  return r;
}

/** subagent-search: a JS regex over the normalised transcript of every run of a name. */
export async function search(o: SearchOptions): Promise<Record<string, unknown>> {
  const re = compilePattern(o.pattern);
  const role = checkRole(o.role);
  const registry = resolveRegistry(o);
  const latest = requireLatest(registry, o.name!);
  const name = latest.record.name;
  const matches: Array<Record<string, unknown>> = [];
  let total = 0;
  const visit = (item: TranscriptItem) => {
      if (role !== 'any' && item.role !== role) return;
      const haystack = item.tool ? `${item.text}\n${item.tool.name} ${item.tool.input ?? ''}\n${item.tool.output ?? ''}` : item.text;
      re.lastIndex = 0;
      for (let m = re.exec(haystack); m !== null; m = re.exec(haystack)) {
        total++;
        if (matches.length < MAX_MATCHES) {
          const from = Math.max(0, m.index - SNIPPET_RADIUS);
          const to = Math.min(haystack.length, m.index + m[0].length + SNIPPET_RADIUS);
          matches.push({
            run: item.run,
            index: item.index,
            role: item.role,
            ...(item.line !== undefined ? { line: item.line } : {}),
            ...(item.childId !== undefined ? { childId: item.childId } : {}),
            snippet: (from > 0 ? '…' : '') + haystack.slice(from, to) + (to < haystack.length ? '…' : ''),
          });
        }
        if (m[0].length === 0) re.lastIndex++;
      }
  };
  if (o.child !== undefined) {
    const c = await childTranscript(registry, name, o.child);
    c.messages.forEach((m, i) => visit({ run: c.run, index: i, role: m.role, text: m.text, ...(m.tool ? { tool: m.tool } : {}) }));
    return { ok: true, registry, name, child: c.child.id, source: c.source, pattern: o.pattern, role, matches, total, truncated: total > matches.length };
  }
  let skippedLines = 0;
  for (const run of listRuns(registry, name) ?? []) {
    const dir = runDir(registry, name, run);
    const record = run === latest.record.run ? latest.record : readRecord(dir);
    skippedLines += forEachItem(dir, record, await loadAdapter(record.cli), visit);
  }
  return { ok: true, registry, name, pattern: o.pattern, role, matches, total, truncated: total > matches.length, skippedLines };
}
