/**
 * Row 9 of `make bench`: a status call to subagent-mcp (the library in the server's process), against the
 * status verb's whole process on the same registry.
 */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { join } from 'node:path';
import { details, methods, rows } from './results.js';
import { bigRegistry } from './runs.js';
import { QUICK } from './setup.js';
import { FLOOR_CMD, timeCommands, timingText } from './timing.js';
import { BIN, cleanEnv, fmtMs, median, monoMs, q, quantile } from './util.js';

const N = 100;

/** Round trips of `tools/call status` over the server's stdio, one at a time, after `warmup` untimed ones. */
async function mcpStatusCalls(registry: string, calls: number, warmup: number): Promise<number[]> {
  const server = spawn(join(BIN, 'mcp'), ['--registry', registry], { env: cleanEnv(), stdio: ['pipe', 'pipe', 'ignore'] });
  const lines = createInterface({ input: server.stdout! });
  const answers: Array<(line: string) => void> = [];
  lines.on('line', (l) => answers.shift()?.(l));
  let id = 0;
  const ask = (method: string, params: object) =>
    new Promise<string>((resolve) => {
      answers.push(resolve);
      server.stdin!.write(`${JSON.stringify({ jsonrpc: '2.0', id: ++id, method, params })}\n`);
    });
  try {
    await ask('initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'bench', version: '1' } });
    server.stdin!.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);
    const times: number[] = [];
    for (let i = 0; i < warmup + calls; i++) {
      const t0 = monoMs();
      const line = await ask('tools/call', { name: 'status', arguments: {} });
      if (i >= warmup) times.push(monoMs() - t0);
      if (!line.includes('\\"ok\\":true')) throw new Error(`status through MCP failed: ${line.slice(0, 300)}`);
    }
    return times;
  } finally {
    server.stdin!.end();
    server.kill();
  }
}

export async function mcpRow(): Promise<void> {
  const reg = await bigRegistry(N);
  const calls = QUICK ? 50 : 200;
  const times = await mcpStatusCalls(reg.dir, calls, 10);
  const verbCmd = `${q(join(BIN, 'status'))} --registry ${q(reg.dir)} > /dev/null`;
  const [floor, verb] = await timeCommands(
    [
      { name: 'node -e 0', cmd: FLOOR_CMD },
      { name: 'status verb', cmd: verbCmd },
    ],
    { runs: QUICK ? 10 : 30, warmup: 3 },
  );
  const m = median(times);
  rows.push({
    what: `status through subagent-mcp (${N} done runs)`,
    target: '≤ 5 ms median a call, inside the server',
    on: `median **${fmtMs(m, 2)}**, p95 ${fmtMs(quantile(times, 0.95), 2)} a call; the status verb's whole process: median ${fmtMs(verb!.median)}`,
    plain: null,
    floor: `\`node -e 0\`: ${fmtMs(floor!.median)}`,
    verdict: m <= 5 ? 'meets' : '**misses**',
  });
  details.push(
    `### 9. status through subagent-mcp\n\n- ${calls} calls of \`tools/call status\` on ${N} done runs, one at a time: median ${fmtMs(m, 2)}, p95 ${fmtMs(quantile(times, 0.95), 2)}, max ${fmtMs(Math.max(...times), 2)}\n- the verb: ${timingText(verb!)}\n- \`node -e 0\`: ${timingText(floor!)}\n`,
  );
  methods.push({
    title: '9. status through subagent-mcp',
    text:
      `One \`bin/mcp --registry R\` on the registry of ${N} done runs of row 2, initialized as a host does; then \`tools/call status\` (no arguments: the whole listing) ` +
      `${calls} times, one at a time after 10 untimed calls, each timed from the request's write to its answer's line over the pipes. ` +
      'Beside it, hyperfine times the status verb on the same registry, and `node -e 0`.',
  });
}
