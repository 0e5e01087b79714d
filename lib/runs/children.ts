import type { AgentAdapter, Message } from '../agents/types.js';
import { loadAdapter } from '../agents/index.js';
import { SubagentError } from '../base/errors.js';
import type { ChildAgent, RunRecord } from '../registry/record.js';
import { listRuns, readListedRun, readRecord, runDir } from '../registry/store.js';
import { openRunOf, parseLog } from './transcript.js';

/** A child sub-agent of one of a name's runs, and where its words were read from. */
export interface ChildTranscript {
  run: number;
  child: ChildAgent;
  messages: Message[];
  source: 'transcript' | 'stream';
}

/** Finds the run (latest first) whose record lists the child; E_CHILD_NOT_FOUND otherwise. */
function findChild(registry: string, name: string, childId: string): { record: RunRecord; child: ChildAgent; dir: string } {
  const runs = (listRuns(registry, name) ?? []).reverse();
  const known: string[] = [];
  for (const run of runs) {
    const dir = runDir(registry, name, run);
    const record = readListedRun(dir, readRecord);
    if (record === null) continue;
    const child = record.children.find((c) => c.id === childId);
    if (child) return { record, child, dir };
    known.push(...record.children.map((c) => c.id));
  }
  throw new SubagentError('E_CHILD_NOT_FOUND', `"${name}" has no child sub-agent "${childId}"`, {
    name,
    child: childId,
    children: known,
    hint: known.length ? 'use one of the ids listed in details.children (subagent-status shows them per run)' : 'this run spawned no sub-agents',
  });
}

/**
 * The child's messages: from the CLI's own transcript store when the adapter can read it (the stream
 * rarely carries a child's own words), else the lines of the parent's stream that belong to the child.
 */
export async function childTranscript(registry: string, name: string, childId: string): Promise<ChildTranscript> {
  const { record, child, dir } = findChild(registry, name, childId);
  const adapter: AgentAdapter = await loadAdapter(record.cli);
  if (adapter.childMessages) {
    const fromStore: Message[] = [];
    const found = await adapter.childMessages(
      { sessionId: record.sessionId, cwd: record.cwd, childId, storeEnv: record.storeEnv, description: child.description },
      (m) => fromStore.push(m),
    );
    if (found && fromStore.length) return { run: record.run, child, messages: fromStore, source: 'transcript' };
  }
  const fromStream: Message[] = [];
  const run = openRunOf(adapter, record, {
    onMessage: (m) => {
      if (m.childId === childId) fromStream.push(m);
    },
  });
  parseLog(dir, run, record);
  return { run: record.run, child, messages: fromStream, source: 'stream' };
}
