import { closeSync, fsyncSync, openSync, renameSync, unlinkSync, writeFileSync, constants } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { unwritable } from '../base/errors.js';
import { checkpoint } from '../base/checkpoint.js';
import { PRIVATE_FILE } from './private.js';

/** fsync a directory so a rename or a new entry in it survives a crash. */
export function fsyncDir(dir: string): void {
  fsyncPath(dir, constants.O_RDONLY | constants.O_DIRECTORY);
}

function fsyncPath(path: string, flags: number): void {
  const fd = openSync(path, flags);
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
 * docs/guarantees.md, 5: write a temp file in the same directory, fsync it, rename it over the target, fsync the
 * directory. writeFileSync loops until every byte is written or throws, so a short write (ENOSPC) never
 * publishes a truncated file; on any failure the temp file is removed and the old file stays as it was.
 */
export function replaceFileDurably(path: string, data: string | Buffer, label?: string): void {
  const tmp = tempName(path);
  let fd: number | null = null;
  try {
    fd = openSync(tmp, 'wx', PRIVATE_FILE);
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
  const fd = openSync(path, 'wx', PRIVATE_FILE);
  try {
    writeFileSync(fd, data);
  } finally {
    closeSync(fd);
  }
}

/**
 * fsyncs files and directories, one after the other, on this thread; returns when all are durable.
 * The first fsync commits the journal transaction that holds the others' metadata, so the rest are
 * quick: running them in parallel on libuv's thread pool gains nothing and costs its threads
 * (docs/benchmarks.md, "Measured by hand").
 */
export function syncAll(paths: string[]): void {
  for (const path of paths) fsyncPath(path, constants.O_RDONLY);
}
