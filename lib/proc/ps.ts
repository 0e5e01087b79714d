import { readFileSync } from 'node:fs';
import { freemem } from 'node:os';
import { SubagentError } from '../base/errors.js';
import type { ProcBackend, ProcCpu, ProcMemory, ProcStat, ProcessIdentity } from './types.js';
import { childProcess } from './child-process.js';
import { epochStartTime, readStartTime } from './start-time.js';

/**
 * The portable backend (macOS, the BSDs; SUBAGENT_PROC_BACKEND=ps on Linux): one `ps -A` snapshot,
 * from the `ps` found on PATH, with LC_ALL=C and TZ=UTC so that `lstart` reads the same everywhere.
 * Only keywords that procps-ng, macOS and the BSDs all have: pid, ppid, pgid, stat, lstart, comm (last:
 * it may hold spaces). Each keyword has an empty header (`pid=`), so no header line is printed; `-ww`
 * keeps a narrow terminal or COLUMNS from cutting lines.
 *
 * What it cannot know, and what that costs (docs/platforms.md):
 * - start times to the second only: a pid reused within the same second as the recorded process
 *   would pass for it;
 * - no environments: the run marker (SUBAGENT_RUN_ID) cannot be searched, so processes that left the
 *   run's tree (re-parented away) are not found, and the backend has no `marked`. Matching the marker in
 *   `ps e` output is not an option: a process whose arguments merely contain the marker text would be
 *   taken for one of the run's;
 * - start times the Linux backend recorded (clock ticks since boot) cannot be compared: such an
 *   identity is `unchecked`, never taken for alive or dead.
 */
const FIELDS = ['pid', 'ppid', 'pgid', 'stat', 'lstart', 'comm'];
export const PS_ARGS = ['-A', '-ww', ...FIELDS.flatMap((f) => ['-o', `${f}=`])];

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/**
 * One row: pid, ppid, pgid, stat, then lstart as ctime(3) prints it in the C locale ("Tue Nov  4
 * 16:59:49 2026", UTC here) or "-" (BSD ps, for a process without a start time: a zombie), then comm.
 */
const ROW = /^\s*(\d+)\s+(\d+)\s+(\d+)\s+(\S+)\s+(?:[A-Z][a-z]{2} ([A-Z][a-z]{2}) +(\d{1,2}) (\d\d):(\d\d):(\d\d) (\d{4})|-)(?:\s+(.*))?$/;

/** Start time for a row ps showed without one; foreign to readStartTime, so never compared. */
const NO_START = 'none';

/**
 * The rows of `ps -o pid=,ppid=,pgid=,stat=,lstart=,comm=` output. A line that is not a row is skipped
 * (it cannot be one: a comm holding a line break continues on a line of its own, but comm is at most
 * 15–19 bytes, too short to forge a row, and procps prints control characters as "?").
 */
export function parsePs(text: string): ProcStat[] {
  const out: ProcStat[] = [];
  for (const line of text.split('\n')) {
    const m = ROW.exec(line);
    if (!m) continue;
    const month = MONTHS.indexOf(m[5] ?? '');
    let startTime = NO_START;
    if (m[5] !== undefined) {
      if (month === -1) continue;
      startTime = epochStartTime(Date.UTC(Number(m[10]), month, Number(m[6]), Number(m[7]), Number(m[8]), Number(m[9])) / 1000);
    }
    out.push({ pid: Number(m[1]), ppid: Number(m[2]), pgid: Number(m[3]), state: m[4]!, startTime, comm: (m[11] ?? '').trimEnd() });
  }
  return out;
}

const isZombie = (p: ProcStat): boolean => p.state.startsWith('Z');

export interface Snapshot {
  byPid: Map<number, ProcStat>;
  /**
   * ps's own start, in the same seconds as every other row: a process that started before it and was
   * alive is in the snapshot. -Infinity without ps's own row (which look() refuses as unreadable output).
   */
  since: number;
}

export function snapshotOf(text: string, psPid: number | undefined): Snapshot {
  const byPid = new Map<number, ProcStat>();
  for (const p of parsePs(text)) byPid.set(p.pid, p);
  const own = psPid === undefined ? undefined : readStartTime(byPid.get(psPid)?.startTime ?? '');
  return { byPid, since: own?.clock === 'epoch' ? own.seconds : -Infinity };
}

