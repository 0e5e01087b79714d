import type { AgentEntry } from '../runs/entry.js';

/** The glyphs a tree is drawn with: box-drawing, or plain ASCII where the terminal asks for it. */
export interface TreeGlyphs {
  mid: string;
  last: string;
  bar: string;
  gap: string;
}

export const BOX_GLYPHS: TreeGlyphs = { mid: '├─ ', last: '└─ ', bar: '│  ', gap: '   ' };
export const ASCII_GLYPHS: TreeGlyphs = { mid: '|- ', last: '`- ', bar: '|  ', gap: '   ' };

/** A run in tree order, with what goes before its name. */
export interface TreeRow {
  entry: AgentEntry;
  prefix: string;
  depth: number;
}

/**
 * The runs in tree order by `parent` (a run started from another run under it); `roots` orders the
 * top-level runs (default: as given). A parent that is not listed makes its child a root.
 */
export function treeOrder(agents: AgentEntry[], glyphs: TreeGlyphs = BOX_GLYPHS, roots?: (a: AgentEntry[]) => AgentEntry[]): TreeRow[] {
  const byName = new Map(agents.map((a) => [String(a.name), a]));
  const children = new Map<string, AgentEntry[]>();
  const top: AgentEntry[] = [];
  for (const a of agents) {
    const parent = typeof a.parent === 'string' && byName.has(a.parent) && a.parent !== a.name ? a.parent : null;
    if (parent) children.set(parent, [...(children.get(parent) ?? []), a]);
    else top.push(a);
  }
  const rows: TreeRow[] = [];
  const seen = new Set<string>();
  const visit = (a: AgentEntry, prefix: string, last: boolean, depth: number) => {
    const name = String(a.name);
    if (seen.has(name)) return;
    seen.add(name);
    rows.push({ entry: a, prefix: depth === 0 ? '' : prefix + (last ? glyphs.last : glyphs.mid), depth });
    const kids = children.get(name) ?? [];
    kids.forEach((k, i) => {
      visit(k, depth === 0 ? prefix : prefix + (last ? glyphs.gap : glyphs.bar), i === kids.length - 1, depth + 1);
    });
  };
  for (const r of roots ? roots(top) : top) visit(r, '', true, 0);
  return rows;
}

/** `status --tree`: the runs as an indented tree by `parent`, one line each, for people. */
export function treeText(agents: AgentEntry[]): string {
  const lines = treeOrder(agents).map(({ entry: a, prefix }) => {
    const state = a.status === 'done' ? `done ${a.outcome}` : a.queued ? `scheduled (queued #${a.queuePosition})` : String(a.status);
    const secs = typeof a.durationMs === 'number' ? `  ${(a.durationMs / 1000).toFixed(1)}s` : '';
    return `${prefix}${a.name}  [${a.cli}] ${state}  run ${a.run}${secs}`;
  });
  return lines.join('\n') + (lines.length ? '\n' : '');
}
