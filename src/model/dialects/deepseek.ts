// DeepSeek, and the APIs that copied its dialect (GLM/Zhipu, Kimi/Moonshot): `thinking` is passed through both
// ways, reasoning arrives as `reasoning_content`, and cache hits may be reported as `prompt_cache_hit_tokens`.
import { baseDialect, openAiRequestBody, openAiUsage } from './base-dialect.ts';
import type { UpstreamDialect } from './upstream-dialect.ts';

export const deepseekDialect: UpstreamDialect = {
  ...baseDialect,
  name: 'deepseek',
  detection: { hosts: /(^|\.)deepseek\.com$|(^|\.)bigmodel\.cn$|(^|\.)z\.ai$|(^|\.)moonshot\.(ai|cn)$/ },
  transformRequest(r) {
    const body = openAiRequestBody(r);
    body.thinking = { type: r.params.thinking.type };
    return body;
  },
  transformUsage(u) {
    const usage = openAiUsage(u);
    if (u.prompt_tokens_details?.cached_tokens == null && u.prompt_cache_hit_tokens != null)
      usage.cached_tokens = Math.trunc(u.prompt_cache_hit_tokens);
    return usage;
  },
};
