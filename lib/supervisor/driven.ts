import { closeSync, openSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import type { AgentAdapter, Driver, LaunchInput } from '../agents/types.js';
import { sleep } from '../base/time.js';
import type { Waited } from '../proc/spawn.js';
import { PRIVATE_FILE } from '../registry/private.js';
import { FILES } from '../registry/store.js';
import type { Log } from './log.js';

/**
 * An agent the run talks with through its adapter's driver (`AgentAdapter.drive`: `--cli acp`) rather
 * than one fed the prompt on stdin: the driver holds the agent's stdin and stdout, and what it writes to
 * the event log is all the log holds, read as any run's is (the LineFollower of run.ts). Once the driver
 * is done (the agent's stdin ended) the agent is given DRIVEN_EXIT_MS to exit, then SIGTERM to its group.
 */

export const DRIVEN_EXIT_MS = 5000;

export interface Driven {
  driver: Driver;
  /** Closes the event log's descriptor, once the agent exited and the log was read. */
  close(): void;
}

export function startDriver(dir: string, adapter: AgentAdapter, input: LaunchInput, child: Waited, prompt: Buffer, log: Log): Driven {
  const fd = openSync(join(dir, FILES.events), 'a', PRIVATE_FILE);
  let dropped = 0;
  let closed = false;
  const append = (line: string): void => {
    if (closed) return;
    const bytes = Buffer.from(`${line}\n`);
    try {
      for (let at = 0; at < bytes.length; ) at += writeSync(fd, bytes, at);
    } catch (err) {
      // A line the disk refused is lost to the log (the run goes on): said once, counted at the end.
      if (dropped++ === 0) log(`the event log refused a line of the agent's conversation: ${(err as Error).message}`);
    }
  };
  const driver = adapter.drive!(input, { input: child.stdin!, output: child.stdout!, prompt, log: append, diag: log });
  void driver.done.then(async () => {
    const gone = await Promise.race([child.exited.then(() => true), sleep(DRIVEN_EXIT_MS).then(() => false)]);
    if (gone) return;
    log(`the agent did not exit ${DRIVEN_EXIT_MS} ms after its stdin ended: SIGTERM to its group`);
    try {
      process.kill(-child.pid, 'SIGTERM');
    } catch {
      /* gone meanwhile */
    }
  });
  return {
    driver,
    close: () => {
      if (dropped > 1) log(`${dropped} lines of the agent's conversation were not written to the event log`);
      closed = true;
      closeSync(fd);
    },
  };
}
