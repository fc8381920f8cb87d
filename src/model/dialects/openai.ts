// api.openai.com: `max_completion_tokens` (its reasoning models reject `max_tokens`); no thinking switch.
import { baseDialect, openAiRequestBody } from './base-dialect.ts';
import type { UpstreamDialect } from './upstream-dialect.ts';

export const openaiDialect: UpstreamDialect = {
  ...baseDialect,
  name: 'openai',
  note: 'api.openai.com',
  detection: { hosts: /(^|\.)openai\.com$/ },
  transformRequest: (r) => openAiRequestBody(r, { maxTokensField: 'max_completion_tokens' }),
};
