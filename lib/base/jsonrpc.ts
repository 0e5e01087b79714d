/**
 * JSON-RPC 2.0 as MCP and ACP frame it over stdio: one message a line, UTF-8, no embedded newlines. The
 * parts both peers share — the message's line, its kinds, the protocol's error codes — are here; the MCP
 * server (lib/mcp/jsonrpc.ts) and the ACP client (lib/agents/acp/client.ts) each add their side.
 */

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** A protocol error of JSON-RPC, as a request's answer carries it. */
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

export type RpcId = string | number;

/** One message as its line, newline included. */
export function rpcLine(message: object): string {
  return `${JSON.stringify({ jsonrpc: '2.0', ...message })}\n`;
}

/** A parsed message by kind: a request (method and id), a notification (method, no id), an answer (id, result or error); null when it is none of these. */
export type RpcMessage =
  | { kind: 'request'; id: RpcId; method: string; params: Record<string, unknown> }
  | { kind: 'notification'; method: string; params: Record<string, unknown> }
  | { kind: 'answer'; id: RpcId; result: unknown; error: { code: number; message: string; data?: unknown } | null };

/** What a parsed line is, by the JSON-RPC 2.0 rules; null when it is not a message (a request with a bad id is null too). */
export function rpcMessage(m: Record<string, unknown>): RpcMessage | null {
  const id = m.id;
  const idOk = typeof id === 'string' || typeof id === 'number';
  const params = (typeof m.params === 'object' && m.params !== null ? m.params : {}) as Record<string, unknown>;
  if (typeof m.method === 'string' && m.jsonrpc === '2.0') {
    if (id === undefined) return { kind: 'notification', method: m.method, params };
    return idOk ? { kind: 'request', id, method: m.method, params } : null;
  }
  if (idOk && (m.result !== undefined || m.error !== undefined)) {
    const e = m.error as Record<string, unknown> | undefined;
    const error =
      e && typeof e === 'object' ? { code: typeof e.code === 'number' ? e.code : INTERNAL_ERROR, message: String(e.message ?? 'error'), data: e.data } : null;
    return { kind: 'answer', id, result: m.result, error };
  }
  return null;
}
