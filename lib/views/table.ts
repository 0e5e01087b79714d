import type { AgentEntry } from '../runs/entry.js';
import type { ChildAgent } from '../registry/record.js';
import { formatSize } from '../base/size.js';
import { displayWidth, fit, pad, printable } from './width.js';

/**
 * `status --format table`: an aligned table for people. Columns that do not fit a narrow terminal are
 * dropped from the least important end; NAME and STATUS always stay. Colour only on a terminal, and
 * never when NO_COLOR is set.
 */
export interface TableOptions {
  /** Terminal width; Infinity when not a terminal (nothing is cut). */
  width: number;
  color: boolean;
  now?: number;
  /** The NAME cell (default: the name); the dashboard puts the tree before it. */
  label?: (a: Row) => string;
  /** The CLI cell (default: the CLI); the dashboard adds the model. */
  cli?: (a: Row) => string;
  /** The line of a run's own sub-agent (default: indented under the run). */
  childLabel?: (a: Row, c: ChildAgent) => string;
  /** ASCII only: no box-drawing glyph of the table's own. */
  ascii?: boolean;
}

/** A line of the table: a run's, or (`child`) one of its own sub-agents'. */
export interface TableLine {
  entry: Row;
  child: ChildAgent | null;
  text: string;
}

type Row = AgentEntry;

const COLORS: Record<string, string> = {
  running: '36',
  scheduled: '2',
  succeeded: '32',
  failed: '31',
  cancelled: '33',
  unknown: '35',
  stalled: '33',
};

export function useColor(stream: { isTTY?: boolean }, env: NodeJS.ProcessEnv): boolean {
  return stream.isTTY === true && (env.NO_COLOR === undefined || env.NO_COLOR === '') && env.TERM !== 'dumb';
}

export function ago(iso: unknown, now: number): string {
  if (typeof iso !== 'string') return '-';
  const s = Math.max(0, Math.round((now - Date.parse(iso)) / 1000));
  return Number.isFinite(s) ? `${span(s)} ago` : '-';
}

/** Whole seconds as people say them, in the largest unit: 45s, 4m, 3h, 2d. */
function span(s: number): string {
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m`;
  if (s < 86400) return `${Math.floor(s / 3600)}h`;
  return `${Math.floor(s / 86400)}d`;
}

/** `, resets in 4m` (or `, reset 2m ago`) for a rate-limited run whose CLI said when; empty otherwise. */
function resets(a: Row, now: number): string {
  if (a.reason !== 'rate-limit' || typeof a.resetsAt !== 'string') return '';
  const s = Math.round((Date.parse(a.resetsAt) - now) / 1000);
  if (!Number.isFinite(s)) return '';
  return s > 0 ? `, resets in ${span(s)}` : `, reset ${ago(a.resetsAt, now)}`;
}

/** `in 4m` until a time, `now` once it is there. */
function until(at: string, now: number): string {
  const s = Math.round((Date.parse(at) - now) / 1000);
  return Number.isFinite(s) && s > 0 ? `in ${span(s)}` : 'now';
}

/** ` (limit 92%)` for a running run whose CLI warned that a limit is near; empty otherwise. */
function nearLimit(a: Row): string {
  const w = a.limitWarning;
  if (!w) return '';
  return w.utilization === null ? ' (limit near)' : ` (limit ${Math.round(w.utilization * 100)}%)`;
}

/** The last output, or the last sign of work when that is later (CPU time: docs/stalls.md), else the last change. */
function lastSign(a: Row): string {
  const seen = [a.lastActivityAt, a.lastWorkAt].filter((t): t is string => typeof t === 'string').sort();
  return seen.at(-1) ?? a.updatedAt;
}

export function elapsed(a: Row, now: number): string {
  const from = Date.parse(String(a.startedAt));
  const to = typeof a.finishedAt === 'string' ? Date.parse(a.finishedAt) : now;
  if (!Number.isFinite(from) || !Number.isFinite(to)) return '-';
  const s = Math.max(0, Math.round((to - from) / 1000));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}

function tokens(a: Row): string {
  const u = a.usage as { totalTokens?: number; costUsd?: number | null } | null;
  if (!u) return '-';
  const t = u.totalTokens ?? 0;
  const k = t >= 1000 ? `${(t / 1000).toFixed(t >= 100000 ? 0 : 1)}k` : String(t);
  return u.costUsd != null ? `${k} $${u.costUsd.toFixed(u.costUsd < 1 ? 3 : 2)}` : k;
}

/**
 * The STATUS cell: a failure says why (`failed (rate-limit)`, with when a rate limit resets: `failed
 * (rate-limit, resets in 4m)`) unless `short` (a cancel needs no more than its outcome); a running run
 * warned of a limit near says how near (`running (limit 92%)`); a parked one when it resumes (`parked, resumes in 4m`);
 * one following others what it still waits for (`after plan, review`).
 */
export function stateOf(a: Row, now: number, short = false): string {
  if (a.status === 'done') return a.outcome === 'failed' && a.reason && !short ? `failed (${String(a.reason)}${resets(a, now)})` : String(a.outcome ?? 'done');
  // "stalled 4m": running, without a sign of work for 4 minutes.
  // "parked, resumes in 4m": waiting out a limit (--on-limit wait).
  if (a.status === 'running' && typeof a.parkedUntil === 'string') return `parked${short ? '' : `, resumes ${until(a.parkedUntil, now)}`}`;
  if (a.status === 'running' && a.stalled) return `stalled ${ago(a.stalledSince, now).replace(/ ago$/, '')}`;
  if (a.status === 'scheduled' && a.queued) return `queued #${a.queuePosition}`;
  // "after plan, review": following other runs (--after), still waiting for these.
  if (a.status === 'scheduled' && a.waitingFor.length > 0) return short ? 'waiting' : `after ${a.waitingFor.join(', ')}`;
  if (a.status === 'running' && !short) return `running${nearLimit(a)}`;
  return String(a.status);
}

