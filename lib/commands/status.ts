import { SubagentError } from '../errors.js';
import { isTerminal, observeLatest, type Observation } from '../observe.js';
import { validateName } from '../registry/names.js';
import { listNames, nameDir, runDir } from '../registry/store.js';
import type { Status } from '../registry/record.js';
import { viewOf } from '../view.js';
import { waitFor } from '../wait.js';
import { queueView, readLimit } from '../queue.js';
import { envValue, notFound, resolveRegistry, type Context } from './common.js';

export interface StatusOptions extends Context {
  names?: string[];
  wait?: boolean;
  waitTerminal?: boolean;
  /** Seconds; undefined: SUBAGENT_WAIT_TIMEOUT_SEC (default 100); 0: forever. */
  timeoutSec?: string | undefined;
}

interface Snapshot {
  observations: Map<string, Observation>;
  problems: Array<Record<string, unknown>>;
}

export const DEFAULT_WAIT_TIMEOUT_SEC = 100;

export function waitTimeoutMs(flag: string | undefined, env: NodeJS.ProcessEnv): number | null {
  const raw = flag ?? envValue(env, 'SUBAGENT_WAIT_TIMEOUT_SEC', 'OPENCODE_PSA_WAIT_TIMEOUT_SEC') ?? String(DEFAULT_WAIT_TIMEOUT_SEC);
  const sec = Number(raw);
  if (raw.trim() === '' || !Number.isFinite(sec) || sec < 0) {
    throw new SubagentError('E_ARG_INVALID', `the wait timeout "${raw}" is not a number of seconds`, {
      value: raw,
      hint: 'give seconds as a number (0 waits forever), via --timeout or SUBAGENT_WAIT_TIMEOUT_SEC',
    });
  }
  return sec === 0 ? null : sec * 1000;
}

/** subagent-status: list runs, or wait for the first change / for every named run to be terminal. */
export async function status(o: StatusOptions): Promise<Record<string, unknown>> {
  const env = o.env ?? process.env;
  const registry = resolveRegistry(o);
  const asked = [...new Set(o.names ?? [])];
  for (const n of asked) validateName(n);
  const waiting = o.wait || o.waitTerminal;
  const timeoutMs = waiting ? waitTimeoutMs(o.timeoutSec, env) : null;
  if (waiting && asked.length === 0) {
    throw new SubagentError('E_WAIT_NAME_REQUIRED', 'waiting needs the names of the runs to wait for', {
      hint: 'add --name N (repeatable)',
    });
  }
  const strict = asked.length > 0;
  const take = (): Snapshot => snapshot(registry, asked.length ? asked : listNames(registry), strict);
  if (!waiting) return output(registry, take());

  const first = take();
  for (const n of asked) if (!first.observations.has(n)) throw notFound(n, registry);
  const baseline = new Map([...first.observations].map(([n, o]) => [n, key(o)]));
  const spec = {
    dirs: () => asked.flatMap((n) => [nameDir(registry, n), ...latestDirs(registry, n, first)]),
    relevant: (file: string | null) => file === null || file === 'record.json' || /^[0-9]+$/.test(file),
    timeoutMs,
    check: () => {
      const now = take();
      first.observations = now.observations;
      const done = o.waitTerminal
        ? [...now.observations.values()].every((ob) => isTerminal(ob.status))
        : [...now.observations].some(([n, ob]) => baseline.get(n) !== key(ob));
      return { done, value: now };
    },
  };
  const { value, timedOut } = await waitFor(spec);
  const body = output(registry, value);
  if (timedOut) {
    throw new SubagentError(
      'E_WAIT_TIMEOUT',
      `timed out after ${(timeoutMs ?? 0) / 1000} s waiting for ${o.waitTerminal ? 'every run to end' : 'a change'}`,
      { registry, timeoutSec: (timeoutMs ?? 0) / 1000, hint: 'wait again, or raise --timeout / SUBAGENT_WAIT_TIMEOUT_SEC (0 waits forever)' },
      { agents: body.agents },
    );
  }
  if (o.wait) {
    body.changed = [...value.observations]
      .filter(([n, ob]) => baseline.get(n) !== key(ob))
      .map(([n, ob]) => ({
        name: n,
        previousStatus: first.observations.has(n) ? baseline.get(n)!.split(' ')[0] : null,
        status: ob.status,
        run: ob.record.run,
        exitCode: ob.record.exitCode,
        finishedAt: ob.record.finishedAt,
      }));
  }
  return body;
}

function key(o: Observation): string {
  return `${o.status satisfies Status} ${o.record.run} ${o.record.outcome}`;
}

function latestDirs(registry: string, name: string, s: Snapshot): string[] {
  const ob = s.observations.get(name);
  return ob ? [runDir(registry, name, ob.record.run)] : [];
}

function snapshot(registry: string, names: string[], strict: boolean): Snapshot {
  const observations = new Map<string, Observation>();
  const problems: Array<Record<string, unknown>> = [];
  for (const name of names) {
    try {
      const o = observeLatest(registry, name);
      if (o) observations.set(name, o);
    } catch (err) {
      if (strict || !(err instanceof SubagentError)) throw err;
      problems.push({ name, code: err.code, error: err.message, path: err.details.path ?? null });
    }
  }
  return { observations, problems };
}

function output(registry: string, s: Snapshot): Record<string, unknown> {
  const observations = [...s.observations.values()];
  const queue = observations.some((o) => o.record.queueTicket) || readLimit(registry) > 0 ? queueView(registry) : null;
  const positions = new Map(queue?.queued.map((q) => [q.dir, q.position]) ?? []);
  const agents = observations.map((o) => {
    const v = viewOf(o);
    const position = positions.get(o.dir);
    v.queued = o.status === 'scheduled' && position !== undefined;
    v.queuePosition = position ?? null;
    return v;
  });
  const body: Record<string, unknown> = { ok: true, registry, agents };
  if (queue) body.queue = { limit: queue.limit || null, running: queue.running.length, queued: queue.queued.length };
  if (s.problems.length) body.problems = s.problems;
  return body;
}