function unavailable(message: string, program: 'ps' | 'sysctl'): SubagentError {
  return new SubagentError('E_PROC_UNAVAILABLE', message, {
    program,
    hint:
      program === 'ps'
        ? 'the ps process backend runs the ps found on PATH: install it or fix PATH (on Linux, unset SUBAGENT_PROC_BACKEND to read /proc instead)'
        : 'the ps process backend tells boots apart with sysctl kern.bootsessionuuid or kern.boottime: put sysctl on PATH',
  });
}

/**
 * The view of the processes is kept for one synchronous pass: a `status` listing of many runs asks
 * `ps` once, not once per run. It is dropped at the next microtask checkpoint (when the code that took
 * it yields: an await, or the end of the current event-loop task), and by lookAgain(), which
 * synchronous polling loops (the lock's) and signal sends call. Answers from a kept view are held to
 * this rule, so that a kept view never invents a death:
 * - "alive" is taken from it (as from /proc, a process may die right after it was seen);
 * - "dead" is taken from it only for a process that started before ps did (its start time is earlier
 *   than `since`): that one would be in the view had it been alive. A process that may have started
 *   after the view (a supervisor spawned a moment ago) gets a new look before it is called dead;
 * - identityOf and processes always take a new look: they record or signal what they find.
 */
let kept: Snapshot | null = null;

/** Runs the ps on PATH with `args`; its output, and its own pid. */
function runPs(args: string[]): { stdout: string; pid: number } {
  const r = childProcess().spawnSync('ps', args, {
    encoding: 'utf8',
    // Only what ps needs: PS_FORMAT, PS_PERSONALITY or COLUMNS in the caller's environment would change
    // its output, and the run marker has no business in it.
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', LC_ALL: 'C', TZ: 'UTC' },
    stdio: ['ignore', 'pipe', 'pipe'],
    maxBuffer: 256 * 1024 * 1024,
  });
  if (r.error) {
    const code = (r.error as NodeJS.ErrnoException).code;
    throw unavailable(code === 'ENOENT' ? 'ps is not on PATH' : `cannot run ps: ${code ?? r.error.message}`, 'ps');
  }
  if (r.status !== 0) throw unavailable(`ps failed (exit ${r.status ?? r.signal}): ${r.stderr.trim().slice(0, 300)}`, 'ps');
  return { stdout: r.stdout, pid: r.pid };
}

function look(): Snapshot {
  const r = runPs(PS_ARGS);
  const snapshot = snapshotOf(r.stdout, r.pid);
  // ps lists itself: without its own row the output is not in the form parsePs reads, and every process
  // would look gone.
  if (!snapshot.byPid.has(r.pid)) throw unavailable(`cannot read the output of ps (no row for ps itself): ${JSON.stringify(r.stdout.slice(0, 200))}`, 'ps');
  kept = snapshot;
  queueMicrotask(() => {
    if (kept === snapshot) kept = null;
  });
  return snapshot;
}

/**
 * `time` is the CPU time a process used (user + system; not its dead children's: BSD `-S` and procps `S`
 * differ), as `[[dd-]hh:]mm:ss` (procps, whole seconds) or `[hh:]mm:ss.cc` (macOS, the BSDs).
 */
export const PS_CPU_ARGS = ['-A', '-o', 'pid=', '-o', 'ppid=', '-o', 'time='];

/** Seconds of a `time` field in either form, in ms; null when it is not one. */
export function cpuMsOf(time: string): number | null {
  const m = /^(?:(\d+)-)?(?:(\d+):)?(\d+):(\d+(?:\.\d+)?)$/.exec(time);
  if (!m) return null;
  return ((Number(m[1] ?? 0) * 24 + Number(m[2] ?? 0)) * 3600 + Number(m[3]) * 60 + Number(m[4])) * 1000;
}

/** The rows of `ps -A -o pid=,ppid=,time=` output; a line that is not a row is skipped. */
export function parsePsCpu(text: string): ProcCpu[] {
  const out: ProcCpu[] = [];
  for (const line of text.split('\n')) {
    const m = /^\s*(\d+)\s+(\d+)\s+(\S+)\s*$/.exec(line);
    const cpuMs = m ? cpuMsOf(m[3]!) : null;
    if (m && cpuMs !== null) out.push({ pid: Number(m[1]), ppid: Number(m[2]), cpuMs });
  }
  return out;
}

/** `rss` is the resident set size in KiB, in procps, macOS and the BSDs alike. */
export const PS_MEMORY_ARGS = ['-A', '-o', 'pid=', '-o', 'ppid=', '-o', 'rss='];

