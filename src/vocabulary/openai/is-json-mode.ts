import type { ResponseFormat } from './chat-request.ts';

/**
 * JSON mode: the client asked for `json_object` or `json_schema`. Then the format goes upstream, the answer must
 * be one JSON value, and it is checked and sent whole (never streamed piecewise, never joined across agent steps).
 */
export function isJsonMode(format: ResponseFormat | undefined): format is Exclude<ResponseFormat, { type: 'text' }> {
  return format?.type === 'json_object' || format?.type === 'json_schema';
}
