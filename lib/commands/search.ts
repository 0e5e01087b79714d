import { loadAdapter } from '../agents/index.js';
import { SubagentError } from '../base/errors.js';
import { listRuns, readListedRun, readRecord, runDir } from '../registry/store.js';
import { forEachItem, type TranscriptItem } from '../runs/transcript.js';
import { childTranscript } from '../runs/children.js';
import { requireLatest } from '../runs/observe.js';
import { validateName } from '../registry/names.js';
import type { Message } from '../agents/types.js';
import { inRegistryOf, placeOf, type Context } from './context.js';
import { searchTimeoutMs } from './settings.js';
import { BoundedMatcher, cannotBacktrack } from '../base/match.js';
import { fastPath } from '../base/fast-paths.js';

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

/** subagent-search: a JS regex over the normalised transcript of every run of a name, its matching bounded in time. */
export async function search(o: SearchOptions): Promise<SearchResult> {
  compilePattern(o.pattern);
  const pattern = o.pattern!;
  const role = checkRole(o.role);
  const { registry, env } = placeOf(o);
  const boundMs = searchTimeoutMs(env);
  return inRegistryOf(registry, async () => {
    const matcher = new BoundedMatcher(pattern, 'g', boundMs, fastPath('plain-pattern', env) && cannotBacktrack(pattern));
    try {
      return await searchIn(registry, validateName(o.name), matcher, role, o.child);
    } finally {
      matcher.close();
    }
  });
}

/**
 * Texts are handed to the matcher in batches of about this many characters: a 50 MB log is never held
 * whole. A batch holds an object and a string per line (a shell run's 50 MB is 500 000 lines): at 4 MiB
 * a search of that log peaked at 224–258 MB RSS and took twice as long as at 256 KiB (75–96 MB;
 * docs/benchmarks.md, row 6).
 */
const BATCH_CHARS = 256 * 1024;

/** The matches of a search, gathered batch by batch in transcript order. */
class Matches {
  readonly matches: SearchMatch[] = [];
  total = 0;
  private items: Array<{ item: TranscriptItem; haystack: string }> = [];
  private chars = 0;

  constructor(
    private readonly matcher: BoundedMatcher,
    private readonly role: string,
  ) {}

  add(item: TranscriptItem): void {
    if (this.role !== 'any' && item.role !== this.role) return;
    const haystack = item.tool ? `${item.text}\n${item.tool.name} ${item.tool.input ?? ''}\n${item.tool.output ?? ''}` : item.text;
    this.items.push({ item, haystack });
    this.chars += haystack.length;
    if (this.chars >= BATCH_CHARS) this.flush();
  }

  flush(): void {
    if (this.items.length === 0) return;
    const batch = this.items;
    this.items = [];
    this.chars = 0;
    const { found, total } = this.matcher.scan(
      batch.map((b) => b.haystack),
      MAX_MATCHES - this.matches.length,
    );
    this.total += total;
    for (const f of found) {
      const { item, haystack } = batch[f.text]!;
      const from = Math.max(0, f.index - SNIPPET_RADIUS);
      const to = Math.min(haystack.length, f.index + f.length + SNIPPET_RADIUS);
      this.matches.push({
        run: item.run,
        index: item.index,
        role: item.role,
        ...(item.line !== undefined ? { line: item.line } : {}),
        ...(item.childId !== undefined ? { childId: item.childId } : {}),
        snippet: (from > 0 ? '…' : '') + haystack.slice(from, to) + (to < haystack.length ? '…' : ''),
      });
    }
  }
}

async function searchIn(registry: string, asked: string, matcher: BoundedMatcher, role: string, child: string | undefined): Promise<SearchResult> {
  const latest = requireLatest(registry, asked);
  const name = latest.record.name;
  const pattern = matcher.pattern;
  const m = new Matches(matcher, role);
  if (child !== undefined) {
    const c = await childTranscript(registry, name, child);
    c.messages.forEach((msg, i) => {
      m.add({ run: c.run, index: i, role: msg.role, text: msg.text, ...(msg.tool ? { tool: msg.tool } : {}) });
    });
    m.flush();
    return {
      ok: true,
      registry,
      name,
      child: c.child.id,
      source: c.source,
      pattern,
      role,
      matches: m.matches,
      total: m.total,
      truncated: m.total > m.matches.length,
    };
  }
  let skippedLines = 0;
  for (const run of listRuns(registry, name) ?? []) {
    const dir = runDir(registry, name, run);
    const record = run === latest.record.run ? latest.record : readListedRun(dir, readRecord);
    if (record === null) continue;
    skippedLines += forEachItem(dir, record, await loadAdapter(record.cli), (item) => m.add(item));
  }
  m.flush();
  return { ok: true, registry, name, pattern, role, matches: m.matches, total: m.total, truncated: m.total > m.matches.length, skippedLines };
}
