// Ollama: its own `think: false` switch; reasoning arrives as `reasoning`. /models lists `owned_by` as the
// model's namespace ("library" for the official ones), so its default port identifies it too.
import { baseDialect, openAiRequestBody } from './base-dialect.ts';
import type { UpstreamDialect } from './upstream-dialect.ts';

export const ollamaDialect: UpstreamDialect = {
  ...baseDialect,
  name: 'ollama',
  detection: { port: '11434', owners: ['library', 'ollama'] },
  transformRequest(r) {
    const body = openAiRequestBody(r);
    if (r.params.thinking.type === 'disabled') body.think = false;
    return body;
  },
};
