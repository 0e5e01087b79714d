/**
 * `node dist/test/bench/quiesce.js <registry> [timeout-ms]` — hyperfine's --prepare for the start row:
 * returns once no supervisor or agent recorded in the registry is alive (identity-checked), so each timed
 * start-subagent runs on a machine its predecessor's supervisor no longer loads. Always exits 0.
 */
import { waitQuiet } from './util.js';

const [registry, timeout] = process.argv.slice(2);
if (registry) await waitQuiet(registry, Number(timeout ?? 10_000));
