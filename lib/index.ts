/**
 * subagents as a library: the same functions the verbs call, for Node callers that would rather not
 * spawn a process. Each takes an options object and resolves to the object the verb prints as its JSON
 * line (`ok: true` …), or rejects with a `SubagentError` carrying the same `code`, `message` and
 * `details` the verb would print. Registry discovery is the same (`registry`, SUBAGENT_DIR, the nearest
 * `.subagents/`); pass `env` and `cwd` to run as if from elsewhere. The whole API: docs/library.md.
 *
 *   import { start, status, result } from 'subagents';
 *   await start({ name: 'review/api', prompt: Buffer.from('echo hi'), cli: 'shell' });
 *   const { agents } = await status({ names: ['review/api'], waitTerminal: true });
 */
export { start, type StartOptions } from './commands/start.js';
export { resume, type ResumeOptions } from './commands/resume.js';
export { status, type StatusOptions } from './commands/status.js';
export { result, type ResultOptions } from './commands/result.js';
export { search, type SearchOptions } from './commands/search.js';
export { follow, type FollowOptions, type FollowLine } from './commands/follow.js';
export { cancel, type CancelOptions } from './commands/cancel.js';
export { batch, type BatchOptions } from './commands/batch.js';
export { SubagentError, ERROR_CODES, type ErrorCode } from './base/errors.js';
export type { Status, Outcome, RunRecord, Usage, ChildAgent } from './registry/record.js';
export type { AgentAdapter, CliName, Message } from './agents/types.js';
export { validateName } from './registry/names.js';
export { locateRegistry } from './registry/locate.js';
