/**
 * Loader hooks (run on Node's hooks thread) that log every module URL the ESM loader loads to
 * $BENCH_MODULE_LOG_DIR/<pid>.esm — used by the bench to count the module files each verb loads.
 */
import { appendFileSync } from 'node:fs';

const dir = process.env.BENCH_MODULE_LOG_DIR;

export async function load(url: string, context: unknown, next: (url: string, context: unknown) => Promise<unknown>): Promise<unknown> {
  if (dir) {
    try {
      appendFileSync(`${dir}/${process.pid}.esm`, url + '\n');
    } catch {}
  }
  return next(url, context);
}
