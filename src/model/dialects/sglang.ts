// SGLang: the same chat-template switch as vLLM; reasoning as `reasoning_content` with --reasoning-parser.
import { baseDialect, templateThinkingRequest } from './base-dialect.ts';
import type { UpstreamDialect } from './upstream-dialect.ts';

export const sglangDialect: UpstreamDialect = {
  ...baseDialect,
  name: 'sglang',
  detection: { owners: ['sglang'] },
  transformRequest: templateThinkingRequest,
};
