// llama.cpp's own C++ server (`llama-server`): the chat-template switch (with --jinja), reasoning as
// `reasoning_content`, one token per stream chunk. /models says `owned_by: "llamacpp"`; older builds are
// recognised by `GET /props`, which only llama-server answers (with `default_generation_settings`).
import { baseDialect, templateThinkingRequest } from './base-dialect.ts';
import type { UpstreamDialect } from './upstream-dialect.ts';

const isProps = (json: unknown): boolean =>
  typeof json === 'object' &&
  json !== null &&
  typeof (json as { default_generation_settings?: unknown }).default_generation_settings === 'object';

export const llamacppDialect: UpstreamDialect = {
  ...baseDialect,
  name: 'llamacpp',
  note: 'llama-server',
  detection: { owners: ['llamacpp', 'llama.cpp'], probe: { path: '/props', matches: isProps } },
  oneTokenPerChunk: true,
  transformRequest: templateThinkingRequest,
};
