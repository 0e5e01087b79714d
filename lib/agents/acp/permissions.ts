import type { PermissionPolicy } from '../../registry/record.js';

/**
 * How `--permissions` answers an agent's `session/request_permission` (docs/agents/acp.md,
 * "Permissions"): `approve-all` allows every call; `approve-reads` allows what only looks (ACP's tool
 * kinds `read`, `search`, `fetch`, `think`) and refuses the rest; `deny` refuses every call. Allowing
 * picks the agent's `allow_once` option, refusing its `reject_once` (each, failing that, its `*_always`
 * twin); an agent that offers neither kind is answered `cancelled`, which ACP reads as refused.
 */

const READS = new Set(['read', 'search', 'fetch', 'think']);

/** The default policy: the caller must ask for writes and commands; never a silent approve-all. */
export const DEFAULT_PERMISSIONS: PermissionPolicy = 'approve-reads';

export interface PermissionOption {
  optionId: string;
  kind: string;
}

/** The answer (`RequestPermissionResponse.outcome`) to a request about a call of `toolKind` offering `options`. */
export function permissionOutcome(policy: PermissionPolicy, toolKind: string | null, options: PermissionOption[]): object {
  const allow = policy === 'approve-all' || (policy === 'approve-reads' && toolKind !== null && READS.has(toolKind));
  const prefix = allow ? 'allow' : 'reject';
  const chosen = options.find((o) => o.kind === `${prefix}_once`) ?? options.find((o) => o.kind.startsWith(prefix));
  return chosen ? { outcome: 'selected', optionId: chosen.optionId } : { outcome: 'cancelled' };
}
