import { obj, parseObject, str } from '../../base/json.js';
import { attachedRun } from '../shared/attached.js';
import type { AgentRun, Exit, Interactive, InteractiveInput, Launch, RunOptions, SessionQuery, StreamState, Verdict } from '../types.js';
import { sessionLog } from './store.js';
import { CopilotRun } from './stream.js';
import { UsageSum } from './usage.js';

/**
 * GitHub Copilot CLI's interactive mode on a session, for subagent-attach (docs/attach.md): `copilot
 * --resume <id>` in the person's terminal (measured with 1.0.102). What happens there is appended to the
 * session's log, `session-state/<id>/events.jsonl` of its store, in the events its runs' reader reads
 * (stream.ts): the person's prompts are its `user.message` events of the session itself (no `agentId`),
 * each model call a `session.usage_record` (usage.ts).
 */

function launch(input: InteractiveInput): Launch {
  const args = ['--resume', input.sessionId];
  if (input.model) args.push('--model', input.model);
  if (input.agent) args.push('--agent', input.agent);
  return { command: 'copilot', args, env: {} };
}

function sessionFile(q: SessionQuery): string | null {
  return sessionLog(q.storeEnv, q.sessionId);
}

/** A prompt the person typed: a `user.message` of the session itself (a sub-agent's carries its agentId). */
function promptOf(line: string): string | null {
  if (!line.includes('"user.message"')) return null;
  const o = parseObject(line);
  if (o?.type !== 'user.message' || o.agentId !== undefined) return null;
  const text = str(obj(o.data)?.content);
  return text?.trim() ? text : null;
}

/** The runs' reader over the session's log, with the usage of the log's records (a run's comes from its store as it goes). */
class SessionLogRun implements AgentRun {
  private readonly run: CopilotRun;
  private readonly sum = new UsageSum();

  constructor(run: RunOptions) {
    this.run = new CopilotRun(run);
  }

  get state(): StreamState {
    return this.run.state;
  }

  line(text: string): void {
    this.run.line(text);
    if (this.sum.add(text)) this.run.state.usage = this.sum.usage();
  }

  end(): void {
    this.run.end();
  }

  verdict(exit: Exit): Verdict {
    return this.run.verdict(exit);
  }
}

export const copilotInteractive: Interactive = {
  launch,
  sessionFile,
  open: (run = {}) => attachedRun('copilot', run, promptOf, (r) => new SessionLogRun(r)),
};
