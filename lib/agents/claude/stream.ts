import type { RunOptions } from '../types.js';
import { StreamJsonRun } from '../shared/stream-json.js';

/**
 * Claude Code's `--output-format stream-json --verbose` stream, which is also the format of its
 * transcripts on disk: the stream-json family's own (lib/agents/shared/stream-json.ts), read with its
 * defaults — Claude's tools are those defaults (`Bash`, `Agent`/`Task`), and its result lines count the run.
 */
export function openRun(run: RunOptions = {}): StreamJsonRun {
  return new StreamJsonRun(run, { cli: 'claude' });
}

/** A sub-agent's own transcript in Claude's store: every message is the child's. */
export function openChildTranscript(childId: string, onMessage: RunOptions['onMessage']): StreamJsonRun {
  return new StreamJsonRun({ onMessage }, { cli: 'claude', childId });
}
