/**
 * What the rows report, for report.ts to write: the results table's rows, the misses, each row's method
 * and figures, the main rows of every Node; and `section`, which runs one part of the bench (BENCH_ONLY).
 */
import type { NodeBin } from './nodes.js';
import { ONLY, log, problems } from './setup.js';
import { fmtRatio, monoMs } from './util.js';

interface Row {
  what: string;
  target: string;
  on: string;
  plain: string | null;
  floor: string;
  verdict: string;
}
export const rows: Row[] = [];
/** Where a target is missed: by how much, and why. */
export const misses: string[] = [];
export const methods: Array<{ title: string; text: string }> = [];
export const details: string[] = [];

/** The main rows of one Node, for the table of Nodes side by side. */
export interface NodeRows {
  node: NodeBin;
  floor?: number;
  start?: { ms: number; ratio: number };
  status?: Record<number, { ms: number; ratio: number }>;
  wait?: { median: number; p95: number; n: number };
  memory?: { rssAlone: number; pssMean: number; n: number; idleRss: number; idlePss: number; idleAnon: number; anonMean: number };
}
export const nodeRows = new Map<string, NodeRows>();
export const rowsOf = (n: NodeBin): NodeRows => {
  let r = nodeRows.get(n.version);
  if (!r) {
    r = { node: n };
    nodeRows.set(n.version, r);
  }
  return r;
};

export function ratioVerdict(r: number, limit: number): string {
  if (!Number.isFinite(r)) return 'n/a';
  return r <= limit
    ? 'meets'
    : `**misses** by ${(r - limit).toFixed(2)} × (${fmtRatio(r)} vs ≤ ${limit} ×, ${(((r - limit) / limit) * 100).toFixed(0)} % over)`;
}

export async function section(title: string, body: () => Promise<void>): Promise<void> {
  if (ONLY.length && !ONLY.some((o) => title.startsWith(o))) return;
  const t0 = monoMs();
  log(`${title} …`);
  try {
    await body();
  } catch (err) {
    const msg = (err as Error).stack ?? String(err);
    problems.push(`${title}: ${(err as Error).message}`);
    log(`${title}: FAILED: ${msg}`);
  }
  log(`${title}: ${((monoMs() - t0) / 1000).toFixed(1)} s`);
}

/** Figures lines of the other Nodes, per version. */
export const nodeDetails = new Map<string, string[]>();
export const noteFor = (node: NodeBin, line: string) => {
  const l = nodeDetails.get(node.version) ?? [];
  l.push(line);
  nodeDetails.set(node.version, l);
};

export function mdTable(header: string[], body: string[][]): string {
  return [`| ${header.join(' | ')} |`, `|${header.map(() => '---').join('|')}|`, ...body.map((r) => `| ${r.join(' | ')} |`)].join('\n');
}
