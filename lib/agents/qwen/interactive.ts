import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { listDir } from '../../base/dir.js';
import { fields, num, str, type JsonObject } from '../../base/json.js';
import type { Usage } from '../../registry/record.js';
import { attachedRun, StoreTurnRun } from '../shared/attached.js';
import { addUsage } from '../shared/stream.js';
import type { Interactive, InteractiveInput, Launch, SessionQuery } from '../types.js';
import { projectDirName, qwenRuntimeDir } from './store.js';
import { transcriptReader, type TranscriptReader } from './transcript.js';

/**
 * Qwen Code's interactive mode on a session, for subagent-attach (docs/attach.md): `qwen --resume <id>` in
 * the person's terminal (measured with 0.24.4). It appends to the session's chat recording,
 * `projects/<project>/chats/<id>.jsonl` (transcript.ts reads its format): the person's prompts are its
 * `user` records, each model response an `assistant` record with its own `usageMetadata`.
 */

const SAFE_ID = /^[A-Za-z0-9_-]{1,200}$/;

function launch(input: InteractiveInput): Launch {
  // --chat-recording as for a run (launch.ts): settings that turn recording off would leave the turn unrecorded.
  const args = ['--resume', input.sessionId, '--chat-recording'];
  if (input.model) args.push('--model', input.model);
  return { command: 'qwen', args, env: {} };
}

function sessionFile(q: SessionQuery): string | null {
  if (!q.sessionId || !SAFE_ID.test(q.sessionId)) return null;
  const projects = join(qwenRuntimeDir(q.storeEnv, q.cwd), 'projects');
  const name = join('chats', `${q.sessionId}.jsonl`);
  const own = projectDirName(q.cwd);
  const dir = [own, ...listDir(projects).filter((p) => p !== own)].find((p) => existsSync(join(projects, p, name)));
  return dir === undefined ? null : join(projects, dir, name);
}

/** One response's `usageMetadata` (Gemini's counts) as ours: the prompt net of its cached part, the thoughts in the output. */
function usageOf(meta: Record<string, unknown>): Usage {
  const cached = num(meta.cachedContentTokenCount);
  const input = Math.max(0, num(meta.promptTokenCount) - cached);
  const reasoning = num(meta.thoughtsTokenCount);
  const output = num(meta.candidatesTokenCount) + reasoning;
  return {
    inputTokens: input,
    outputTokens: output,
    cacheReadTokens: cached,
    cacheWriteTokens: 0,
    reasoningTokens: reasoning,
    totalTokens: input + cached + output,
    costUsd: null,
  };
}

/** The person's turn, from the records the session's chat gained: its messages (transcript.ts), its responses' usage. */
class RecordingTurnRun extends StoreTurnRun {
  private readonly reader: TranscriptReader = transcriptReader(undefined, this.tell);

  protected record(r: JsonObject, text: string): void {
    const s = this.state;
    s.sessionId ??= str(r.sessionId);
    s.lastActivityAt = str(r.timestamp) ?? s.lastActivityAt;
    if (r.type === 'assistant' && r.usageMetadata !== undefined) {
      s.turns++;
      s.usage = addUsage(s.usage, usageOf(fields(r.usageMetadata)));
    }
    this.reader.line(text);
  }

  end(): void {
    this.reader.end();
  }
}

export const qwenInteractive: Interactive = {
  launch,
  sessionFile,
  // Its prompts are the recording's own user records (RecordingTurnRun tells them); the verdict is the exit status's.
  open: (run = {}) =>
    attachedRun(
      'qwen',
      run,
      () => null,
      (r) => new RecordingTurnRun(r.onMessage),
    ),
};
