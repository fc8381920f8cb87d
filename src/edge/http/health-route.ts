// GET /health: the process is up, and whether a model is configured. Public: no key needed.
import type { FastifyInstance } from 'fastify';

export async function healthRoute(app: FastifyInstance, o: { upstreamConfigured: boolean }): Promise<void> {
  app.get('/health', { config: { access: 'public' } }, async () => ({
    status: 'ok',
    upstream: o.upstreamConfigured ? 'configured' : 'not_configured',
  }));
}
