import { SubagentError } from '../base/errors.js';
import { status, type StatusOptions } from '../commands/status.js';
import { isTerminal } from '../runs/observe.js';
import type { AgentEntry } from '../runs/entry.js';
import { formatSize } from '../base/size.js';
import { renderTable, summaryLine, useColor } from './table.js';
import { fit } from './width.js';

export interface Screen {
  write: (text: string) => void;
  isTTY: boolean;
  columns: number | undefined;
  rows: number | undefined;
  env: NodeJS.ProcessEnv;
}

export function tableText(agents: AgentEntry[], screen: Screen): string {
  return renderTable(agents, { width: widthOf(screen), color: useColor({ isTTY: screen.isTTY }, screen.env) });
}

/** The terminal's width; a pty without a size (script(1) in CI) reports 0 columns: COLUMNS, then 80. */
function widthOf(screen: Screen): number {
  return screen.isTTY ? screen.columns || Number(screen.env.COLUMNS) || 80 : Number(screen.env.COLUMNS) || Infinity;
}

/**
 * `status --format table`'s last line: the runs counted by state and the registry's size on disk
 * (`agents/`: records, event logs, transcripts — what `subagent-prune` frees), cut to the width.
 */
export function tableSummary(agents: AgentEntry[], registryBytes: number, screen: Screen): string {
  return fit(`${summaryLine(agents)} · registry ${formatSize(registryBytes)}`, widthOf(screen)) + '\n';
}

/** The last line of a watch that lists nothing yet: what it waits for, where, and how to stop it. */
export function awaited(o: StatusOptions, registry: string): string {
  const names = o.names ?? [];
  const what = names.length ? `${names.length === 1 ? 'the run' : 'runs'} ${names.join(', ')}` : o.prefix !== undefined ? `runs named ${o.prefix}/…` : 'a run';
  return `waiting for ${what} to appear in ${registry} (Ctrl-C stops the watch)`;
}

/**
 * `status --watch [SEC]`: the table redrawn in place — at every change of a listed run (the registry is
 * watched) and at least every SEC seconds — until every listed run is terminal, with a summary line.
 */
export async function watchStatus(o: StatusOptions, intervalSec: number, screen: Screen): Promise<AgentEntry[]> {
  const selection: StatusOptions = { ...o, wait: false, waitTerminal: false, requireSuccess: false, junit: undefined };
  if (!(o.names ?? []).length && o.prefix === undefined) selection.all = true;
  let drawn = 0;
  for (;;) {
    const body = await status(selection);
    const agents = body.agents;
    // Nothing listed yet: the watch goes on, as the runs may be about to start, and says what for.
    const text = tableText(agents, screen) + (agents.length ? summaryLine(agents) : awaited(o, body.registry)) + '\n';
    const lines = text.split('\n').length - 1;
    if (screen.isTTY && drawn > 0) screen.write(drawn < (screen.rows || 24) ? `\x1b[${drawn}F\x1b[0J` : '\x1b[H\x1b[2J');
    else if (drawn > 0) screen.write('\n');
    screen.write(text);
    drawn = lines;
    if (agents.length > 0 && agents.every((a) => isTerminal(a.status))) return agents;
    try {
      await status({ ...selection, wait: true, timeoutSec: intervalSec });
    } catch (err) {
      if (!(err instanceof SubagentError && (err.code === 'E_WAIT_TIMEOUT' || err.code === 'E_NAME_NOT_FOUND'))) throw err;
      if (err.code === 'E_NAME_NOT_FOUND') await new Promise((r) => setTimeout(r, intervalSec * 1000));
    }
  }
}
