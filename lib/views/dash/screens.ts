import type { AgentEntry } from '../../runs/entry.js';
import type { ChildAgent } from '../../registry/record.js';
import { isTerminal } from '../../runs/observe.js';
import { elapsed, stateOf, summaryLine, tableLines, type TableLine } from '../table.js';
import { ASCII_GLYPHS, BOX_GLYPHS, treeOrder } from '../tree.js';
import { displayWidth, fit, pad, printable, wrap } from '../width.js';
import type { Shown } from './conversation.js';

/**
 * What the dashboard draws, as pure functions of its state: the list of runs and the conversation of
 * one. Each returns the screen's rows, fitted to its width (colour escapes only when `color`).
 */
export interface Look {
  cols: number;
  rows: number;
  color: boolean;
  /** Plain ASCII (TERM=dumb, NO_COLOR, a locale that is not UTF-8): no box drawing, no symbols. */
  ascii: boolean;
  now: number;
}

/** A row of the list: a run, or one of a run's own sub-agents (`child`). */
export type ListRow = TableLine;

/** The key of a row, by which the selection is kept while the list changes under it. */
export function rowKey(r: ListRow): string {
  return r.child ? `${r.entry.name}#${r.child.id}` : String(r.entry.name);
}

/** A tree has work going on when any of its runs is not terminal. */
function live(a: AgentEntry, kids: Map<string, AgentEntry[]>): boolean {
  return !isTerminal(a.status) || (kids.get(String(a.name)) ?? []).some((k) => live(k, kids));
}

/**
 * The runs as the dashboard lists them: trees with work going on first (by name), then the finished
 * ones, the last to finish first; each run followed by the runs started from it, and its own sub-agents.
 */
export function listRows(agents: AgentEntry[], filter: string, look: Look): { head: string; rows: ListRow[] } {
  const wanted = filter ? matching(agents, filter.toLowerCase()) : agents;
  const kids = new Map<string, AgentEntry[]>();
  for (const a of wanted) if (typeof a.parent === 'string') kids.set(a.parent, [...(kids.get(a.parent) ?? []), a]);
  const finished = (a: AgentEntry) => (typeof a.finishedAt === 'string' ? a.finishedAt : '');
  const order = (top: AgentEntry[]) => [
    ...top.filter((a) => live(a, kids)),
    ...top.filter((a) => !live(a, kids)).sort((x, y) => finished(y).localeCompare(finished(x))),
  ];
  const tree = treeOrder(wanted, look.ascii ? ASCII_GLYPHS : BOX_GLYPHS, order);
  const prefix = new Map(tree.map((t) => [String(t.entry.name), t]));
  const { head, lines } = tableLines(
    tree.map((t) => t.entry),
    {
      width: look.cols - 2,
      color: look.color,
      now: look.now,
      ascii: look.ascii,
      label: (a) => `${prefix.get(String(a.name))?.prefix ?? ''}${a.name}`,
      cli: (a) => (a.model ? `${a.cli}/${a.model}` : String(a.cli)),
      childLabel: (a, c) => childLine(prefix.get(String(a.name))?.prefix ?? '', c, look.ascii),
    },
  );
  return { head, rows: lines };
}

/** Names (and their CLI, status or outcome) that contain the filter; with the runs above them, for the tree. */
function matching(agents: AgentEntry[], filter: string): AgentEntry[] {
  const hit = (a: AgentEntry) => [a.name, a.cli, a.model, a.status, a.outcome, a.reason].some((v) => typeof v === 'string' && v.toLowerCase().includes(filter));
  return agents.filter(hit);
}

function childLine(prefix: string, c: ChildAgent, ascii: boolean): string {
  const indent = ' '.repeat(displayWidth(prefix));
  const desc = c.description ? ` ${c.description}` : '';
  return `${indent}  ${ascii ? '+' : '↳'} ${c.id}${desc} (${c.status}, ${c.cli})`;
}

/** The list screen: a title with the counts, the table's head, the rows around the selection, the key line. */
export function listScreen(p: {
  registry: string;
  agents: AgentEntry[];
  head: string;
  rows: ListRow[];
  selected: number;
  top: number;
  filter: string;
  footer: string;
  look: Look;
}): string[] {
  const { look } = p;
  const title = `subagents  ${p.registry}  ${p.agents.length ? summaryLine(p.agents) : 'no runs yet'}${p.filter ? `  filter: ${p.filter}` : ''}`;
  const out = [bold(fit(printable(title), look.cols), look), `  ${p.head}`];
  const room = bodyRows(look);
  for (let i = p.top; i < Math.min(p.rows.length, p.top + room); i++) {
    const mine = i === p.selected;
    const text = `${mine ? (look.ascii ? '> ' : '› ') : '  '}${p.rows[i]!.text}`;
    out.push(mine && look.color ? `\x1b[7m${pad(strip(text), look.cols)}\x1b[0m` : text);
  }
  if (!p.rows.length)
    out.push(`  ${p.filter ? `nothing matches "${p.filter}" (Esc clears the filter)` : 'no runs in this registry yet: they appear here as they start'}`);
  while (out.length < look.rows - 1) out.push('');
  out.push(footerLine(p.footer, look));
  return look.ascii ? out.map(asciiOnly) : out;
}

