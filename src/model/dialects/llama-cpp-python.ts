// llama-cpp-python's server (`python -m llama_cpp.server`, 0.3.x). Facts from a real run of 0.3.36:
// - /models says `owned_by: "me"`;
// - it knows `max_tokens` only, ignores `stream_options` (its streams carry no usage; non-streamed replies do),
//   and has no thinking switch (no `chat_template_kwargs`);
// - `response_format` is `{type: "json_object", schema?}`: OpenAI's `json_schema` form fails its validation;
// - streams carry one token per chunk;
// - failures in its handler (grammar, tool-call parsing) are 500s with `{"error":{"message",
//   "type":"internal_server_error"}}` or a plain-text body, which is the only clue the client gets.
import type { ResponseFormat } from '../../vocabulary/openai/chat-request.ts';
import { isJsonMode } from '../../vocabulary/openai/is-json-mode.ts';
import { baseDialect, openAiRequestBody, statusError } from './base-dialect.ts';
import type { UpstreamDialect } from './upstream-dialect.ts';

const MESSAGE_MAX = 200;

/** The server's own words: its envelope's `error.message`, or the plain-text body; one line, truncated. */
export function serverMessage(body: string): string {
  const line = serverMessageRaw(body).replace(/\s+/g, ' ').trim();
  return line.length > MESSAGE_MAX ? `${line.slice(0, MESSAGE_MAX - 1)}…` : line;
}

/** The envelope's `error.message` or the plain-text body, as sent. */
function serverMessageRaw(body: string): string {
  let text = body;
  try {
    const json = JSON.parse(body) as { error?: { message?: unknown } | string } | null;
    const message = typeof json?.error === 'string' ? json.error : json?.error?.message;
    // JSON without a message is not the server explaining itself; say nothing rather than echo it.
    text = typeof message === 'string' ? message : '';
  } catch {
    // plain text (e.g. starlette's "Internal Server Error")
  }
  return text;
}

/**
 * Its request validation failures come back as 500s (pydantic's "N validation error(s)"), which would be retried
 * although no retry can help. They are the client's 400; only `loc` and `msg` are kept, never pydantic's `input`,
 * which can echo message content.
 */
function validationFailure(body: string): string | undefined {
  const message = serverMessageRaw(body);
  if (!/^\d+ validation errors?:/.test(message)) return undefined;
  const details = [...message.matchAll(/'loc': \(([^)]*)\), 'msg': '([^']*)'/g)].map(
    (m) => `${m[1]!.replace(/'/g, '').replace(/, /g, '.')}: ${m[2]}`,
  );
  return `the upstream rejected the request: ${details.join('; ') || 'validation error'}`;
}

function responseFormat(rf: ResponseFormat): unknown {
  return rf.type === 'json_schema' ? { type: 'json_object', ...(rf.json_schema.schema ? { schema: rf.json_schema.schema } : {}) } : rf;
}

export const llamaCppPythonDialect: UpstreamDialect = {
  ...baseDialect,
  name: 'llama-cpp-python',
  detection: { owners: ['me'] },
  oneTokenPerChunk: true,
  // Its default chat handlers drop `tools` (issue 9).
  ignoresTools: true,
  transformRequest(r) {
    const body = openAiRequestBody(r, { streamUsage: false });
    if (isJsonMode(r.params.responseFormat)) body.response_format = responseFormat(r.params.responseFormat);
    return body;
  },
  mapError(r) {
    if (r.status < 500) return statusError(r);
    const invalid = validationFailure(r.body);
    if (invalid)
      return statusError(
        { ...r, status: 400, body: JSON.stringify({ error: { message: invalid } }) },
        'upstream rejected the request as invalid',
      );
    const said = serverMessage(r.body);
    return statusError(r, said ? `upstream answered HTTP ${r.status}: ${said}` : undefined);
  },
};
