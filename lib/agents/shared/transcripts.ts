import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { listDir } from '../../base/dir.js';
import { type JsonObject, parseObject } from '../../base/json.js';
import { LineFollower } from '../../base/lines.js';

/**
 * A sub-agent's transcript as Claude Code and Qwen Code keep them: `agent-<id>.jsonl` in a folder of the
 * session, with a `.meta.json` beside it that names the child by its other ids (the tool_use id that
 * started it…). The file of `childId` in the first of `dirs` that holds one, else the one whose meta
 * `matches`; null when none does. An unreadable meta is passed over.
 */
export function findTranscript(dirs: string[], childId: string, matches: (meta: JsonObject) => boolean): string | null {
  for (const d of dirs) {
    const f = join(d, `agent-${childId}.jsonl`);
    if (existsSync(f)) return f;
  }
  for (const d of dirs) {
    for (const e of listDir(d)) {
      if (!e.endsWith('.meta.json')) continue;
      let meta: JsonObject | null;
      try {
        meta = parseObject(readFileSync(join(d, e), 'utf8'));
      } catch {
        continue;
      }
      if (meta === null || !matches(meta)) continue;
      const f = join(d, e.replace(/\.meta\.json$/, '.jsonl'));
      if (existsSync(f)) return f;
    }
  }
  return null;
}

/** A transcript's lines, read to its end through the reader `open` makes; false when there is no file. */
export function readTranscript(file: string | null, open: () => { line(line: string): void; end(): void }): boolean {
  if (!file) return false;
  const reader = open();
  new LineFollower(file, (line) => reader.line(line)).flush();
  reader.end();
  return true;
}
