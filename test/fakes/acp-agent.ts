// A tiny agent that speaks ACP on stdio, for the CLI tests of `--cli acp` (test/cli/acp.test.ts): its
// behaviour is its first argument, and the prompt's words steer it:
//   ok        initialize (loadSession), session/new (`fake-<pid>`), session/load; the prompt answered
//             `echo: <first line> (<bytes> bytes)`, end_turn. `PERM:<kind>` in the prompt first asks
//             permission for a tool call of that ACP kind and says `allowed`/`refused`; `WAIT` holds the
//             turn until session/cancel (then stopReason cancelled).
//   noresume  as ok, offering neither session/load nor session/resume
//   crash     exits 3 after session/new, with `boom: the fake agent crashed` on stderr
//   badjson   as ok, with lines that are not JSON-RPC first
//   early     exits 0 right after its answer to initialize
import { createInterface } from 'node:readline';

const mode = process.argv[2] ?? 'ok';
const send = (o: object) => process.stdout.write(`${JSON.stringify({ jsonrpc: '2.0', ...o })}\n`);
const update = (sessionId: string, u: object) => send({ method: 'session/update', params: { sessionId, update: u } });
let waiting: { id: number; sessionId: string } | null = null;
let permission: ((allowed: boolean) => void) | null = null;

function answer(id: number, sessionId: string, text: string): void {
  update(sessionId, { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text } });
  send({ id, result: { stopReason: 'end_turn', usage: { inputTokens: 10, outputTokens: 2, totalTokens: 12 } } });
}

createInterface({ input: process.stdin }).on('line', (line) => {
  const m = JSON.parse(line);
  if (m.method === 'initialize') {
    send({ id: m.id, result: { protocolVersion: 1, agentCapabilities: { loadSession: mode !== 'noresume' } } });
    if (mode === 'early') process.exit(0);
    return;
  }
  if (m.method === 'session/new' || m.method === 'session/load') {
    if (mode === 'crash') {
      process.stderr.write('boom: the fake agent crashed\n');
      process.exit(3);
    }
    if (mode === 'badjson') process.stdout.write('Warning: not JSON\n{"torn":\n');
    send({ id: m.id, result: m.method === 'session/new' ? { sessionId: `fake-${process.pid}` } : {} });
    return;
  }
  if (m.method === 'session/prompt') {
    const { sessionId } = m.params;
    const text: string = m.params.prompt[0].text;
    const first = text.split('\n')[0];
    const said = `echo: ${first} (${Buffer.byteLength(text)} bytes)`;
    const kind = /PERM:(\w+)/.exec(text)?.[1];
    if (kind) {
      update(sessionId, { sessionUpdate: 'tool_call', toolCallId: 't1', title: `a ${kind} call`, kind, status: 'pending' });
      send({
        id: 'perm-1',
        method: 'session/request_permission',
        params: {
          sessionId,
          toolCall: { toolCallId: 't1', title: `a ${kind} call`, kind },
          options: [
            { optionId: 'yes', name: 'Allow', kind: 'allow_once' },
            { optionId: 'no', name: 'Deny', kind: 'reject_once' },
          ],
        },
      });
      permission = (allowed) => {
        update(sessionId, { sessionUpdate: 'tool_call_update', toolCallId: 't1', status: allowed ? 'completed' : 'failed' });
        answer(m.id, sessionId, `${said} ${allowed ? 'allowed' : 'refused'}`);
      };
      return;
    }
    if (text.includes('WAIT')) {
      update(sessionId, { sessionUpdate: 'tool_call', toolCallId: 'w1', title: 'sleep 300', kind: 'execute', status: 'in_progress' });
      waiting = { id: m.id, sessionId };
      return;
    }
    answer(m.id, sessionId, said);
    return;
  }
  if (m.method === 'session/cancel' && waiting) {
    send({ id: waiting.id, result: { stopReason: 'cancelled' } });
    waiting = null;
    return;
  }
  if (m.id === 'perm-1' && permission) permission(m.result?.outcome?.optionId === 'yes');
});
