// GET /openapi.json: the document is built once, at startup, and needs no key (it describes; it does not serve data).
import type { FastifyInstance } from 'fastify';
import { buildOpenApiDocument } from '../openapi/openapi-document.ts';

export async function openApiRoute(app: FastifyInstance, o: { modelId: string; version: string }): Promise<void> {
  const body = JSON.stringify(buildOpenApiDocument(o));
  app.get('/openapi.json', { config: { access: 'public' } }, async (_req, reply) =>
    reply.header('content-type', 'application/json; charset=utf-8').send(body),
  );
}
