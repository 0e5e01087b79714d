import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import { INTERNAL_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, PARSE_ERROR, RpcError, rpcLine, rpcMessage, type RpcId } from '../base/jsonrpc.js';

/**
 * The MCP server's side of JSON-RPC 2.0 over stdio (the framing: lib/base/jsonrpc.ts; the MCP spec,
 * "Transports: stdio"). Requests are answered in any order, each as soon as its handler is done;
 * a request the peer cancels (`notifications/cancelled`) has its signal aborted and gets no answer, as
 * the spec asks. Nothing but protocol messages is ever written to the output.
 */

export { INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND, PARSE_ERROR, RpcError, type Json } from '../base/jsonrpc.js';

/** A method's handler: the request's params and a signal aborted when the peer cancels it. */
export type Handler = (params: Record<string, unknown>, signal: AbortSignal) => Promise<unknown> | unknown;

export interface Peer {
  /** Resolves when the input ends (and every answer still owed has been written). */
  closed: Promise<void>;
}

/** Serves `methods` (requests) and `notifications` on `input`/`output` until the input ends. */
export function serve(
  input: Readable,
  output: Writable,
  methods: Record<string, Handler>,
  notifications: Record<string, (params: Record<string, unknown>) => void> = {},
): Peer {
  const pending = new Map<RpcId, AbortController>();
  const working = new Set<Promise<void>>();
  const send = (message: object): void => {
    output.write(rpcLine(message));
  };
  const cancelled = (params: Record<string, unknown>): void => {
    const id = params.requestId;
    if (typeof id === 'string' || typeof id === 'number') pending.get(id)?.abort(new Error(String(params.reason ?? 'cancelled')));
  };
  const request = async (id: RpcId, method: string, params: Record<string, unknown>): Promise<void> => {
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
    const message = rpcMessage(m);
    if (message === null || message.kind === 'answer') {
      // An answer to a request of ours (we make none) is ignored; anything else is not a request.
      if (m.result === undefined && m.error === undefined) {
        const id = m.id;
        const bad = typeof m.method === 'string' && m.jsonrpc === '2.0' ? 'id must be a string or a number' : 'not a JSON-RPC 2.0 request';
        send({ id: typeof id === 'string' || typeof id === 'number' ? id : null, error: { code: INVALID_REQUEST, message: bad } });
      }
      return;
    }
    if (message.kind === 'notification') {
      if (message.method === 'notifications/cancelled') cancelled(message.params);
      else notifications[message.method]?.(message.params);
      return;
    }
    const { id, method, params } = message;
    const job = request(id, method, params);
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
