// GET /ready: whether the gateway can answer a chat request now, per component (the model upstream, the FHIR
// server), 200 when every one is ok and 503 naming the failing ones otherwise. /health stays liveness only.
import type { FastifyInstance } from 'fastify';
import type { ReadinessReport } from '../readiness/readiness-check.ts';

export async function readyRoute(app: FastifyInstance, o: { readiness: () => Promise<ReadinessReport> }): Promise<void> {
  app.get('/ready', { config: { access: 'public' } }, async (_req, reply) => {
    const report = await o.readiness();
    return reply
      .code(report.status === 'ready' ? 200 : 503)
      .header('cache-control', 'no-store')
      .send(report);
  });
}
