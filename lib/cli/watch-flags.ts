import type { WatchOptions } from '../commands/run-watch.js';
import { parseStallSec } from '../commands/settings.js';
import { bool, str, type ParsedFlags } from './flags.js';

/** --stall-after, --stall-action, --on-end and --keep-children (resume: also --stop-children), as start-subagent and resume-subagent take them. */
export function watchFlags(values: ParsedFlags['values']): WatchOptions {
  const after = str(values, 'stall-after');
  return {
    stallAfterSec: after === undefined ? undefined : parseStallSec(after, '--stall-after'),
    stallAction: str(values, 'stall-action') as WatchOptions['stallAction'],
    onEnd: str(values, 'on-end'),
    keepChildren: bool(values, 'keep-children') ? true : bool(values, 'stop-children') ? false : undefined,
  };
}