/** The rows of `ps -A -o pid=,ppid=,rss=` output; a line that is not a row is skipped. */
export function parsePsMemory(text: string): ProcMemory[] {
  const out: ProcMemory[] = [];
  for (const line of text.split('\n')) {
    const m = /^\s*(\d+)\s+(\d+)\s+(\d+)\s*$/.exec(line);
    if (m) out.push({ pid: Number(m[1]), ppid: Number(m[2]), rssBytes: Number(m[3]) * 1024 });
  }
  return out;
}

/**
 * What macOS has available, from `vm_stat` output: free and inactive pages (vm_stat's "Pages free" already
 * leaves out the speculative ones), as psutil counts `available` there; null when the output is not vm_stat's.
 */
export function parseVmStat(text: string): number | null {
  const page = /page size of (\d+) bytes/.exec(text);
  const pages = (label: string): number | null => {
    const m = new RegExp(`^${label}:\\s+(\\d+)\\.?$`, 'm').exec(text);
    return m ? Number(m[1]) : null;
  };
  const free = pages('Pages free');
  const inactive = pages('Pages inactive');
  if (!page || free === null || inactive === null) return null;
  return (free + inactive) * Number(page[1]);
}

/** macOS: vm_stat; elsewhere libuv's answer (os.freemem(): MemAvailable on Linux, free pages on the BSDs). */
function availableMemory(): number | null {
  if (process.platform !== 'darwin') return freemem();
  for (const program of ['vm_stat', '/usr/bin/vm_stat']) {
    const r = childProcess().spawnSync(program, [], {
      encoding: 'utf8',
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', LC_ALL: 'C' },
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    if ((r.error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT') continue;
    return r.status === 0 ? parseVmStat(r.stdout) : null;
  }
  return freemem();
}

function judge(view: Snapshot, id: ProcessIdentity): 'alive' | 'dead' | 'unchecked' {
  const p = view.byPid.get(id.pid);
  if (!p || isZombie(p)) return 'dead';
  if (readStartTime(id.startTime).clock !== 'epoch' || p.startTime === NO_START) return 'unchecked';
  return p.startTime === id.startTime ? 'alive' : 'dead';
}

function sysctl(name: string): string | null {
  for (const program of ['sysctl', '/usr/sbin/sysctl', '/sbin/sysctl']) {
    const r = childProcess().spawnSync(program, ['-n', name], {
      encoding: 'utf8',
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', LC_ALL: 'C' },
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    if ((r.error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT') continue;
    const out = r.status === 0 ? r.stdout.trim() : '';
    return out === '' ? null : out;
  }
  return null;
}

let cachedBootId: string | undefined;

/**
 * Linux's boot_id when it can be read; else macOS's kern.bootsessionuuid; else the boot time
 * (kern.boottime, "{ sec = 1718000000, usec = … }" on macOS and FreeBSD), which a step of the clock
 * moves on the BSDs — then every run looks like one of another boot (unknown), never the reverse.
 */
function bootId(): string {
  cachedBootId ??= readBootId();
  return cachedBootId;
}

function readBootId(): string {
  try {
    return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
  } catch {
    /* not Linux */
  }
  const uuid = sysctl('kern.bootsessionuuid');
  if (uuid) return uuid;
  const time = sysctl('kern.boottime');
  if (time) return `boottime:${/\bsec = (\d+)/.exec(time)?.[1] ?? time}`;
  throw unavailable(
    'cannot tell this boot from another: no /proc/sys/kernel/random/boot_id, and sysctl gives neither kern.bootsessionuuid nor kern.boottime',
    'sysctl',
  );
}

export const ps: ProcBackend = {
  name: 'ps',
  bootId,
  identityOf(pid) {
    const p = look().byPid.get(pid);
    return !p || isZombie(p) ? null : { pid, startTime: p.startTime, bootId: bootId() };
  },
  liveness(id) {
    const recorded = readStartTime(id.startTime);
    if (recorded.clock === 'gone') return 'dead';
    const view = kept;
    if (view === null) return judge(look(), id);
    const verdict = judge(view, id);
    if (verdict !== 'dead' || (recorded.clock === 'epoch' && recorded.seconds < view.since)) return verdict;
    return judge(look(), id);
  },
  processes() {
    return [...look().byPid.values()].filter((p) => !isZombie(p));
  },
  cpuTimes() {
    return parsePsCpu(runPs(PS_CPU_ARGS).stdout);
  },
  memory() {
    return parsePsMemory(runPs(PS_MEMORY_ARGS).stdout);
  },
  availableMemory,
  forget() {
    kept = null;
  },
};
