/** The usage figures an adapter reports (lib/agents/types.ts), as tests expect them. */

/** A usage of `input` and `output` tokens: no cache, no reasoning, no cost, unless `extra` says otherwise. */
export const usage = (input: number, output: number, extra: Partial<Record<string, number>> = {}) => ({
  inputTokens: input,
  outputTokens: output,
  cacheReadTokens: 0,
  cacheWriteTokens: 0,
  reasoningTokens: 0,
  totalTokens: input + output,
  costUsd: null,
  ...extra,
});
