import { readdirSync } from 'node:fs';

/** The entries of a directory, or none when it cannot be read (missing, not a directory, no permission). */
export function listDir(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}
