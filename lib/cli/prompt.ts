import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { SubagentError } from '../errors.js';

/** The prompt, byte-exact, from --prompt TEXT, --prompt - (stdin) or --prompt-file PATH. */
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
      if (code === 'EAGAIN') throw new SubagentError('E_ARG_INVALID', 'stdin is not readable without blocking', { hint: 'pipe the prompt in: ... | start-subagent --prompt -' });
      data = Buffer.alloc(0);
    }
  } else if (flag !== undefined) {
    data = Buffer.from(flag, 'utf8');
  } else {
    data = Buffer.alloc(0);
  }
  if (data.length === 0) {
    throw new SubagentError('E_PROMPT_REQUIRED', flag === undefined && file === undefined ? 'a prompt is required' : 'the prompt is empty', {
      hint: 'give --prompt TEXT, --prompt-file PATH, or --prompt - with the prompt on stdin',
    });
  }
  return data;
}
