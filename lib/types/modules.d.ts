declare module 'ndjson' {
  import type { Transform } from 'node:stream';
  export function parse(opts?: { strict?: boolean }): Transform;
  export function stringify(): Transform;
}
