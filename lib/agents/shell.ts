import type { AgentAdapter, AgentRun, Exit, Message, RunOptions, Verdict } from './types.js';
import { emptyState } from './shared/stream.js';
import { nowIso } from '../base/time.js';

/**
 * The built-in `shell` CLI: the prompt is a script for /bin/sh, fed on stdin, run in --cwd. Its stdout is
 * the assistant text. There is no session: a resume runs a new script in the same cwd. The transcript
 * of a shell run is read straight from the event log (see lib/runs/transcript.ts); a run only marks
 * activity and gives `result --follow` its lines.
 */
export const shell: AgentAdapter = {
  cli: 'shell',
  program: '/bin/sh',
  supports: { model: false, variant: false, agent: false, files: false },
  // A script reports no usage: nothing to cap.
  caps: { cost: null, tokens: null, turns: null },
  gracefulSignal: 'SIGTERM',
  stream: 'text',
  storeEnvKeys: [],
  chooseSessionId: () => null,
  launch: (input) => ({ command: '/bin/sh', args: ['-s', '--', ...input.extraArgs], env: {} }),
  open: (run) => new ShellRun(run),
};

class ShellRun implements AgentRun {
  readonly state = emptyState();
  private readonly onMessage: ((m: Message) => void) | undefined;

  constructor(run: RunOptions = {}) {
    this.onMessage = run.onMessage;
  }

  line(text: string): void {
    this.state.lastActivityAt = nowIso();
    this.onMessage?.({ role: 'assistant', text });
  }

  end(): void {}

  verdict(exit: Exit): Verdict {
    if (exit.code === 0) return { outcome: 'succeeded', error: null, reason: null };
    if (exit.signal) return { outcome: 'failed', error: `the script was killed by ${exit.signal}`, reason: 'crashed' };
    return { outcome: 'failed', error: `the script exited with status ${exit.code}`, reason: 'exit-code' };
  }
}
