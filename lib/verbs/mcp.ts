import { runVerb } from '../cli/main.js';
import { parseFlags, str, type FlagSpec } from '../cli/flags.js';
import { packageVersion } from '../cli/version.js';
import { errorObject } from '../cli/output.js';
import { serveMcp } from '../mcp/server.js';

const USAGE = `usage: subagent-mcp [--registry DIR]

Serve the subagents verbs as MCP tools over stdio (JSON-RPC, one message a line), for an agent host
that takes MCP servers: start, batch, resume, status, result, search, cancel, history. Each tool
answers with the JSON object its verb prints; a failure is a tool error with the verb's code and hint.
Runs started here are ordinary runs: the verbs see them, and they outlive this server. docs/mcp.md.

  --registry DIR       the registry of every call (default: SUBAGENT_DIR, else the nearest .subagents/
                       above the server's directory, else ./.subagents), found as the verbs find it
  -h, --help           this text
  --version            the version, as one JSON line: {"ok":true,"version","node"}

Install it into a host: scripts/install-mcp.sh (docs/mcp.md).
`;

const SPEC: FlagSpec = { string: ['registry'], boolean: [] };

export function main(): Promise<void> {
  return runVerb(USAGE, SPEC, async (argv) => {
    const { values } = parseFlags(argv, SPEC);
    const peer = serveMcp(process.stdin, process.stdout, {
      context: { registry: str(values, 'registry'), env: process.env, cwd: process.cwd() },
      version: packageVersion(),
      errorBody: (err) => errorObject(err, null).body,
    });
    await peer.closed;
    // Nothing more to say on stdout: the protocol is over when the client closes its end.
    return { text: '' };
  });
}
