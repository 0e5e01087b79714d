import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, isAbsolute, join } from 'node:path';

/** Finds a program on PATH the way execvp would; null when it is not there. */
export function findOnPath(program: string, env: NodeJS.ProcessEnv): string | null {
  const candidates =
    isAbsolute(program) || program.includes('/')
      ? [program]
      : (env.PATH ?? '')
          .split(delimiter)
          .filter(Boolean)
          .map((d) => join(d, program));
  for (const c of candidates) {
    try {
      accessSync(c, constants.X_OK);
      if (statSync(c).isFile()) return c;
    } catch {
      /* next */
    }
  }
  return null;
}
