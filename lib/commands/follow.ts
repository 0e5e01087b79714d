import { join } from 'node:path';
import { loadAdapter } from '../agents/index.js';
import type { Message } from '../agents/types.js';
import { SubagentError } from '../base/errors.js';
import { LineFollower } from '../base/lines.js';
import { jsonLine } from '../base/json-line.js';
import { isTerminal, observeRun } from '../runs/observe.js';
import { FILES } from '../registry/store.js';
import { waitFor } from '../base/wait.js';
import { timeoutMs } from './settings.js';
import { requireLatest } from '../runs/observe.js';
import { logEnd, openRunOf } from '../runs/transcript.js';
import { validateName } from '../registry/names.js';
import { inRegistryOf, placeOf, type Context } from './context.js';
import { result, type RunAnswer } from './result.js';

export interface FollowOptions extends Context {
  name: string | undefined;
  /** NDJSON throughout: one {"type":"message",…} line per transcript message. */
  json?: boolean | undefined;
  /** Stop following after this many seconds (E_WAIT_TIMEOUT); undefined or 0: until the run ends. */
  timeoutSec?: number | undefined;
  /** Where the lines go (the verb passes stdout). */
  write: (text: string) => void;
}

export interface FollowLine {
  type: 'message';
  run: number;
  index: number;
  line?: number;
  role: Message['role'];
  text: string;
  tool?: Message['tool'];
  childId?: string;
}

/** One line of the human view: the text itself, or one line per tool call. */
export function humanLine(m: Message): string {
  if (m.role === 'tool') return `[tool] ${m.text.replace(/\s*\n\s*/g, ' ⏎ ').slice(0, 300)}\n`;
  return m.text.endsWith('\n') ? m.text : m.text + '\n';
}

/**
 * result --follow: stream the latest run's transcript as it grows (also from `scheduled`, before the
 * agent exists) and end with the run, the last line being the usual result JSON. Woken by inotify on
 * the run directory, with a short backstop for the run's end and for filesystems without events.
 */
export async function follow(o: FollowOptions): Promise<RunAnswer> {
  const name = validateName(o.name);
  // No environment default: following lasts until the run ends unless asked otherwise.
  const limitMs = o.timeoutSec === undefined ? null : timeoutMs(o.timeoutSec);
  const { registry } = placeOf(o);
  return inRegistryOf(registry, () => followIn(registry, name, limitMs, o));
}

async function followIn(registry: string, asked: string, limitMs: number | null, o: FollowOptions): Promise<RunAnswer> {
  const start = requireLatest(registry, asked);
  const { dir, record } = start;
  const adapter = await loadAdapter(record.cli);
  // Numbered as search numbers them: for a text stream (shell) the output is one message, by line.
  let index = 0;
  let line = 0;
  const text = adapter.stream === 'text';
  const emit = (m: Message) => {
    if (text) {
      index = 1;
      line++;
    } else index++;
    if (o.json) {
      const event: FollowLine = {
        type: 'message',
        run: record.run,
        index,
        ...(text ? { line } : {}),
        role: m.role,
        text: m.text,
        ...(m.tool ? { tool: m.tool } : {}),
        ...(m.childId ? { childId: m.childId } : {}),
      };
      o.write(jsonLine(event));
    } else o.write(humanLine(m));
  };
  const run = openRunOf(adapter, record, { onMessage: emit });
  const follower = new LineFollower(join(dir, FILES.events), (l) => run.line(l));
  const { timedOut } = await waitFor({
    dirs: () => [dir],
    check: () => {
      const now = observeRun(dir);
      const ended = isTerminal(now.status);
      // A done run's log ends where it stood at its end (docs/states.md).
      if (ended) follower.limit = logEnd(now.record);
      follower.poll();
      return { done: ended, value: null };
    },
    timeoutMs: limitMs,
    // A short backstop for the run's end (no event of the run directory need announce it), shorter still
    // where the directory cannot be watched.
    backstopMs: 500,
    unwatchedMs: 100,
  });
  if (timedOut) {
    throw new SubagentError('E_WAIT_TIMEOUT', `stopped following "${record.name}" after ${(limitMs ?? 0) / 1000} s; it is still going`, {
      name: record.name,
      hint: 'follow again, or raise --timeout (0 follows until the run ends)',
    });
  }
  follower.flush();
  run.end();
  return result({ name: record.name, run: record.run, registry, env: o.env, cwd: o.cwd });
}
