/**
 * Summarises V8 .cpuprofile files (from `node --cpu-prof`): self time by category, by module file and by
 * function, and inclusive time of the project's own functions. Several profiles of the same command are
 * added up, so the shares are steadier than one run's.
 */
import { readFileSync } from 'node:fs';
import { ROOT } from './util.js';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

export interface ProfileSummary {
  profiles: number;
  /** mean profiled time per run, ms (from the profiler's start, i.e. after Node's own bootstrap) */
  profiledMs: number;
  byCategory: Array<{ key: string; ms: number; share: number }>;
  byFile: Array<{ key: string; ms: number; share: number }>;
  byFunction: Array<{ key: string; ms: number; share: number }>;
  /** inclusive time of the project's functions and of a few Node entry points */
  inclusive: Array<{ key: string; ms: number; share: number }>;
}

const rootUrl = 'file://' + ROOT;

export function shortUrl(url: string): string {
  if (url.startsWith(rootUrl)) return url.slice(rootUrl.length);
  if (url.startsWith('file://')) return url.slice(7);
  return url;
}

export function category(frame: CallFrame): string {
  const { url, functionName } = frame;
  if (url === '') {
    if (functionName === '(garbage collector)') return 'garbage collection';
    if (functionName === '(idle)') return 'idle (waiting: I/O, child processes, timers)';
    if (functionName === '(program)') return 'V8/native, not attributed (bootstrap, compile, native code)';
    return `native: ${functionName || '(anonymous)'}`;
  }
  if (url.startsWith('node:internal/modules/') || url.startsWith('node:internal/vm/module')) return 'Node module loader (resolve, read, compile, link)';
  if (url.startsWith('node:internal/fs') || url === 'node:fs') return 'Node fs (JS side)';
  if (url.startsWith('node:internal/child_process') || url === 'node:child_process') return 'Node child_process';
  if (url.startsWith('node:')) return 'Node internals (other)';
  const s = shortUrl(url);
  if (s.includes('node_modules/')) return 'dependency ' + s.split('node_modules/')[1]!.split('/')[0];
  if (url.startsWith(rootUrl)) return `subagents code (${s.startsWith('bin/') ? 'bin shim' : s.split('/').slice(0, 2).join('/')})`;
  return 'other JS';
}

export function summarise(files: string[]): ProfileSummary {
  const cat = new Map<string, number>();
  const file = new Map<string, number>();
  const fn = new Map<string, number>();
  const incl = new Map<string, number>();
  let total = 0;
  let profiled = 0;
  for (const f of files) {
    const p = JSON.parse(readFileSync(f, 'utf8')) as CpuProfile;
    profiled += (p.endTime - p.startTime) / 1000;
    const byId = new Map(p.nodes.map((n) => [n.id, n]));
    const parent = new Map<number, number>();
    for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
    const self = new Map<number, number>();
    for (let i = 0; i < p.samples.length; i++) {
      // timeDeltas[i] is the time before sample i; attribute the interval after a sample to it
      const dt = (p.timeDeltas[i + 1] ?? p.timeDeltas[i] ?? 0) / 1000;
      const id = p.samples[i]!;
      self.set(id, (self.get(id) ?? 0) + dt);
    }
    for (const [id, ms] of self) {
      const n = byId.get(id);
      if (!n) continue;
      total += ms;
      const c = category(n.callFrame);
      cat.set(c, (cat.get(c) ?? 0) + ms);
      const fileKey = n.callFrame.url ? shortUrl(n.callFrame.url) : '(native)';
      file.set(fileKey, (file.get(fileKey) ?? 0) + ms);
      const fnKey =
        `${n.callFrame.functionName || '(anonymous)'}  ${n.callFrame.url ? `${shortUrl(n.callFrame.url)}:${n.callFrame.lineNumber + 1}` : ''}`.trim();
      fn.set(fnKey, (fn.get(fnKey) ?? 0) + ms);
      // inclusive: every distinct project function (and a few loader entry points) on the stack
      const seen = new Set<string>();
      for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
        const fr = byId.get(cur)!.callFrame;
        const s = shortUrl(fr.url);
        let key: string | null = null;
        if (fr.url.startsWith(rootUrl) && !s.includes('node_modules/')) key = `${fr.functionName || '(top-level)'}  ${s}:${fr.lineNumber + 1}`;
        else if (s.includes('node_modules/')) key = `(dependency) ${s.split('node_modules/')[1]!.split('/')[0]}`;
        else if (
          fr.url.startsWith('node:internal/modules/') &&
          /^(import|link|instantiate|compileSourceTextModule|loadESMFromCJS|moduleStrategy|#?link)$/i.test(fr.functionName)
        )
          key = `(Node loader) ${fr.functionName}`;
        if (key !== null && !seen.has(key)) {
          seen.add(key);
          incl.set(key, (incl.get(key) ?? 0) + ms);
        }
      }
    }
  }
  const n = Math.max(1, files.length);
  const list = (m: Map<string, number>, limit: number) =>
    [...m]
      .sort((a, b) => b[1] - a[1])
      .slice(0, limit)
      .map(([key, ms]) => ({ key, ms: ms / n, share: total ? ms / total : 0 }));
  return {
    profiles: files.length,
    profiledMs: profiled / n,
    byCategory: list(cat, 20),
    byFile: list(file, 12),
    byFunction: list(fn, 15),
    inclusive: list(incl, 15),
  };
}
