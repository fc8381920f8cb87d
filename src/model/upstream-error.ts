/** An upstream failure, with what the HTTP edge needs to map it to the OpenAI envelope. */
export class UpstreamError extends Error {
  readonly statusCode: number | undefined;
  readonly responseBody: string | undefined;
  readonly isRetryable: boolean;
  readonly retryAfterMs: number | undefined;
  /** The upstream's host[:port] (never userinfo, path or query), for the edge's message; set by the transport. */
  host: string | undefined;

  constructor(
    message: string,
    options: { statusCode?: number; responseBody?: string; retryAfterMs?: number; cause?: unknown; host?: string } = {},
  ) {
    super(message, { cause: options.cause });
    this.name = 'UpstreamError';
    this.statusCode = options.statusCode;
    this.responseBody = options.responseBody;
    this.retryAfterMs = options.retryAfterMs;
    this.isRetryable = isRetryableStatus(options.statusCode);
    this.host = options.host;
  }
}

/** 408, 409, 429 and 5xx are worth another try; undefined means a network error. */
function isRetryableStatus(status: number | undefined): boolean {
  if (status === undefined) return true;
  return status === 408 || status === 409 || status === 429 || status >= 500;
}
