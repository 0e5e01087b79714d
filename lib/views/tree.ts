import type { AgentEntry } from '../runs/entry.js';

/** `status --tree`: the runs as an indented tree by `parent`, one line each, for people. */
export function treeText(agents: AgentEntry[]): string {
  const byName = new Map(agents.map((a) => [String(a.name), a]));
  const children = new Map<string, AgentEntry[]>();
  const roots: AgentEntry[] = [];
  for (const a of agents) {
    const parent = typeof a.parent === 'string' && byName.has(a.parent) && a.parent !== a.name ? a.parent : null;
    if (parent) children.set(parent, [...(children.get(parent) ?? []), a]);
    else roots.push(a);
  }
  const lines: string[] = [];
  const seen = new Set<string>();
  const visit = (a: AgentEntry, prefix: string, last: boolean, top: boolean) => {
    const name = String(a.name);
    if (seen.has(name)) return;
    seen.add(name);
    const state = a.status === 'done' ? `done ${a.outcome}` : a.queued ? `scheduled (queued #${a.queuePosition})` : String(a.status);
    const secs = typeof a.durationMs === 'number' ? `  ${(a.durationMs / 1000).toFixed(1)}s` : '';
    lines.push(`${prefix}${top ? '' : last ? '└─ ' : '├─ '}${name}  [${a.cli}] ${state}  run ${a.run}${secs}`);
    const kids = children.get(name) ?? [];
    kids.forEach((k, i) => {
      visit(k, top ? prefix : prefix + (last ? '   ' : '│  '), i === kids.length - 1, false);
    });
  };
  for (const r of roots) visit(r, '', true, true);
  return lines.join('\n') + (lines.length ? '\n' : '');
}