/** The screen's own symbols in ASCII, for a terminal that asked for plain text. */
const ASCII: Record<string, string> = { '·': '|', '…': '~', '↑↓': 'up/down', '↳': '+', '›': '>', '⚙': '*', '─': '-', '└': '`', '├': '|', '│': '|' };

function asciiOnly(line: string): string {
  return line.replace(/↑↓|[·…↳›⚙─└├│]/g, (m) => ASCII[m]!);
}

/** How many rows the body of a screen has: all but the title, the head and the key line. */
export function bodyRows(look: Look): number {
  return Math.max(1, look.rows - 3);
}

/** The conversation screen: the run's line, its sub-agents, the messages (scrolled), the key line. */
export function runScreen(p: {
  entry: AgentEntry | null;
  name: string;
  run: number;
  lines: string[];
  scroll: number;
  child: string | null;
  footer: string;
  look: Look;
}): string[] {
  const { look, entry } = p;
  const about = entry
    ? `${entry.name}  run ${entry.run}  ${stateOf(entry, look.now)}  ${entry.model ? `${entry.cli}/${entry.model}` : entry.cli}  ${elapsed(entry, look.now)}`
    : `${p.name}  run ${p.run}`;
  const kids = entry?.children ?? [];
  const subs = kids.length
    ? `sub-agents (Tab): ${[p.child === null ? '[all]' : 'all', ...kids.map((c) => (c.id === p.child ? `[${c.id} ${c.status}]` : `${c.id} ${c.status}`))].join('  ')}`
    : 'sub-agents: none';
  const out = [bold(fit(printable(about), look.cols), look), fit(printable(subs), look.cols)];
  const room = bodyRows(look);
  const end = Math.max(0, p.lines.length - p.scroll);
  const shown = p.lines.slice(Math.max(0, end - room), end);
  out.push(...shown);
  while (out.length < look.rows - 1) out.push('');
  out.push(footerLine(p.footer, look));
  return look.ascii ? out.map(asciiOnly) : out;
}

/**
 * The messages as screen rows: a prompt after `›` (its first lines), the agent's words wrapped, a tool
 * call on one line, a sub-agent's messages marked with its id, a line between runs.
 */
export function conversationLines(messages: Shown[], child: string | null, look: Look): string[] {
  const width = Math.max(10, look.cols);
  const out: string[] = [];
  let run = -1;
  for (const m of messages) {
    if (child !== null && m.childId !== child) continue;
    if (m.run !== run) {
      run = m.run;
      const head = `${look.ascii ? '--' : '──'} run ${run} `;
      out.push(dim(head + (look.ascii ? '-' : '─').repeat(Math.max(0, width - displayWidth(head))), look));
    }
    const from = m.childId && child === null ? `[${m.childId}] ` : '';
    if (m.role === 'tool') {
      out.push(dim(fit(printable(`${look.ascii ? '*' : '⚙'} ${from}${m.text.replace(/\s*\n\s*/g, ' ')}`), width), look));
      continue;
    }
    const lines = m.text.replace(/\n+$/, '').split('\n');
    const cut = m.role === 'user' && lines.length > 12 ? lines.length - 10 : 0;
    const kept = cut ? [...lines.slice(0, 10), `… ${cut} more lines`] : lines;
    const lead = m.role === 'user' ? (look.ascii ? '> ' : '› ') : '';
    kept.forEach((line, i) => {
      const text = printable(`${i === 0 ? lead + from : ' '.repeat(displayWidth(lead + from))}${line}`);
      for (const row of wrap(text, width)) out.push(m.role === 'user' ? bold(row, look) : row);
    });
  }
  return out;
}

function footerLine(text: string, look: Look): string {
  const line = fit(printable(text), look.cols);
  return look.color ? `\x1b[7m${pad(line, look.cols)}\x1b[0m` : line;
}

function bold(text: string, look: Look): string {
  return look.color ? `\x1b[1m${text}\x1b[0m` : text;
}

function dim(text: string, look: Look): string {
  return look.color ? `\x1b[2m${text}\x1b[0m` : text;
}

function strip(text: string): string {
  return text.replace(/\x1b\[[0-9;]*m/g, '');
}
