import { MessageChannel, receiveMessageOnPort, Worker, type MessagePort } from 'node:worker_threads';
import { testMatcherStartMs } from './checkpoint.js';
import { SubagentError } from './errors.js';
import { monotonicMs } from './time.js';

/**
 * Regular-expression matching bounded in time. JavaScript's regexes backtrack: `(a+)+$` against a
 * long run of `a` followed by `b` takes longer than the universe, and no JS code gets to run while one
 * `exec` is busy. So matching runs in a worker thread while this thread waits on it with a deadline
 * (Atomics.wait, synchronously: the texts come from synchronous readers, batch by batch); past the
 * deadline the worker is terminated and the search fails with E_PATTERN_TIMEOUT.
 *
 * A pattern that cannot backtrack (`cannotBacktrack`: literals, classes, anchors, top-level `|`) may be
 * matched in this thread instead: the fast path `plain-pattern` (lib/base/fast-paths.ts), which saves
 * the worker's start-up.
 */
export interface Found {
  /** Which of the texts given to `scan`. */
  text: number;
  index: number;
  length: number;
}

export interface Scan {
  /** The first `want` matches, in order. */
  found: Found[];
  /** Every match. */
  total: number;
}

/** Every match of `re` (a `g` regex) in `texts`; the first `want` of them with where they are. */
function scanTexts(re: RegExp, texts: string[], want: number): Scan {
  const found: Found[] = [];
  let total = 0;
  texts.forEach((text, i) => {
    re.lastIndex = 0;
    for (let m = re.exec(text); m !== null; m = re.exec(text)) {
      total++;
      if (found.length < want) found.push({ text: i, index: m.index, length: m[0].length });
      if (m[0].length === 0) re.lastIndex++;
    }
  });
  return { found, total };
}

/** The slot of the shared flag the worker sets once it is up (slot 0: a reply is there). */
const READY = 1;
/**
 * How long the worker may take to start. Its start-up is not matching, so it is not in the bound: on a
 * loaded machine a new thread can take seconds to be up, and a simple pattern failed the 10 s bound so.
 */
const START_BOUND_MS = 120_000;

/** The worker's program: the same loop as scanTexts (given as source, so that the bundled verb needs no second file). */
const WORKER_SOURCE = `
const { workerData } = require('node:worker_threads');
const { port, flag, pattern, flags, startMs } = workerData;
if (startMs > 0) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, startMs);
const re = new RegExp(pattern, flags);
const scanTexts = ${scanTexts.toString()};
port.on('message', (m) => {
  port.postMessage(scanTexts(re, m.texts, m.want));
  Atomics.store(flag, 0, 1);
  Atomics.notify(flag, 0);
});
Atomics.store(flag, ${READY}, 1);
Atomics.notify(flag, ${READY});
`;

/**
 * Whether matching `pattern` takes time linear in the text (times the pattern's length): nothing in it
 * can be backtracked into — no quantifier, no group (alternatives inside groups multiply), no
 * back-reference; literals, escapes, classes, anchors and top-level `|` only ("error|fail").
 */
export function cannotBacktrack(pattern: string): boolean {
  if (/\\[1-9k]/.test(pattern.replace(/\\\\/g, ''))) return false;
  const bare = pattern.replace(/\\./g, 'x').replace(/\[[^\]]*\]/g, 'x');
  return !/[*+?{(]/.test(bare);
}

export class BoundedMatcher {
  private readonly re: RegExp | null;
  private worker: Worker | null = null;
  private port: MessagePort | null = null;
  private readonly flag = new Int32Array(new SharedArrayBuffer(8));
  /** Time spent waiting on the worker's matching so far: the bound is on matching, not on reading the texts or the worker's start. */
  private spent = 0;

  /**
   * `inThread`: match here (only for patterns that cannot backtrack; the caller decides). The worker,
   * when there is one, starts now, so that its start-up overlaps the caller's reading.
   */
  constructor(
    readonly pattern: string,
    flags: string,
    private readonly boundMs: number,
    inThread: boolean,
  ) {
    if (inThread) {
      this.re = new RegExp(pattern, flags);
      return;
    }
    this.re = null;
    const { port1, port2 } = new MessageChannel();
    this.port = port1;
    this.worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: { port: port2, flag: this.flag, pattern, flags, startMs: testMatcherStartMs },
      transferList: [port2],
    });
    this.worker.unref();
  }

  /** The matches in `texts` (the first `want` with where they are); E_PATTERN_TIMEOUT past the bound. */
  scan(texts: string[], want: number): Scan {
    if (this.re) return scanTexts(this.re, texts, want);
    if (Atomics.wait(this.flag, READY, 0, START_BOUND_MS) === 'timed-out') {
      this.close();
      throw new SubagentError('E_PATTERN_TIMEOUT', `the thread that matches --pattern did not start within ${START_BOUND_MS / 1000} s; nothing was matched`, {
        pattern: this.pattern,
        timeoutSec: this.boundMs / 1000,
        hint: 'the machine is overloaded: try again when it is less busy',
      });
    }
    Atomics.store(this.flag, 0, 0);
    this.port!.postMessage({ texts, want });
    const from = monotonicMs();
    const woke = Atomics.wait(this.flag, 0, 0, Math.max(0, this.boundMs - this.spent));
    this.spent += monotonicMs() - from;
    const reply = woke === 'timed-out' ? undefined : receiveMessageOnPort(this.port!);
    if (!reply) {
      this.close();
      throw new SubagentError('E_PATTERN_TIMEOUT', `--pattern took longer than ${this.boundMs / 1000} s to match; it was stopped`, {
        pattern: this.pattern,
        timeoutSec: this.boundMs / 1000,
        hint: 'a pattern with nested repetition such as (a+)+ can take exponential time: simplify it (e.g. a+ instead of (a+)+), anchor it, or raise SUBAGENT_SEARCH_TIMEOUT_SEC',
      });
    }
    return reply.message as Scan;
  }

  close(): void {
    this.port?.close();
    void this.worker?.terminate();
    this.worker = null;
    this.port = null;
  }
}
