import { closeSync, openSync, readSync } from 'node:fs';

/** Whether `s` is a UUID (any version, either case): what the CLIs that take one as a session id accept. */
export function isUuid(s: string | null | undefined): s is string {
  return typeof s === 'string' && /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(s);
}

/**
 * A random (version 4) UUID from the kernel's generator. Not node:crypto's randomUUID: loading
 * node:crypto costs a start ~3 ms, more than everything else the start command computes.
 */
export function randomUUID(): string {
  const b = Buffer.allocUnsafe(16);
  const fd = openSync('/dev/urandom', 'r');
  try {
    for (let got = 0; got < 16; ) got += readSync(fd, b, got, 16 - got, null);
  } finally {
    closeSync(fd);
  }
  b[6] = (b[6]! & 0x0f) | 0x40;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const h = b.toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}
