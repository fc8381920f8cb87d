// Fastify hooks for every request: the request counter and latency histogram by route template, and the request's
// server span, made the active context of its handler so the model steps, tool calls and FHIR requests nest under
// it. Registered before the auth guard, so rejected requests (401, 429) are counted and traced too.
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, context, trace, type Span } from '@opentelemetry/api';
import { ATTR_HTTP_REQUEST_METHOD, ATTR_HTTP_RESPONSE_STATUS_CODE, ATTR_HTTP_ROUTE } from '@opentelemetry/semantic-conventions';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Telemetry } from './telemetry.ts';

/** The route template (`/v1/models/*`), never the path: paths carry ids. Unrouted requests are one label. */
const routeOf = (req: FastifyRequest) => req.routeOptions.url ?? 'unmatched';

export function registerTelemetryHooks(app: FastifyInstance, { metrics, tracer }: Telemetry): void {
  if (!metrics && !tracer) return;
  const spans = new WeakMap<FastifyRequest, Span>();
  if (tracer) {
    app.addHook('onRequest', (req, _reply, done) => {
      const route = routeOf(req);
      const span = tracer.startSpan(
        `${req.method} ${route}`,
        { kind: SpanKind.SERVER, attributes: { [ATTR_HTTP_REQUEST_METHOD]: req.method, [ATTR_HTTP_ROUTE]: route } },
        ROOT_CONTEXT,
      );
      spans.set(req, span);
      done();
    });
    // The body has been read by now (in the socket's own async context): the handler runs inside the span's.
    app.addHook('preHandler', (req, _reply, done) => {
      const span = spans.get(req);
      if (span) context.with(trace.setSpan(ROOT_CONTEXT, span), done);
      else done();
    });
  }
  app.addHook('onResponse', (req, reply, done) => {
    const status = reply.statusCode;
    metrics?.httpRequest(req.method, routeOf(req), status, reply.elapsedTime / 1000);
    const span = spans.get(req);
    if (span) {
      span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, status);
      if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
    }
    done();
  });
}
