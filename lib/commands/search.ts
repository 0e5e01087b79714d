import { loadAdapter } from '../agents/index.js';
import { SubagentError } from '../base/errors.js';
import { listRuns, readRecord, runDir } from '../registry/store.js';
import { forEachItem, type TranscriptItem } from '../runs/transcript.js';
import { childTranscript } from '../runs/children.js';
import { requireLatest } from '../runs/observe.js';
import { validateName } from '../registry/names.js';
import type { Message } from '../agents/types.js';
import { inRegistryOf, placeOf, type Context } from './context.js';

export interface SearchOptions extends Context {
  name: string | undefined;
  /** A JavaScript regular expression (searched with the `g` flag). */
  pattern: string | undefined;
  /** any (default), user, assistant or tool. */
  role?: string | undefined;
  /** Search one child sub-agent's transcript instead of the runs'. */
  child?: string | undefined;
}

/** One match: where it is, and the text around it. */
export interface SearchMatch {
  run: number;
  index: number;
  role: Message['role'];
  /** For text streams (shell): the line of the output. */
  line?: number;
  childId?: string;
  snippet: string;
}

/** What search resolves to (docs/schemas/search.schema.json); `child` and `source` only for a child's search. */
export interface SearchResult {
  ok: true;
  registry: string;
  name: string;
  child?: string;
  source?: 'transcript' | 'stream';
  pattern: string;
  role: string;
  /** At most 1000. */
  matches: SearchMatch[];
  /** Every match, listed or not. */
  total: number;
  truncated: boolean;
  skippedLines?: number;
}

export const ROLES = ['any', 'user', 'assistant', 'tool'] as const;
export const MAX_MATCHES = 1000;
const SNIPPET_RADIUS = 60;

export function compilePattern(pattern: string | undefined): RegExp {
  if (pattern === undefined)
    throw new SubagentError('E_PATTERN_REQUIRED', '--pattern is required', { hint: 'give a JavaScript regular expression: --pattern "error|fail"' });
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
export async function search(o: SearchOptions): Promise<SearchResult> {
  const re = compilePattern(o.pattern);
  const pattern = o.pattern!;
  const role = checkRole(o.role);
  const { registry } = placeOf(o);
  return inRegistryOf(registry, () => searchIn(registry, validateName(o.name), re, pattern, role, o.child));
}

async function searchIn(registry: string, asked: string, re: RegExp, pattern: string, role: string, child: string | undefined): Promise<SearchResult> {
  const latest = requireLatest(registry, asked);
  const name = latest.record.name;
  const matches: SearchMatch[] = [];
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
  if (child !== undefined) {
    const c = await childTranscript(registry, name, child);
    c.messages.forEach((m, i) => {
      visit({ run: c.run, index: i, role: m.role, text: m.text, ...(m.tool ? { tool: m.tool } : {}) });
    });
    return { ok: true, registry, name, child: c.child.id, source: c.source, pattern, role, matches, total, truncated: total > matches.length };
  }
  let skippedLines = 0;
  for (const run of listRuns(registry, name) ?? []) {
    const dir = runDir(registry, name, run);
    const record = run === latest.record.run ? latest.record : readRecord(dir);
    skippedLines += forEachItem(dir, record, await loadAdapter(record.cli), visit);
  }
  return { ok: true, registry, name, pattern, role, matches, total, truncated: total > matches.length, skippedLines };
}
