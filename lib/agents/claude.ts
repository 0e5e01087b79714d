import { SubagentError } from '../errors.js';
import type { AgentAdapter } from './types.js';

// Placeholder until the adapter lands (issue 3): refuse clearly instead of pretending.
export const claude: AgentAdapter = new Proxy({} as AgentAdapter, {
  get() {
    throw new SubagentError('E_ARG_UNSUPPORTED', 'the claude adapter is not built yet', { cli: 'claude', hint: 'use --cli shell for now' });
  },
});
