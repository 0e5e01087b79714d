import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { SubagentError } from '../base/errors.js';

/** The prompt, byte-exact, from --prompt TEXT, --prompt - (stdin) or --prompt-file PATH (relative: against `cwd`). */
export function readPrompt(flag: string | undefined, file: string | undefined, cwd = process.cwd(), opts: { stdinAllowed?: boolean } = {}): Buffer {
  if (flag !== undefined && file !== undefined) {
    throw new SubagentError('E_ARG_INVALID', 'give the prompt once: --prompt or --prompt-file, not both', { hint: 'drop one of them' });
  }
  let data: Buffer;
  if (file !== undefined) {
    const path = resolve(cwd, file);
    try {
      data = readFileSync(path);
    } catch (err) {
      throw new SubagentError('E_ARG_INVALID', `cannot read --prompt-file ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, {
        path,
        hint: 'give the path of a readable file (relative paths resolve against your directory)',
      });
    }
  } else if (flag === '-' && opts.stdinAllowed !== false) {
    try {
      data = readFileSync(0);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'EAGAIN')
        throw new SubagentError('E_ARG_INVALID', 'stdin is not readable without blocking', { hint: 'pipe the prompt in: ... | start-subagent --prompt -' });
      data = Buffer.alloc(0);
    }
  } else if (flag !== undefined) {
    data = flag.includes('\uFFFD') ? (rawArgument(flag) ?? Buffer.from(flag, 'utf8')) : Buffer.from(flag, 'utf8');
  } else {
    data = Buffer.alloc(0);
  }
  if (data.length === 0) throw promptRequired(flag === undefined && file === undefined ? 'a prompt is required' : 'the prompt is empty');
  return data;
}

/** A prompt given to the library: bytes are kept exactly, a string is taken as UTF-8; empty is refused. */
export function promptBytes(prompt: Buffer | string): Buffer {
  const bytes = typeof prompt === 'string' ? Buffer.from(prompt, 'utf8') : prompt;
  if (bytes.length === 0) throw promptRequired('a non-empty prompt is required');
  return bytes;
}

function promptRequired(message: string): SubagentError {
  return new SubagentError('E_PROMPT_REQUIRED', message, { hint: 'give --prompt TEXT, --prompt-file PATH, or --prompt - with the prompt on stdin' });
}

/**
 * Node decodes argv as UTF-8 and replaces invalid bytes with U+FFFD; the kernel still has the bytes.
 * Finds the argument (alone, or after "--flag=") whose decoding is `decoded`, and returns its bytes.
 * Only Linux shows them (/proc/self/cmdline); elsewhere null, and the decoded argument is the prompt:
 * there a prompt that is not UTF-8 must come through --prompt-file or stdin (docs/platforms.md).
 */
function rawArgument(decoded: string): Buffer | null {
  if (process.platform !== 'linux') return null;
  let raw: Buffer;
  try {
    raw = readFileSync('/proc/self/cmdline');
  } catch {
    return null;
  }
  let start = 0;
  for (;;) {
    const end = raw.indexOf(0, start);
    if (end === -1) return null;
    const arg = raw.subarray(start, end);
    if (arg.toString('utf8') === decoded) return Buffer.from(arg);
    const eq = arg.indexOf(61);
    if (eq !== -1 && arg[0] === 45 && arg.subarray(eq + 1).toString('utf8') === decoded) return Buffer.from(arg.subarray(eq + 1));
    start = end + 1;
  }
}
