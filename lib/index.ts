/**
 * subagents as a library: the same functions the verbs call, for Node callers that would rather not
 * spawn a process. Each takes an options object (its `…Options` type) and resolves to the object the
 * verb prints as its JSON line (its `…Result` type), or rejects with a `SubagentError` carrying the same
 * `code`, `message` and `details` the verb would print. Registry discovery is the same (`registry`,
 * SUBAGENT_DIR, the nearest `.subagents/`); pass `env` and `cwd` to run as if from elsewhere. The whole
 * API: docs/library.md.
 *
 *   import { start, status, result } from 'subagents';
 *   await start({ name: 'review/api', prompt: Buffer.from('echo hi'), cli: 'shell' });
 *   const { agents } = await status({ names: ['review/api'], waitTerminal: true });
 */
export type { Context } from './commands/context.js';
export type { WatchOptions } from './commands/run-watch.js';
export type { LimitOptions } from './commands/on-limit.js';
export type { AfterOptions } from './commands/after.js';
export type { AcpOptions } from './commands/acp.js';
export { start, type StartOptions, type StartResult } from './commands/start.js';
export { batch, type BatchOptions, type BatchDefaults, type BatchResult, type BatchStarted, type BatchFailed } from './commands/batch.js';
export { resume, type ResumeOptions, type ResumeResult } from './commands/resume.js';
export { status, type StatusOptions, type StatusResult, type Change, type AgentEntry, type QueueSummary, type Problem } from './commands/status.js';
export { history, type HistoryOptions, type HistoryResult, type HistoryRun } from './commands/history.js';
export { result, type ResultOptions, type ResultResult, type RunAnswer, type RunsAnswer, type ChildAnswer } from './commands/result.js';
export { search, type SearchOptions, type SearchResult, type SearchMatch } from './commands/search.js';
export { follow, type FollowOptions, type FollowLine } from './commands/follow.js';
export { cancel, type CancelOptions, type CancelResult, type DescendantCancel } from './commands/cancel.js';
export { prune, type PruneOptions, type PruneResult, type PrunedRun, type PrunedWorktree } from './commands/prune.js';
export {
  queueResume,
  cancelQueued,
  type QueueOptions,
  type QueuedResult,
  type CancelQueuedOptions,
  type CancelQueuedResult,
} from './commands/follow-ups.js';
export type { FollowUp } from './registry/follow-ups.js';
export { SubagentError, ERROR_CODES, type ErrorCode, type ErrorDetails } from './base/errors.js';
export type {
  Status,
  Outcome,
  RunRecord,
  ScheduledRecord,
  RunningRecord,
  DoneRecord,
  RunEnd,
  EndReason,
  Usage,
  ChildAgent,
  Reason,
  LimitWarning,
  LimitPolicy,
  AcpSettings,
  PermissionPolicy,
  Caps,
} from './registry/record.js';
export { REASONS } from './registry/record.js';
export type { CapOptions } from './commands/caps.js';
export type { AgentAdapter, AgentRun, CliName, Message } from './agents/types.js';
export { validateName } from './registry/names.js';
export { locateRegistry, type RegistryLocation } from './registry/locate.js';
