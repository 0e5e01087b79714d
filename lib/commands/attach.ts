import { loadAdapter } from '../agents/index.js';
import { SubagentError } from '../base/errors.js';
import { findOnPath } from '../proc/path.js';
import { validateName } from '../registry/names.js';
import type { Outcome, Reason, Usage } from '../registry/record.js';
import { createRun, latestRun } from '../registry/store.js';
import { superviseAttached } from '../supervisor/attach.js';
import { callerOf, inRegistryOf, placeOf, type Context } from './context.js';
import { newRecord, storeEnvOf } from './launch.js';
import { busy, resumableRun } from './resume.js';

export interface AttachOptions extends Context {
  name: string | undefined;
  /** The file descriptor of the person's terminal the CLI draws on (default 1, stdout); its keys come on stdin. */
  screen?: number | undefined;
}

/** What subagent-attach prints once the person left the session (docs/schemas/attach.schema.json). */
export interface AttachResult {
  ok: true;
  registry: string;
  name: string;
  /** The run the person's turn was recorded as. */
  run: number;
  sessionId: string | null;
  cli: string;
  outcome: Outcome | null;
  reason: Reason | null;
  exitCode: number | null;
  error: string | null;
  usage: Usage | null;
  toolUses: number;
}

/** What the prompt file of an attached run says: its prompts are the person's, in its transcript. */
const ATTACHED_PROMPT = "[subagent-attach: a person's turn in the session, in their terminal; what they typed is in the transcript]\n";

/**
 * subagent-attach (docs/attach.md): the person steps into the latest run's session with the CLI's own
 * interactive mode, in their terminal, in the run's directory; the name is held meanwhile (the run is
 * `running`: a resume is E_AGENT_BUSY); when they leave, what they did is the name's next run.
 */
export async function attach(o: AttachOptions): Promise<AttachResult> {
  const { env, cwd: callerCwd } = callerOf(o);
  const name = validateName(o.name);
  const place = placeOf(o, 'write');
  const { registry } = place;
  return inRegistryOf(registry, async () => {
    const last = resumableRun({}, { registry, name, callerCwd });
    const adapter = await loadAdapter(last.cli);
    if (!adapter.interactive) {
      throw new SubagentError('E_ARG_UNSUPPORTED', `attach steps into the CLI's own interactive session; ${last.cli} runs have none we drive`, {
        name,
        cli: last.cli,
        hint: 'attach knows Claude Code (claude --resume), Codex (codex resume), Gemini CLI (gemini --resume), Qwen Code (qwen --resume), Copilot CLI (copilot --resume) and OpenCode (opencode --session); resume-subagent continues any run',
      });
    }
    if (!last.sessionId) {
      throw new SubagentError('E_SESSION_NOT_FOUND', `"${name}" has no session to step into (run ${last.run} never reported one)`, {
        name,
        run: last.run,
        hint: 'the earlier run probably failed before the agent opened a session; start a new name instead',
      });
    }
    const launch = adapter.interactive.launch({ sessionId: last.sessionId, cwd: last.cwd, model: last.model, agent: last.agent });
    if (!findOnPath(launch.command, env)) {
      throw new SubagentError('E_CMD_MISSING', `the ${last.cli} CLI ("${launch.command}") is not on PATH`, {
        cli: last.cli,
        program: launch.command,
        hint: 'install it, or put it on PATH',
      });
    }
    const prompt = Buffer.from(ATTACHED_PROMPT);
    const record = newRecord({
      name,
      run: last.run + 1,
      cli: last.cli,
      cwd: last.cwd,
      model: last.model,
      variant: last.variant,
      agent: last.agent,
      files: [],
      extraArgs: [],
      sessionId: last.sessionId,
      parent: last.parent,
      depth: last.depth,
      worktree: last.worktree,
      promptBytes: prompt.length,
      storeEnv: { ...storeEnvOf(adapter, env), ...last.storeEnv },
      attached: true,
      // A person's session is not watched for stalls (they may read for an hour), has no hook and no cap.
      stallAfterSec: null,
      stallAction: 'none',
      onEnd: null,
      hookTimeoutSec: last.hookTimeoutSec,
      cancelGraceMs: last.cancelGraceMs,
      keepChildren: false,
    });
    const published = createRun(registry, name, record, prompt);
    if (published === null) throw busy(name, latestRun(registry, name) ?? last.run + 1, false, true);
    published.assertDurable();
    place.adopt();
    const done = await superviseAttached(registry, published.dir, record, adapter, launch, o.screen ?? 1);
    return {
      ok: true,
      registry,
      name,
      run: done.run,
      sessionId: done.sessionId,
      cli: done.cli,
      outcome: done.outcome,
      reason: done.reason,
      exitCode: done.exitCode,
      error: done.error,
      usage: done.usage,
      toolUses: done.toolUses,
    };
  });
}
