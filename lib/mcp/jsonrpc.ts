import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';

/**
 * JSON-RPC 2.0 over stdio as MCP frames it: one message a line, UTF-8, no embedded newlines (the MCP
 * spec, "Transports: stdio"). Requests are answered in any order, each as soon as its handler is done;
 * a request the peer cancels (`notifications/cancelled`) has its signal aborted and gets no answer, as
 * the spec asks. Nothing but protocol messages is ever written to the output.
 */

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** A protocol error of JSON-RPC (the method's own failures are results: MCP tool errors). */
export class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: Json,
  ) {
    super(message);
  }
}

export const PARSE_ERROR = -32700;
export const INVALID_REQUEST = -32600;
export const METHOD_NOT_FOUND = -32601;
export const INVALID_PARAMS = -32602;
export const INTERNAL_ERROR = -32603;

/** A method's handler: the request's params and a signal aborted when the peer cancels it. */
export type Handler = (params: Record<string, unknown>, signal: AbortSignal) => Promise<unknown> | unknown;

export interface Peer {
  /** Resolves when the input ends (and every answer still owed has been written). */
  closed: Promise<void>;
}

type Id = string | number;

/** Serves `methods` (requests) and `notifications` on `input`/`output` until the input ends. */
export function serve(
  input: Readable,
  output: Writable,
  methods: Record<string, Handler>,
  notifications: Record<string, (params: Record<string, unknown>) => void> = {},
): Peer {
  const pending = new Map<Id, AbortController>();
  const working = new Set<Promise<void>>();
  const send = (message: object): void => {
    output.write(`${JSON.stringify({ jsonrpc: '2.0', ...message })}\n`);
  };
  const cancelled = (params: Record<string, unknown>): void => {
    const id = params.requestId;
    if (typeof id === 'string' || typeof id === 'number') pending.get(id)?.abort(new Error(String(params.reason ?? 'cancelled')));
  };
  const request = async (id: Id, method: string, params: Record<string, unknown>): Promise<void> => {
    const handler = methods[method];
    if (!handler) return send({ id, error: { code: METHOD_NOT_FOUND, message: `no method ${method}` } });
    const controller = new AbortController();
    pending.set(id, controller);
    try {
      const result = await handler(params, controller.signal);
      if (!controller.signal.aborted) send({ id, result: result ?? {} });
    } catch (err) {
      if (controller.signal.aborted) return;
      const e = err instanceof RpcError ? err : new RpcError(INTERNAL_ERROR, (err as Error).message ?? String(err));
      send({ id, error: { code: e.code, message: e.message, ...(e.data !== undefined ? { data: e.data } : {}) } });
    } finally {
      pending.delete(id);
    }
  };
  const onLine = (line: string): void => {
    if (line.trim() === '') return;
    let m: Record<string, unknown>;
    try {
      m = JSON.parse(line) as Record<string, unknown>;
    } catch (err) {
      send({ id: null, error: { code: PARSE_ERROR, message: `not JSON: ${(err as Error).message}` } });
      return;
    }
    const params = (typeof m.params === 'object' && m.params !== null ? m.params : {}) as Record<string, unknown>;
    const id = m.id;
    if (typeof m.method !== 'string' || m.jsonrpc !== '2.0') {
      // An answer to a request of ours (we make none) is ignored; anything else is not a request.
      if (m.result === undefined && m.error === undefined)
        send({ id: typeof id === 'string' || typeof id === 'number' ? id : null, error: { code: INVALID_REQUEST, message: 'not a JSON-RPC 2.0 request' } });
      return;
    }
    if (id === undefined) {
      if (m.method === 'notifications/cancelled') cancelled(params);
      else notifications[m.method]?.(params);
      return;
    }
    if (typeof id !== 'string' && typeof id !== 'number') {
      send({ id: null, error: { code: INVALID_REQUEST, message: 'id must be a string or a number' } });
      return;
    }
    const job = request(id, m.method, params);
    working.add(job);
    void job.finally(() => working.delete(job));
  };
  const lines = createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY });
  lines.on('line', onLine);
  const closed = new Promise<void>((resolve) => {
    lines.once('close', () => {
      // The input is gone: nobody is left to read an answer to a wait; the others finish and are written.
      for (const c of pending.values()) c.abort(new Error('the client closed the connection'));
      void Promise.allSettled([...working]).then(() => resolve());
    });
  });
  return { closed };
}
