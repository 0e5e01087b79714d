import { closeSync, fsync, fsyncSync, openSync, renameSync, unlinkSync, writeFileSync, constants } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { unwritable } from '../errors.js';
import { checkpoint } from '../checkpoint.js';

/** fsync a directory so a rename or a new entry in it survives a crash. */
export function fsyncDir(dir: string): void {
  const fd = openSync(dir, constants.O_RDONLY | constants.O_DIRECTORY);
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

let counter = 0;

/** Unique within the directory: our pid, a counter and a random part (no crypto needed for that). */
export function tempName(path: string): string {
  return join(dirname(path), `.${basename(path)}.tmp-${process.pid}-${++counter}-${Math.random().toString(36).slice(2, 10)}`);
}

/**
 * Guarantee 5: write a temp file in the same directory, fsync it, rename it over the target, fsync the
 * directory. writeFileSync loops until every byte is written or throws, so a short write (ENOSPC) never
 * publishes a truncated file; on any failure the temp file is removed and the old file stays as it was.
 */
export function replaceFileDurably(path: string, data: string | Buffer, label?: string): void {
  const tmp = tempName(path);
  let fd: number | null = null;
  try {
    fd = openSync(tmp, 'wx', 0o644);
    writeFileSync(fd, data);
    fsyncSync(fd);
    closeSync(fd);
    fd = null;
    if (label) checkpoint(`${label}-temp-written`);
    renameSync(tmp, path);
    fsyncDir(dirname(path));
  } catch (err) {
    if (fd !== null) {
      try {
        closeSync(fd);
      } catch {
        /* already failing */
      }
    }
    try {
      unlinkSync(tmp);
    } catch {
      /* it may never have been created */
    }
    throw unwritable(dirname(path), err);
  }
}

/** Create a new file (it must not exist) and write it whole; `syncAll` makes it durable. */
export function createFile(path: string, data: string | Buffer): void {
  const fd = openSync(path, 'wx', 0o644);
  try {
    writeFileSync(fd, data);
  } finally {
    closeSync(fd);
  }
}

/**
 * fsyncs files and directories in parallel (libuv's thread pool): the journal commits them together,
 * so the price is about one fsync instead of one per path. Resolves when all are durable. Each path is
 * opened here, synchronously (microseconds), so its fsync is already queued when this returns: it runs
 * while the caller goes on — start-subagent spawns the supervisor (several ms in which the main thread
 * cannot take a callback) while the fsync that makes the run's directory entry durable runs. Callbacks,
 * not node:fs/promises, which costs a verb ~1 ms of start-up to load.
 */
export function syncAll(paths: string[]): Promise<void> {
  return Promise.all(paths.map(syncPath)).then(() => undefined);
}

function syncPath(path: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const fd = openSync(path, constants.O_RDONLY);
    fsync(fd, (syncErr) => {
      try {
        closeSync(fd);
      } catch (closeErr) {
        return reject(syncErr ?? closeErr);
      }
      return syncErr ? reject(syncErr) : resolve();
    });
  });
}
