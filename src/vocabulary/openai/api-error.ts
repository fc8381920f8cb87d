// The HTTP edge's one error currency: OpenAI's `{"error":{"message","type","param","code"}}` (schema: error-envelope.ts).
import type { z } from 'zod';
import type { apiErrorTypeSchema, ErrorEnvelope } from './error-envelope.ts';

export type ApiErrorType = z.infer<typeof apiErrorTypeSchema>;

export class ApiError extends Error {
  readonly status: number;
  readonly type: ApiErrorType;
  readonly param: string | null;
  readonly code: string | null;
  readonly headers: Record<string, string>;

  constructor(
    status: number,
    message: string,
    opts: { type?: ApiErrorType; param?: string | null; code?: string | null; headers?: Record<string, string> } = {},
  ) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.type = opts.type ?? (status >= 500 ? 'server_error' : 'invalid_request_error');
    this.param = opts.param ?? null;
    this.code = opts.code ?? null;
    this.headers = opts.headers ?? {};
  }

  toEnvelope(): ErrorEnvelope {
    return { error: { message: this.message, type: this.type, param: this.param, code: this.code } };
  }
}

/**
 * For answers a retry cannot fix (nothing configured, our own retries spent, a deadline passed): openai-node and
 * openai-python obey `x-should-retry` over their own status rule, which retries every 5xx.
 */
export const NO_RETRY: Readonly<Record<string, string>> = { 'x-should-retry': 'false' };

export const invalidRequest = (message: string, param: string | null = null, code: string | null = null) =>
  new ApiError(400, message, { param, code });

export const internalError = () => new ApiError(500, 'The server had an error while processing your request.', { code: 'internal_error' });
