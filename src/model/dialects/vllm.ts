// vLLM: thinking is switched off in the chat template; reasoning arrives as `reasoning` (0.16+) or
// `reasoning_content` (with --reasoning-parser), or inline <think> tags without a parser.
import { baseDialect, templateThinkingRequest } from './base-dialect.ts';
import type { UpstreamDialect } from './upstream-dialect.ts';

export const vllmDialect: UpstreamDialect = {
  ...baseDialect,
  name: 'vllm',
  detection: { owners: ['vllm'] },
  transformRequest: templateThinkingRequest,
};
