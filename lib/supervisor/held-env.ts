/**
 * Variables that only the agent needs but that would cost the supervisor's own start-up: Node 20 reads
 * and parses NODE_EXTRA_CA_CERTS while it starts, before any code runs (~25-35 ms of CPU for a
 * distribution's CA bundle, measured on the test VM, where it is set machine-wide), and a supervisor
 * makes no TLS connection. They travel under HELD_PREFIX and the supervisor puts them back
 * (restoreHeldEnv) before it spawns anything, so the agent's environment is the caller's.
 */
const HELD_FOR_AGENT = ['NODE_EXTRA_CA_CERTS'];
const HELD_PREFIX = 'SUBAGENT_HELD_';

/** In the start command: moves the held variables out of the supervisor's way (a stale held copy is dropped). */
export function holdForAgent(env: NodeJS.ProcessEnv): void {
  for (const key of HELD_FOR_AGENT) {
    delete env[HELD_PREFIX + key];
    if (env[key] === undefined) continue;
    env[HELD_PREFIX + key] = env[key];
    delete env[key];
  }
}

/** In the supervisor: gives the held variables their own names back, for the agent and its tools. */
export function restoreHeldEnv(env: NodeJS.ProcessEnv): void {
  for (const key of HELD_FOR_AGENT) {
    const held = env[HELD_PREFIX + key];
    delete env[HELD_PREFIX + key];
    if (held !== undefined) env[key] = held;
  }
}
