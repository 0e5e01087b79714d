import type { Readable, Writable } from 'node:stream';
import type { Context } from '../commands/context.js';
import { INVALID_PARAMS, RpcError, serve, type Peer } from './jsonrpc.js';
import { TOOLS } from './tools.js';

/**
 * The MCP server of subagent-mcp (docs/mcp.md): the lifecycle (initialize, its version negotiation),
 * `tools/list` and `tools/call` over the library, in this process — no Node start per call. A tool's
 * failure is a tool result with `isError` and the verb's error object (code, error, details.hint), so the
 * host's model reads it; only a malformed request is a JSON-RPC error.
 */

/** The protocol versions this server speaks, newest first: it answers the client's when it has it. */
export const PROTOCOL_VERSIONS = ['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05'];

const INSTRUCTIONS =
  'subagents: start named coding-agent runs in the background (start, batch), wait for them (status with waitTerminal), ' +
  'read their answers (result), search their transcripts (search), resume their sessions (resume) and cancel them (cancel). ' +
  'Every tool answers with the JSON object the matching command-line verb prints; a failure carries a stable code and a hint.';

export interface ServerOptions {
  /** Where the registry is found, as the verbs find it (registry flag, SUBAGENT_DIR, the working directory). */
  context: Context;
  version: string;
  /** A failure as the verbs print it (lib/cli/output.ts errorObject): `{ok:false, code, error, details, …}`. */
  errorBody: (err: unknown) => Record<string, unknown>;
}

export function serveMcp(input: Readable, output: Writable, o: ServerOptions): Peer {
  return serve(input, output, {
    initialize: (params) => ({
      protocolVersion: PROTOCOL_VERSIONS.includes(String(params.protocolVersion)) ? params.protocolVersion : PROTOCOL_VERSIONS[0],
      capabilities: { tools: { listChanged: false } },
      serverInfo: { name: 'subagents', title: 'subagents', version: o.version },
      instructions: INSTRUCTIONS,
    }),
    ping: () => ({}),
    'tools/list': () => ({
      tools: TOOLS.map((t) => ({ name: t.name, title: t.title, description: t.description, inputSchema: t.inputSchema })),
    }),
    'tools/call': async (params, signal) => {
      const tool = TOOLS.find((t) => t.name === params.name);
      if (!tool) throw new RpcError(INVALID_PARAMS, `no tool ${String(params.name)}`, { tools: TOOLS.map((t) => t.name) });
      const args = params.arguments ?? {};
      if (typeof args !== 'object' || args === null || Array.isArray(args)) throw new RpcError(INVALID_PARAMS, 'the arguments must be an object');
      try {
        return toolResult(await tool.call(args as Record<string, unknown>, o.context, signal), false);
      } catch (err) {
        return toolResult(o.errorBody(err), true);
      }
    },
  });
}

/** A tool's answer: the object as JSON text (what every host shows its model) and as structured content. */
function toolResult(value: unknown, isError: boolean): Record<string, unknown> {
  return { content: [{ type: 'text', text: JSON.stringify(value) }], structuredContent: value, isError };
}