function colorKey(a: Row): string {
  return a.status === 'done' ? String(a.outcome) : a.status === 'running' && a.stalled ? 'stalled' : String(a.status);
}

interface Column {
  head: string;
  get: (a: Row, now: number) => string;
  /** A shorter form, used when even NAME and STATUS alone do not fit. */
  short?: (a: Row, now: number) => string;
  /** Lower drops first when the terminal is narrow. */
  keep: number;
  right?: boolean;
}

const COLUMNS: Column[] = [
  { head: 'NAME', get: (a) => String(a.name), keep: 100 },
  { head: 'CLI', get: (a) => String(a.cli), keep: 40 },
  { head: 'STATUS', get: (a, now) => stateOf(a, now), short: (a, now) => stateOf(a, now, true), keep: 90 },
  { head: 'RUN', get: (a) => String(a.run), keep: 30, right: true },
  { head: 'ELAPSED', get: (a, now) => elapsed(a, now), keep: 60, right: true },
  { head: 'TOOLS', get: (a) => String(a.toolUses ?? 0), keep: 20, right: true },
  { head: 'TOKENS/COST', get: (a) => tokens(a), keep: 10, right: true },
  { head: 'MEM', get: (a) => (a.memory ? formatSize(a.memory.rssBytes) : '-'), keep: 15, right: true },
  { head: 'LAST ACTIVITY', get: (a, now) => ago(lastSign(a), now), keep: 50 },
];

export function renderTable(agents: Row[], o: TableOptions): string {
  const { head, lines } = tableLines(agents, o);
  return [head, ...lines.map((l) => l.text)].join('\n') + '\n';
}

/** A run's own sub-agent, as the table shows it under the run. */
function childText(c: ChildAgent, ascii: boolean | undefined): string {
  const desc = c.description ? ` ${c.description}` : '';
  return `  ${ascii ? '`' : '└'} ${c.id}${desc} (${c.status}, ${c.cli})`;
}

