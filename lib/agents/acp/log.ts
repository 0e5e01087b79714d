/**
 * A run's event log under `--cli acp`: the agent's lines as it sent them, and the client's own messages
 * wrapped under this key, so that a reader tells who said what (lib/agents/acp/stream.ts).
 */
export const CLIENT_KEY = 'client';

/** The client's message as its line of the event log (without the newline). */
export function clientLine(message: object): string {
  return JSON.stringify({ [CLIENT_KEY]: { jsonrpc: '2.0', ...message } });
}

/** The method of the client's line that fails the run itself, `params.message` saying why (a resume the agent does not offer). */
export const CLIENT_ERROR = '_subagents/error';
