// One error handler for the whole app: everything leaves in the OpenAI envelope, fastify's own errors included,
// and 5xx responses never carry internal details.
import { badRequest, forbidden, tooManyRequests, unauthorized } from '@medplum/core';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { withDiagnostics } from '../../vocabulary/fhir/with-diagnostics.ts';
import { ApiError, NO_RETRY, internalError } from '../../vocabulary/openai/api-error.ts';
import { UpstreamError } from '../../model/upstream-error.ts';

function upstreamMessage(body: string | undefined): string | undefined {
  try {
    const m = (JSON.parse(body ?? '') as { error?: { message?: unknown } | string; message?: unknown }) ?? {};
    const msg = typeof m.error === 'string' ? m.error : (m.error?.message ?? m.message);
    return typeof msg === 'string' ? msg.slice(0, 500) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Maps an upstream failure to what the client should see. Credentials and model names are ours, so 401/403/404 are
 * 502s. Our own retries are spent by now, so every 5xx here says `x-should-retry: false`: an SDK retrying it would
 * multiply the upstream calls (3 of ours × 3 of openai-node's). A 429 stays retryable, with its Retry-After.
 */
export function upstreamToApiError(e: UpstreamError): ApiError {
  const s = e.statusCode;
  if (s === 429) {
    return new ApiError(429, 'The upstream model server is rate limiting requests; retry later.', {
      type: 'rate_limit_error',
      code: 'rate_limit_exceeded',
      headers: { 'retry-after': String(Math.max(1, Math.ceil((e.retryAfterMs ?? 1000) / 1000))) },
    });
  }
  if (s === 400 || s === 413 || s === 422) {
    return new ApiError(
      s === 413 ? 413 : 400,
      `The upstream model server rejected the request: ${upstreamMessage(e.responseBody) ?? 'invalid request'}`,
      {
        code: 'upstream_invalid_request',
      },
    );
  }
  // The host only, never the URL: a base URL may carry userinfo or a key in its query.
  const server = e.host ? `The upstream model server at ${e.host}` : 'The upstream model server';
  if (s === 408) return new ApiError(504, `${server} timed out.`, { code: 'upstream_timeout', headers: NO_RETRY });
  if (s === 401 || s === 403) {
    return new ApiError(502, `${server} rejected the gateway credentials (HTTP ${s}).`, { code: 'upstream_auth_error', headers: NO_RETRY });
  }
  // UpstreamError messages are always the gateway's own words (never the upstream body), so they are safe to show.
  return new ApiError(502, `${server} failed: ${e.message.replace(/^upstream /, '')}.`, { code: 'upstream_error', headers: NO_RETRY });
}

export function toApiError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  if (err instanceof UpstreamError) return upstreamToApiError(err);
  const e = err as Partial<FastifyError>;
  switch (e.code) {
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new ApiError(400, 'We could not parse the JSON body of your request. Send valid JSON in UTF-8.', { code: 'invalid_json' });
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new ApiError(400, 'The request body is empty; send a JSON object.', { code: 'invalid_json' });
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new ApiError(413, 'The request body is too large.', { code: 'request_too_large' });
    case 'FST_ERR_BAD_URL':
      return new ApiError(400, 'The request path is not a valid URL: it has a malformed percent escape.', { code: 'invalid_request' });
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return e.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE'
        ? new ApiError(415, "Unsupported Content-Type; send 'application/json'.", { code: 'unsupported_media_type' })
        : new ApiError(400, 'Content-Length does not match the body.', { code: 'invalid_request' });
  }
  if (typeof e.statusCode === 'number' && e.statusCode >= 400 && e.statusCode < 500) {
    return new ApiError(e.statusCode, e.message ?? 'Bad request.', { code: 'invalid_request' });
  }
  return internalError();
}

function sendApiError(reply: FastifyReply, err: ApiError): FastifyReply {
  return reply.code(err.status).headers(err.headers).type('application/json; charset=utf-8').send(err.toEnvelope());
}

export function registerErrorHandling(app: FastifyInstance): void {
  // No route for this method and path: a 405 naming the methods the path has (found by schemathesis, ST204), else 404.
  const routeMiss = (req: FastifyRequest): ApiError => {
    const path = req.url.split('?')[0]!;
    const allowed = METHODS.filter((method) => app.findRoute({ method, url: path }) !== null);
    if (allowed.length === 0)
      return new ApiError(404, `Unknown route: ${req.method} ${path}`, { code: 'not_found', type: 'invalid_request_error' });
    return new ApiError(405, `${req.method} is not allowed on ${path}; use ${allowed.join(' or ')}.`, {
      code: 'method_not_allowed',
      headers: { allow: allowed.join(', ') },
    });
  };
  app.setErrorHandler((err: unknown, req: FastifyRequest, reply: FastifyReply) => {
    // A body error on a request no route takes (QUERY without a Content-Type): the missing route is the answer.
    const api = req.is404 && !(err instanceof ApiError) ? routeMiss(req) : toApiError(err);
    // Expected failures (the client's 4xx, the upstream's, our own ApiErrors) are warnings without a stack; only
    // what nobody anticipated is an error. Upstream bodies may echo prompts (PHI): only our message and the status.
    if (err instanceof UpstreamError)
      req.log.warn({ upstreamStatus: err.statusCode, upstreamHost: err.host, reason: err.message }, 'upstream failed');
    else if (api.status >= 500 && !(err instanceof ApiError)) req.log.error({ err }, 'request failed');
    else req.log.warn({ status: api.status, code: api.code }, api.status >= 500 ? 'request failed' : 'request rejected');
    return sendApiError(reply, api);
  });
  app.setNotFoundHandler((req, reply) => sendApiError(reply, routeMiss(req)));
}

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

/** Whether the request belongs to /fhir: by the route it matched, else by its decoded path (a 404, a bad URL). */
function isFhirPath(req: FastifyRequest): boolean {
  const route = req.routeOptions?.url;
  // Under a host's prefix (fhirAgentGateway) the route is /<prefix>/fhir/…
  if (route) return /(^|\/)fhir(\/|$)/.test(route);
  let path = req.url.split('?', 1)[0]!;
  try {
    path = decodeURIComponent(path);
  } catch {
    // A malformed escape: judged on the raw path.
  }
  return /^\/+fhir(\/|$)/.test(path);
}

/** The OpenAI envelope on /v1; FHIR clients on /fhir get the same rejection as an OperationOutcome. */
export function sendRejection(req: FastifyRequest, reply: FastifyReply, err: ApiError): void {
  if (!isFhirPath(req)) {
    sendApiError(reply, err);
    return;
  }
  const outcome =
    err.status === 401 ? unauthorized : err.status === 403 ? forbidden : err.status === 429 ? tooManyRequests : badRequest(err.message);
  void reply.code(err.status).headers(err.headers).type('application/fhir+json; charset=utf-8').send(withDiagnostics(outcome, err.message));
}
