import type { AgentAdapter, Message, StreamParser } from './types.js';
import { emptyState } from './types.js';
import { nowIso } from '../base/time.js';

/**
 * The built-in `shell` CLI: the prompt is a script for /bin/sh, fed on stdin, run in --cwd. Its stdout is
 * the assistant text. There is no session: a resume runs a new script in the same cwd. The transcript
 * of a shell run is read straight from the event log (see lib/runs/transcript.ts), not through a parser.
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
  parser(onMessage?: (m: Message) => void): StreamParser {
    const state = emptyState();
    return {
      state,
      line(text: string) {
        state.lastActivityAt = nowIso();
        onMessage?.({ role: 'assistant', text });
      },
    };
  },
  verdict(exit) {
    if (exit.code === 0) return { outcome: 'succeeded', error: null, reason: null };
    if (exit.signal) return { outcome: 'failed', error: `the script was killed by ${exit.signal}`, reason: 'crashed' };
    return { outcome: 'failed', error: `the script exited with status ${exit.code}`, reason: 'exit-code' };
  },
};
