import { SupervisorLog } from './log.js';
import { Supervision } from './run.js';

/**
 * The supervisor: one detached Node process per run, the sole owner of the run while it lives.
 * record running → run the agent (prompt on stdin, stdout → events.log, stderr → stderr.log) →
 * follow the event log for progress → record done → exit. The run's supervision is one object
 * (lib/supervisor/run.ts); this entry wires the signals to it and exits, here only, when it is done.
 */
const [registry, dir] = process.argv.slice(2);
const log = new SupervisorLog().write;
// Anything Node itself writes to stderr (a warning) must not end the supervisor when the disk refuses it.
process.stderr.on('error', () => undefined);
process.stdout.on('error', () => undefined);
if (!registry || !dir) {
  log('usage: supervisor <registry> <run-dir>');
  process.exit(1);
}
const supervision = new Supervision(registry, dir, log);
// Detached from any terminal already; these must not end the run.
process.on('SIGHUP', () => log('ignored SIGHUP'));
process.on('SIGINT', () => log('ignored SIGINT'));
process.on('SIGTERM', () => supervision.onSigterm());
void supervision.run().then((code) => process.exit(code));