/** The table as its head and its lines, each line with the run (and sub-agent) it shows. */
export function tableLines(agents: Row[], o: TableOptions): { head: string; lines: TableLine[] } {
  const now = o.now ?? Date.now();
  type Line = { cells: string[]; short?: string[]; key: string | null; child?: string; entry: Row; agent: ChildAgent | null };
  const lines: Line[] = [];
  const get = (c: Column, a: Row) => (c.head === 'NAME' && o.label ? o.label(a) : c.head === 'CLI' && o.cli ? o.cli(a) : c.get(a, now));
  for (const a of agents) {
    const cells = COLUMNS.map((c) => printable(get(c, a)));
    lines.push({ cells, short: COLUMNS.map((c, i) => (c.short ? printable(c.short(a, now)) : cells[i]!)), key: colorKey(a), entry: a, agent: null });
    for (const c of a.children ?? []) {
      lines.push({
        cells: [],
        key: c.status === 'failed' ? 'failed' : c.status === 'done' ? 'succeeded' : c.status,
        child: printable(o.childLabel ? o.childLabel(a, c) : childText(c, o.ascii)),
        entry: a,
        agent: c,
      });
    }
  }
  const widthOf = (i: number) => Math.max(displayWidth(COLUMNS[i]!.head), ...lines.filter((l) => !l.child).map((l) => displayWidth(l.cells[i]!)));
  let cols = COLUMNS.map((c, i) => ({ ...c, i, w: widthOf(i) }));
  const total = () => cols.reduce((s, c) => s + c.w, 0) + 2 * (cols.length - 1);
  while (total() > o.width && cols.length > 2) {
    const drop = cols.filter((c) => c.head !== 'NAME' && c.head !== 'STATUS').sort((x, y) => x.keep - y.keep)[0];
    if (!drop) break;
    cols = cols.filter((c) => c !== drop);
  }
  if (total() > o.width) {
    // The short forms before the name is cut.
    for (const l of lines) if (l.short) l.cells = l.short;
    cols = cols.map((c) => ({ ...c, w: widthOf(c.i) }));
  }
  if (total() > o.width) {
    const name = cols.find((c) => c.head === 'NAME')!;
    name.w = Math.max(4, name.w - (total() - o.width));
  }
  const paint = (text: string, key: string | null) => (o.color && key && COLORS[key] ? `\x1b[${COLORS[key]}m${text}\x1b[0m` : text);
  const row = (cells: string[], key: string | null, head: boolean) =>
    cols
      .map((c, k) => {
        const cell = fit(cells[c.i] ?? '', c.w);
        const text = k === cols.length - 1 && !c.right ? cell : c.right ? ' '.repeat(Math.max(0, c.w - displayWidth(cell))) + cell : pad(cell, c.w);
        return c.head === 'STATUS' && !head ? paint(text, key) : head && o.color ? `\x1b[1m${text}\x1b[0m` : text;
      })
      .join('  ')
      .trimEnd();
  return {
    head: row(
      COLUMNS.map((c) => c.head),
      null,
      true,
    ),
    lines: lines.map((l) => ({
      entry: l.entry,
      child: l.agent,
      text: l.child !== undefined ? paint(fit(l.child, o.width), l.key) : row(l.cells, l.key, false),
    })),
  };
}

/** The one-line summary under a watched table. */
export function summaryLine(agents: Row[]): string {
  const count = (f: (a: Row) => boolean) => agents.filter(f).length;
  const parts = [
    `${count((a) => a.status === 'running')} running`,
    `${count((a) => a.status === 'scheduled')} queued`,
    `${count((a) => a.status === 'done' && a.outcome === 'succeeded')} succeeded`,
    `${count((a) => a.status === 'done' && a.outcome === 'failed')} failed`,
  ];
  const cancelled = count((a) => a.status === 'done' && a.outcome === 'cancelled');
  const unknown = count((a) => a.status === 'unknown');
  const stalled = count((a) => a.status === 'running' && a.stalled);
  if (stalled) parts.splice(1, 0, `${stalled} stalled`);
  if (cancelled) parts.push(`${cancelled} cancelled`);
  if (unknown) parts.push(`${unknown} unknown`);
  return `${agents.length} run${agents.length === 1 ? '' : 's'}: ${parts.join(' · ')}`;
}
