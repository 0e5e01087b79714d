import { closeSync, constants, fstatSync, openSync, readSync, type Stats } from 'node:fs';

/**
 * Opening a file of the registry for reading, which must never block: a FIFO opened plainly waits
 * for a writer for ever, a socket cannot be opened, a device reads without end. So every read of the
 * registry opens with O_NONBLOCK (no effect on a regular file) and O_NOFOLLOW (the suite never
 * writes a symlink there), then checks with fstat — on the open descriptor, so nothing can be swapped
 * in between — that it is a regular file. Anything else is a `NotAFileError` (code `EFTYPE`, BSD's
 * errno for "inappropriate file type"), which callers treat like any other unreadable file.
 */
const READ_FLAGS = constants.O_RDONLY | constants.O_NONBLOCK | (constants.O_NOFOLLOW ?? 0);

export class NotAFileError extends Error {
  readonly code = 'EFTYPE';
  constructor(
    readonly path: string,
    readonly kind: string,
  ) {
    super(`${path} is a ${kind}, not a regular file`);
    this.name = 'NotAFileError';
  }
}

export function kindOf(st: Stats): string {
  if (st.isFIFO()) return 'FIFO';
  if (st.isSocket()) return 'socket';
  if (st.isCharacterDevice()) return 'character device';
  if (st.isBlockDevice()) return 'block device';
  if (st.isDirectory()) return 'directory';
  if (st.isSymbolicLink()) return 'symbolic link';
  return 'special file';
}

/** An fd of the regular file at `path`, opened for reading without blocking; throws NotAFileError for anything else (ENOENT etc. as thrown by open). */
export function openRegular(path: string): number {
  return openSized(path).fd;
}

/** openRegular, and the file's size when it was opened. */
function openSized(path: string): { fd: number; size: number } {
  let fd: number;
  try {
    fd = openSync(path, READ_FLAGS);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    // With O_NOFOLLOW a symlink as the last component is ELOOP; a socket cannot be opened (ENXIO).
    if (code === 'ELOOP') throw new NotAFileError(path, 'symbolic link');
    if (code === 'ENXIO' || code === 'EOPNOTSUPP') throw new NotAFileError(path, 'socket');
    throw err;
  }
  let st: Stats;
  try {
    st = fstatSync(fd);
  } catch (err) {
    closeSync(fd);
    throw err;
  }
  if (!st.isFile()) {
    closeSync(fd);
    throw new NotAFileError(path, kindOf(st));
  }
  return { fd, size: st.size };
}

/** readFileSync for a file of the registry: the whole regular file at `path`, or a throw (never a block). */
export function readRegular(path: string): Buffer {
  const { fd, size } = openSized(path);
  try {
    const chunks: Buffer[] = [];
    let total = 0;
    // Room for the whole file as fstat saw it, and a byte more: a file read whole in one read(2) is not
    // copied again (the status cache is megabytes).
    let buf = Buffer.allocUnsafe(Math.max(8192, size + 1));
    for (;;) {
      const n = readSync(fd, buf, 0, buf.length, null);
      if (n === 0) break;
      chunks.push(buf.subarray(0, n));
      total += n;
      if (n === buf.length) buf = Buffer.allocUnsafe(Math.min(buf.length * 2, 1 << 20));
      else buf = buf.subarray(n);
    }
    return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, total);
  } finally {
    closeSync(fd);
  }
}

/**
 * The whole regular file at `path` (as readRegular) read into the memory `into` gives for room of its
 * size and a byte more, without a copy; null when `into` gives none, or when the file outgrew that room
 * while it was read.
 */
export function readRegularInto(path: string, into: (room: number) => Uint8Array | null): Uint8Array | null {
  const { fd, size } = openSized(path);
  try {
    const buf = into(size + 1);
    if (!buf) return null;
    let total = 0;
    for (;;) {
      const n = readSync(fd, buf, total, buf.length - total, null);
      if (n === 0) break;
      total += n;
      if (total === buf.length) return null;
    }
    return buf.subarray(0, total);
  } finally {
    closeSync(fd);
  }
}
