// GET /metrics: Prometheus text. Outside /v1 and /fhir, so API keys do not apply: a scraper sends METRICS_TOKEN
// (compared in constant time) when one is configured; without one only loopback clients are answered, since the
// series name key ids and tools, which is more than a stranger on the network needs to know. The Host must be one
// the gateway serves (loopback names, ALLOWED_HOSTS, PUBLIC_BASE_URL's) with or without keys: a rebinding page
// runs on a loopback client, so the client address alone does not keep it out.
import { timingSafeEqual } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { Registry } from 'prom-client';
import { sha256Of } from '../../policies/auth/api-keys-file.ts';
import { ApiError } from '../../vocabulary/openai/api-error.ts';
import { bearerToken } from '../../policies/auth/api-key-resolver.ts';
import { hostHeaders } from './host-headers.ts';

const isLoopback = (address: string | undefined) =>
  !!address && (address.startsWith('127.') || address === '::1' || address.startsWith('::ffff:127.'));

export async function metricsRoute(app: FastifyInstance, o: { registry: Registry; token?: string }): Promise<void> {
  const expected = o.token === undefined ? undefined : sha256Of(o.token);
  app.get('/metrics', { config: { access: 'public' } }, async (req, reply) => {
    if (!app.hostPolicy.allows(hostHeaders(req.raw.rawHeaders))) {
      throw new ApiError(403, 'GET /metrics answers loopback names and the hosts in ALLOWED_HOSTS only.', { code: 'host_not_allowed' });
    }
    if (expected) {
      const presented = bearerToken(req.headers.authorization);
      if (presented === undefined || !timingSafeEqual(sha256Of(presented), expected)) {
        throw new ApiError(401, 'GET /metrics needs the METRICS_TOKEN as a bearer token.', {
          code: 'invalid_metrics_token',
          type: 'authentication_error',
        });
      }
    } else if (!isLoopback(req.socket.remoteAddress)) {
      throw new ApiError(403, 'GET /metrics answers loopback clients only; set METRICS_TOKEN to scrape it from elsewhere.', {
        code: 'metrics_loopback_only',
      });
    }
    const text = await o.registry.metrics();
    return reply.header('content-type', o.registry.contentType).header('cache-control', 'no-store').send(text);
  });
}
