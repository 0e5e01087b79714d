import { createInterface } from 'node:readline';
import { METHOD_NOT_FOUND, rpcLine, rpcMessage, type RpcId } from '../../base/jsonrpc.js';
import { fields, parseObject, str } from '../../base/json.js';
import type { PermissionPolicy } from '../../registry/record.js';
import type { Driver, DriverIo, LaunchInput } from '../types.js';
import { CLIENT_ERROR, CLIENT_KEY, clientLine } from './log.js';
import { permissionOutcome, type PermissionOption } from './permissions.js';

/**
 * The supervisor's side of ACP, the client (docs/agents/acp.md): initialize, `session/new` (or, for a
 * resume, `session/load` or `session/resume`, as the agent's capabilities offer), one `session/prompt`
 * with the run's prompt, every request of the agent answered (permissions by the run's policy; nothing
 * else is offered), then the agent's stdin ended. Every line the agent sends goes to the event log as it
 * came, and every message of ours beside it (`{"client": …}`; the prompt as its size only: it is the
 * run's prompt file), so that the run's reader (stream.ts) sees the whole conversation.
 */

/** The ACP version we speak (the protocol's `protocolVersion`). */
export const PROTOCOL_VERSION = 1;
/** How long a cancel waits for the agent to answer its prompt after `session/cancel`, before the signals. */
export const CANCEL_WAIT_MS = 2000;

type Answer = { result: Record<string, unknown>; error: null } | { result: null; error: { code: number; message: string } };

export function drive(input: LaunchInput, io: DriverIo, policy: PermissionPolicy): Driver {
  let next = 0;
  const waiting = new Map<RpcId, (a: Answer) => void>();
  let sessionId: string | null = null;
  let prompted: Promise<Answer> | null = null;
  let closed = false;
  const write = (message: object, logged: object = message): void => {
    io.log(clientLine(logged));
    if (!closed) io.input.write(rpcLine(message));
  };
  const request = (method: string, params: object, logged?: object): Promise<Answer> => {
    const id = ++next;
    const answer = new Promise<Answer>((resolve) => waiting.set(id, resolve));
    write({ id, method, params }, logged && { id, method, params: logged });
    return answer;
  };
  const toAgent = (id: RpcId, method: string, params: Record<string, unknown>): void => {
    if (method === 'session/request_permission') {
      const options = (Array.isArray(params.options) ? params.options : [])
        .map(fields)
        .filter((o) => typeof o.optionId === 'string') as unknown as PermissionOption[];
      write({ id, result: { outcome: permissionOutcome(policy, str(fields(params.toolCall).kind), options) } });
      return;
    }
    // We offer no file system and no terminal (clientCapabilities): nothing else is ours to do.
    write({ id, error: { code: METHOD_NOT_FOUND, message: `the client does not offer ${method}` } });
  };
  let ended!: () => void;
  const outputEnded = new Promise<void>((resolve) => (ended = resolve));
  const lines = createInterface({ input: io.output, crlfDelay: Number.POSITIVE_INFINITY });
  lines.on('line', (line) => {
    io.log(line);
    const o = parseObject(line);
    const m = o && !(CLIENT_KEY in o) ? rpcMessage(o) : null;
    if (m?.kind === 'answer') {
      const resolve = waiting.get(m.id);
      waiting.delete(m.id);
      resolve?.(m.error ? { result: null, error: m.error } : { result: fields(m.result), error: null });
    } else if (m?.kind === 'request') toAgent(m.id, m.method, m.params);
  });
  lines.once('close', () => {
    // The agent is gone: nothing it owes will come.
    for (const resolve of waiting.values()) resolve({ result: null, error: { code: 0, message: 'the agent closed its output' } });
    waiting.clear();
    ended();
  });
  io.input.on('error', (err) => io.diag(`the agent's stdin: ${err.message}`));
  const finish = (): void => {
    if (closed) return;
    closed = true;
    io.input.end();
  };

  const peer: Peer = {
    request,
    write,
    session: (id) => (sessionId = id),
    prompting: (turn) => (prompted = turn),
  };
  const done = Promise.race([converse(input, io, peer), outputEnded])
    .catch((err: unknown) => io.diag(`the ACP conversation failed: ${(err as Error).message}`))
    .finally(finish);

  return {
    done,
    async cancel(): Promise<void> {
      if (closed || sessionId === null) return;
      write({ method: 'session/cancel', params: { sessionId } });
      const turn = prompted;
      if (turn) await Promise.race([turn, new Promise((r) => setTimeout(r, CANCEL_WAIT_MS).unref())]);
    },
  };
}

/** What the conversation needs of the client: its requests and writes, and where it keeps the session and the turn. */
interface Peer {
  request(method: string, params: object, logged?: object): Promise<Answer>;
  write(message: object): void;
  session(id: string | null): void;
  prompting(turn: Promise<Answer>): void;
}

/** The conversation: initialize, the session (new, or loaded or resumed), the one prompt; over when its turn is. */
async function converse(input: LaunchInput, io: DriverIo, peer: Peer): Promise<void> {
  const init = await peer.request('initialize', {
    protocolVersion: PROTOCOL_VERSION,
    clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
  });
  if (init.error) return;
  const caps = fields(init.result.agentCapabilities);
  const where = { cwd: input.cwd, mcpServers: [] };
  let sessionId: string | null;
  if (input.mode === 'resume') {
    const method = caps.loadSession === true ? 'session/load' : fields(caps.sessionCapabilities).resume !== undefined ? 'session/resume' : null;
    if (method === null) {
      peer.write({ method: CLIENT_ERROR, params: { message: 'the agent offers neither session/load nor session/resume: its sessions cannot be resumed' } });
      return;
    }
    sessionId = input.sessionId;
    peer.session(sessionId);
    if ((await peer.request(method, { sessionId, ...where })).error) return;
  } else {
    const made = await peer.request('session/new', where);
    if (made.error) return;
    sessionId = str(made.result.sessionId);
    peer.session(sessionId);
  }
  const text = io.prompt.toString('utf8');
  const turn = peer.request('session/prompt', { sessionId, prompt: [{ type: 'text', text }] }, { sessionId, promptBytes: io.prompt.length });
  peer.prompting(turn);
  await turn;
}
