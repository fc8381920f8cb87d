// The contract of one upstream dialect: everything a kind of OpenAI-compatible server does its own way, in one
// object (LiteLLM's transform_request / transform_response / get_error_class, per server). Types only.
// Only the shared upstream (../openai-compatible-upstream.ts), the stream normaliser and detection call these.
import type { ChatParams, UpstreamFlavour, Usage } from '../model-upstream.ts';
import type { UpstreamError } from '../upstream-error.ts';
import type { UpstreamWireUsage } from '../upstream-wire.ts';

/** The flavours spoken over HTTP: all but the in-process model, which has no wire dialect. */
export type DialectName = Exclude<UpstreamFlavour, 'local'>;

export interface DialectRequest {
  params: ChatParams;
  /** The model name the upstream expects. */
  model: string;
  stream: boolean;
}

/** A non-2xx reply, as received. */
export interface DialectErrorReply {
  status: number;
  /** The body as text: JSON, plain text or empty. */
  body: string;
  /** The upstream's Retry-After, in ms, when it sent one. */
  retryAfterMs: number | undefined;
}

/** How to recognise the dialect's server before the first request. All optional; first match wins. */
export interface DialectDetection {
  /** Hostnames only this dialect serves (hosted APIs). */
  readonly hosts?: RegExp;
  /** The port its server listens on by default, when no other server uses it. */
  readonly port?: string;
  /** `owned_by` values (lower case) in its `GET <base>/models` listing. */
  readonly owners?: readonly string[];
  /** A `GET` on the server root (the base URL without /v1) that only this server answers; tried when /models names no known owner. */
  readonly probe?: { readonly path: string; matches(json: unknown): boolean };
}

export interface UpstreamDialect {
  readonly name: DialectName;
  readonly detection: DialectDetection;
  /**
   * The server streams one token per chunk, so when it reports no usage the gateway can count completion
   * tokens honestly (chunks with reasoning, content or tool-call text).
   */
  readonly oneTokenPerChunk: boolean;
  /** The server drops `tools` without a word, so UPSTREAM_TOOL_MODE=auto writes them into the prompt instead. */
  readonly ignoresTools: boolean;
  /** Said beside the name in `--help` (UPSTREAM_FLAVOUR). */
  readonly note?: string;
  /** ChatParams → the JSON request body. Called once per request; retries reuse the serialised body. */
  transformRequest(request: DialectRequest): Record<string, unknown>;
  /** The wire usage block → gateway usage. Called once per reply, not per chunk. */
  transformUsage(usage: NonNullable<UpstreamWireUsage>): Usage;
  /** A non-2xx reply → the error the gateway reports (and retries on when `isRetryable`). */
  mapError(reply: DialectErrorReply): UpstreamError;
}
