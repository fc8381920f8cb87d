// Any other OpenAI-compatible server, and the default when detection is unsure: plain OpenAI with `max_tokens`
// (which every such server knows), no thinking switch.
import { baseDialect } from './base-dialect.ts';
import type { UpstreamDialect } from './upstream-dialect.ts';

export const openaiCompatibleDialect: UpstreamDialect = {
  ...baseDialect,
  name: 'openai-compatible',
  note: 'any other',
  detection: {},
};
