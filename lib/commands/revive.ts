import { fileSize } from '../base/lines.js';
import { join } from 'node:path';
import { readRegular } from '../base/regular.js';
import { SubagentError } from '../base/errors.js';
import { validateName } from '../registry/names.js';
import { FILES, latestRun, runDir } from '../registry/store.js';
import { observeLatest, type Observation } from '../runs/observe.js';
import { callerOf, inRegistryOf, placeOf, trustOfPlace, type Context } from './context.js';
import type { StartResult } from './launch.js';
import { listedNames } from './listing.js';
import { promptBytes } from './prompt.js';
import { resumeIn, type Revival } from './resume.js';
import { noticedEnd } from './follow-ups.js';
import { publishFollowUp } from '../supervisor/follow-up.js';
import { readSettledEnd } from '../registry/follow-ups.js';

/**
 * `resume-subagent --revive` (docs/revive.md): after a reboot or a crash, every selected run that is
 * `unknown` with its agent gone is resumed as it was started — its CLI, model, variant, agent, caps, time
 * cap, stall and hook settings, `-- ARGS`, directory, worktree and executor, nothing added — as its next
 * run: with a continuation prompt when its agent had begun, else with the run's own prompt (a session
 * that never began is opened anew, with the run's files; a `shell` run's script runs again). Opt-in only:
 * nothing revives by itself. Two revives racing revive each run once: the next run of a name is published
 * once (lib/registry/store.ts createRun); the other finds it and skips the name.
 */

/** What the agent is told when its run was cut off at work. */
export const CONTINUE_PROMPT =
  'Your previous turn was interrupted before it finished: the machine or the process running you stopped. ' +
  'Continue the task from where you left off. Check the state of any work in progress (files, commands) before you go on.';

export interface ReviveOptions extends Context {
  /** Only these names (each must exist). */
  names?: string[] | undefined;
  /** Every name under `prefix/`. */
  prefix?: string | undefined;
  /** Every name of the registry. */
  all?: boolean | undefined;
  /** The continuation prompt; default CONTINUE_PROMPT. */
  prompt?: Buffer | string | undefined;
}

/** A revived run: the resume's line, and which prompt it was given. */
export type Revived = StartResult & { prompt: 'continuation' | 'original' };

export interface ReviveResult {
  ok: true;
  registry: string;
  revived: Revived[];
  skipped: Array<{ name: string; why: string }>;
}

export async function revive(o: ReviveOptions): Promise<ReviveResult> {
  const { env, cwd: callerCwd } = callerOf(o);
  const selectors = [o.names?.length ? '--name' : null, o.prefix !== undefined ? '--prefix' : null, o.all ? '--all' : null].filter((x) => x !== null);
  if (selectors.length !== 1) {
    throw new SubagentError('E_ARG_INVALID', selectors.length ? `--revive takes one of ${selectors.join(', ')}` : '--revive needs the runs to revive', {
      hint: 'give --name NAME (repeatable), --prefix P or --all',
    });
  }
  const names = (o.names ?? []).map((n) => validateName(n));
  if (o.prefix !== undefined) validateName(o.prefix);
  const continuation = promptBytes(o.prompt ?? CONTINUE_PROMPT);
  const place = placeOf(o, 'write');
  const { registry } = place;
  return inRegistryOf(registry, async () => {
    for (const name of names) {
      if (latestRun(registry, name) === null) {
        throw new SubagentError('E_NAME_NOT_FOUND', `no run named "${name}" in ${registry}`, { name, registry, hint: 'subagent-status lists the names' });
      }
    }
    const selected = names.length ? names : listedNames(registry, o.prefix);
    const out: ReviveResult = { ok: true, registry, revived: [], skipped: [] };
    for (const name of selected) {
      const previous = observeLatest(registry, name);
      // A run whose turn had ended before its supervisor died is not revived: its queue goes on instead.
      const ended = previous ? noticedEnd(previous) : null;
      const next = ended ? await publishFollowUp(registry, ended, () => undefined) : null;
      if (next !== null) {
        out.skipped.push({ name, why: `its turn had ended before its supervisor died: its next queued prompt was started as run ${next.run}` });
        continue;
      }
      const why = previous === null ? 'it has no run' : notRevivable(previous);
      if (why !== null) {
        out.skipped.push({ name, why });
        continue;
      }
      const how = revivalOf(registry, previous!);
      try {
        const prompt = how.prompt === 'original' ? readRegular(join(previous!.dir, FILES.prompt)) : continuation;
        const started = await resumeIn(
          { name, prompt },
          {
            registry,
            name,
            prompt,
            admission: { limit: undefined, floor: undefined },
            env,
            callerCwd,
            adopt: place.adopt,
            trusted: trustOfPlace(place).trusted,
            revival: how,
          },
        );
        out.revived.push({ ...started, prompt: how.prompt });
      } catch (err) {
        if (!(err instanceof SubagentError)) throw err;
        out.skipped.push({ name, why: err.code === 'E_AGENT_BUSY' ? `revived or resumed by another call: ${err.message}` : `${err.code}: ${err.message}` });
      }
    }
    return out;
  });
}

/** Why a run is not one to revive (null: it is): only an `unknown` run whose agent is gone is. */
function notRevivable(o: Observation): string | null {
  if (o.status === 'done') return `it is done (${o.record.outcome}): resume it with a new prompt instead`;
  if (o.status !== 'unknown') return `it is ${o.status}`;
  if (o.agentAlive) return `its agent is still alive (pid ${o.record.agentProcess?.pid ?? '?'}): cancel it first, or let it finish`;
  const settled = readSettledEnd(o.dir);
  if (settled) return `its turn had ended (${settled.outcome}) before its supervisor died: resume it with a new prompt instead`;
  // A job engine that could not be asked, or a process backend that cannot compare: the run may still live.
  if (o.statusReason?.includes('may still be')) return `its state cannot be told: ${o.statusReason}`;
  return null;
}

/**
 * How a run is revived: with a continuation prompt once its agent had begun (it wrote to the event log,
 * and the CLI's session is known), else with the run's own prompt — in a session opened anew, with the
 * run's files, when no session had begun at all (a run 1, or a run that itself opened its session anew).
 */
function revivalOf(registry: string, o: Observation): Revival & { prompt: 'continuation' | 'original' } {
  const r = o.record;
  if (r.cli === 'shell') return { prompt: 'original', newSession: false, files: [] };
  const began = r.sessionId !== null && fileSize(join(runDir(registry, r.name, r.run), FILES.events)) > 0;
  if (began) return { prompt: 'continuation', newSession: false, files: [] };
  const opensSession = r.run === 1 || r.newSession;
  return { prompt: 'original', newSession: opensSession, files: opensSession ? r.files : [] };
}
